// What the host half of reduce (reduce.cpp) calls of its CUDA part (cuda/reduce.cu), through
// GEMMKIT_CUDA_PART: a build without CUDA compiles neither the part nor the calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gemmkit/reduce.hpp"

namespace gemmkit::reduce_detail {

// Adds the CUDA rungs and CUB's reference to the registry.
void register_cuda_kernels(Registry<ReduceProblem>& registry);

// The host API's CUDA path: copies x to the device, runs the device API on a stream of its
// own, copies the result back.
template <class T>
T run_host_on_device(Context& ctx, const T* x, std::size_t n, ReduceOp op, std::string_view kernel);

// reduce_bench on a device, its arguments checked: every rung, CUB and the D2D copy.
BenchReport bench_on_device(std::size_t n, DType dtype, ReduceOp op, int warmup, int reps, std::uint64_t seed);

}  // namespace gemmkit::reduce_detail

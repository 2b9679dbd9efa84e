// The seam between the host code of reduce (src/primitives/reduce.cpp) and its device side:
// src/cuda/reduce.cu in a CUDA build, src/cuda_absent/reduce_absent.cpp without nvcc.
#pragma once

#include <cstddef>
#include <string_view>

#include "gemmkit/reduce.hpp"

namespace gemmkit::reduce_detail {

// Workspace bytes and the launch of the CUDA kernel `kernel` (a name from reduce_registry())
// for a validated problem in device memory.
std::size_t cuda_workspace_bytes(std::string_view kernel, const ReduceProblem& problem,
                                 const Context& ctx);
void cuda_run(std::string_view kernel, const ReduceProblem& problem, const KernelLaunch& launch);
// The launches cuda_run makes, described (KernelEntry::launches).
std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const ReduceProblem& problem, const LaunchQueries& q);

// The host API's CUDA path: copies x to the device, runs the device API on a stream of its
// own, copies the result back.
template <class T>
T run_host_on_device(Context& ctx, const T* x, std::size_t n, ReduceOp op, std::string_view kernel);

}  // namespace gemmkit::reduce_detail

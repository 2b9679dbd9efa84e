// What the host half of conv1d (conv1d.cpp) calls of its CUDA part (cuda/conv1d.cu), through
// GEMMKIT_CUDA_PART (a build without CUDA compiles neither), and the constants both use.
#pragma once

#include <cstdint>
#include <string_view>

#include "gemmkit/conv1d.hpp"

namespace gemmkit::conv1d_detail {

// Threads per block of every rung, and the outputs one block of the streaming rung makes per
// tile (two 16-byte vectors per thread: 2048 f32 or 1024 f64 values).
inline constexpr int kThreadsPerBlock = 256;
template <class T>
inline constexpr int kStreamingTile = kThreadsPerBlock * 32 / int(sizeof(T));

// Shared memory the tiled and streaming rungs may use per block without an opt-in.
inline constexpr std::int64_t kSharedBytes = 48 * 1024;

// The CPU reference's value of output i before rounding (long double sum of the taps that
// meet [0, n)); the benchmark checks samples of the GPU output with it.
template <class T>
long double reference_at(const T* x, std::int64_t n, const T* mask, std::int64_t width,
                         std::int64_t i);

// Adds the CUDA rungs to the registry.
void register_cuda_kernels(Registry<Conv1dProblem>& registry);

// The host API's CUDA path: copies x to the device, runs the device API with `kernel` (already
// checked to accept the width), copies y back. n >= 1.
template <class T>
void run_host_on_device(Context& ctx, std::string_view kernel, const T* x, std::int64_t n,
                        const T* mask, std::int64_t width, T* y);

// conv1d_bench on a device, its arguments checked.
BenchReport bench_on_device(DType dtype, std::int64_t n, std::int64_t width, int warmup, int reps,
                            std::uint64_t seed);

}  // namespace gemmkit::conv1d_detail

// The seam between the host code of conv1d (src/primitives/conv1d.cpp) and its device side:
// src/cuda/conv1d.cu in a CUDA build, src/cuda_absent/conv1d_absent.cpp without nvcc.
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

// Workspace bytes and the launch of GPU rung `kernel` for a validated problem that the rung
// accepts (x and y in device memory, the mask on the host).
std::size_t cuda_workspace_bytes(std::string_view kernel, const Conv1dProblem& problem,
                                 const Context& ctx);
void cuda_run(std::string_view kernel, const Conv1dProblem& problem, const KernelLaunch& launch);
// The launches cuda_run makes, described (KernelEntry::launches).
std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const Conv1dProblem& problem, const LaunchQueries& q);

// The host API's CUDA path: copies x to the device, runs the device API with `kernel` (already
// checked to accept the width), copies y back. n >= 1.
template <class T>
void run_host_on_device(Context& ctx, std::string_view kernel, const T* x, std::int64_t n,
                        const T* mask, std::int64_t width, T* y);

}  // namespace gemmkit::conv1d_detail

// One-dimensional convolution with a small mask, the teaching texts' third GPU pattern.
//
//   y[i] = sum_{j=0}^{w-1} mask[j] * x[i + j - w/2],   0 <= i < n,
//
// with x taken as zero outside [0, n): the output has the input's length ("same" size), and
// w/2 is integer division, exactly the teaching texts' N_start_point = i - Mask_Width/2. An odd width
// w = 2r+1 is centred (r taps either side). An even width is defined by the same formula, so
// it reaches one tap further back than forward (w = 4: x[i-2] .. x[i+1]). Width 1 scales x.
// An empty mask is rejected (usage error).
//
// Backends: the CPU reference (sums in long double, rounded once), or the GPU ladder (see
// conv1d_registry(); docs/conv1d.md). No CUDA header is included here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/bench_report.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

// Taps the constant-memory rungs hold (the same count for f32 and f64): the mask travels in
// the launch's parameters, which CUDA 12.1+ allows 32764 bytes of on Volta and later; 4088
// f64 taps and the other arguments fit. Wider masks are refused by those rungs, and `auto`
// serves them from global memory.
inline constexpr std::int64_t kConv1dConstantMaskTaps = 4088;

// ---- the kernels -------------------------------------------------------------------------
// A convolution as kernels see it: x and y (n values of dtype, f32 or f64) in the memory of
// the backend that runs it (device memory for CUDA kernels); the mask's `width` taps always
// in host memory. The taps are small and read during the call: the constant-memory rungs
// carry them in the launch's parameters (no upload that another stream could overwrite),
// the others stage them into the call's workspace in stream order.
struct Conv1dProblem {
  DType dtype = DType::f32;
  const void* x = nullptr;
  std::int64_t n = 0;
  const void* mask = nullptr;  // host memory
  std::int64_t width = 0;
  void* y = nullptr;
};
using Conv1dKernel = Kernel<Conv1dProblem>;
// cpu_reference, then the GPU ladder in rung order: basic, constant_mask, tiled, streaming.
const Registry<Conv1dProblem>& conv1d_registry();

// Why GPU rung `kernel` cannot convolve with a mask of `width` taps in `dtype` (an unknown
// name, a mask wider than constant memory or shared memory holds), or nullopt when it can.
std::optional<std::string> conv1d_kernel_rejection(std::string_view kernel, DType dtype,
                                                   std::int64_t width);
// What `--kernel auto` runs on the GPU for 16-byte-aligned x: the fastest rung that takes
// the width.
std::string_view conv1d_auto_kernel(DType dtype, std::int64_t width);

// ---- device API --------------------------------------------------------------------------
// x and y in ctx's memory (device memory of its device; host memory for the CPU context),
// the mask in host memory (the caller may reuse it as soon as the call returns). Checks the
// kernel ("auto": the fastest that accepts the problem) and queues the convolution on
// `stream` without waiting. Scratch comes from `workspace` when given (at least
// conv1d_workspace_bytes), else from the context's pool. Returns the kernel that ran.
std::size_t conv1d_workspace_bytes(const Context& ctx, DType dtype, std::int64_t n,
                                   std::int64_t width, std::string_view kernel = "auto");
const Conv1dKernel& conv1d(Context& ctx, const Conv1dProblem& problem, Stream stream,
                           std::string_view kernel = "auto", Workspace workspace = {});
template <class T>
const Conv1dKernel& conv1d(Context& ctx, const T* x, std::int64_t n, const T* mask,
                           std::int64_t width, T* y, Stream stream,
                           std::string_view kernel = "auto", Workspace workspace = {}) {
  return conv1d(ctx, Conv1dProblem{dtype_of<T>, x, n, mask, width, y}, stream, kernel, workspace);
}

// ---- host API: x, mask and y in host memory ----------------------------------------------
struct Conv1dOptions {
  std::optional<Backend> backend;  // nullopt: the GPU when there is one, else the CPU
  std::string kernel = "auto";     // a GPU rung's name, or "auto"
  Context* context = nullptr;      // the context to run in (nullptr: one made for the call)
};

// What ran: the backend and the kernel ("cpu_reference" on the CPU).
struct Conv1dRun {
  Backend backend = Backend::cpu;
  std::string kernel;
};

// y (n values) from x (n values) and mask (width taps); T is float or double. Throws
// gemmkit::Error: usage for an empty mask, a kernel that refuses the width, or the CUDA
// backend asked for where there is none.
template <class T>
Conv1dRun conv1d(const T* x, std::int64_t n, const T* mask, std::int64_t width, T* y,
                 const Conv1dOptions& options = {});

// The CPU reference: each output summed in long double and rounded once to T.
template <class T>
void conv1d_reference(const T* x, std::int64_t n, const T* mask, std::int64_t width, T* y);

// The tolerance every backend is tested with, for output i: a sum of w products computed in
// T in any order (with or without fused multiply-adds) is within gamma_w * S of the exact
// value, gamma_w = w u / (1 - w u), u = eps/2, S = sum_j |mask[j] x[i+j-w/2]|; the reference
// is within u |y| <= u S of it. We allow (w + 1) * eps * S, about twice their sum.
template <class T>
double conv1d_error_bound(const T* x, std::int64_t n, const T* mask, std::int64_t width,
                          std::int64_t i);

// ---- benchmark: every GPU rung and the device-to-device copy, timed in one run ----------
// Random x in [-1, 1) and a random mask of mixed signs, on the device. Needs a CUDA device
// (usage error otherwise). The report: operation "conv1d", a row per rung (skipped ones say
// why), rates in GB/s of n values read + n written (bytes; halo re-reads are not counted),
// percent_of_copy against the device copy (copy); each rung's check the max of
// |y - reference| / conv1d_error_bound over a sample of outputs (both ends and random
// positions; Conv1dBenchFacts::checked), passing at 1.
BenchReport conv1d_bench(DType dtype, std::int64_t n, std::int64_t width, int warmup, int reps,
                         std::uint64_t seed);

}  // namespace gemmkit

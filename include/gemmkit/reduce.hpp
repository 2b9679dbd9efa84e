// Parallel reduction of a vector: sum, min, max and the Euclidean norm, over f32 and f64.
// A CPU reference (long double with compensation), a ladder of CUDA kernels chosen by name
// (the teaching texts' reduce0..reduce4, then warp shuffles, then 16-byte loads with a deterministic
// second pass), and CUB's DeviceReduce as the reference entry, all in reduce_registry(). The
// device API takes device pointers, a Context and a stream; the host API copies. No CUDA
// header here: device pointers are plain pointers.
//
// Semantics, identical on every backend and kernel:
//   sum    IEEE sum; NaN in, NaN out; +Inf and -Inf together give NaN. Empty: 0.
//   min    smallest value; any NaN in the input gives NaN; -Inf/+Inf are ordinary values.
//          Empty: +Inf (the identity). min(-0, +0) may return either zero.
//   max    likewise; empty: -Inf.
//   norm2  sqrt(sum of x*x). f32 input accumulates the squares in double (no overflow or
//          underflow for any finite f32; the result is rounded to f32 once). f64 input
//          accumulates in f64: |x| above ~1.3e154 overflows to +Inf. NaN in, NaN out.
// Sums of f32 accumulate in f32 (f64 in f64): see reduce_sum_error_bound for the bound.
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

enum class ReduceOp { sum, min, max, norm2 };

std::optional<ReduceOp> parse_reduce_op(std::string_view text);
std::string_view reduce_op_name(ReduceOp op);

// ---- the kernels -------------------------------------------------------------------------
// A reduction as kernels see it. x: n values of dtype (f32 or f64); result: one value of
// dtype. Both in the memory of the backend that runs it (device memory for CUDA kernels).
struct ReduceProblem {
  DType dtype = DType::f32;
  ReduceOp op = ReduceOp::sum;
  const void* x = nullptr;
  std::size_t n = 0;
  void* result = nullptr;
};
using ReduceKernel = Kernel<ReduceProblem>;
// cpu_reference, then the CUDA ladder (reduce0_fold .. vec16_two_pass) and CUB (reference).
const Registry<ReduceProblem>& reduce_registry();
// What --kernel auto picks on the GPU: our fastest rung.
inline constexpr std::string_view kReduceAutoKernel = "vec16_two_pass";

// ---- CPU reference ----
// The reduction in long double: sums with Neumaier's compensated summation (error about
// 2 ulp of long double plus n * ulp^2, far below f64's ulp), min/max exactly, norm2 as the
// square root of the compensated sum of squares. Non-finite sums fall back to the plain
// long double sum so Inf and NaN propagate as IEEE says.
template <class T>
long double reduce_reference_wide(const T* x, std::size_t n, ReduceOp op);
// The same, rounded once to T: the CPU backend's answer.
template <class T>
T reduce_cpu(const T* x, std::size_t n, ReduceOp op);

// Worst-case error of any GPU kernel's sum of n values of `dtype` (f32 or f64):
//   |computed - exact| <= gamma_h * sum |x_i|,  gamma_h = h u / (1 - h u),
// with u = 2^-24 (f32) or 2^-53 (f64) and h the longest chain of additions any value goes
// through: at most ceil(n / 16384) sequential additions per thread in the first pass
// (every rung starts at least 16384 threads when n is that large) plus at most 1024 more in
// the block trees and the later passes, and never more than n - 1:
//   h = min(n - 1, ceil(n / 16384) + 1024).
double reduce_sum_error_height(std::size_t n);
double reduce_sum_error_bound(std::size_t n, double sum_abs, DType dtype);

// ---- device API ------------------------------------------------------------------------
// x and result are in ctx's memory (device memory of its device; host memory for the CPU
// context). The call checks the kernel ("auto": the context's fastest) and queues the
// reduction on `stream` without waiting: *result is written in stream order. Any alignment
// of x. Scratch comes from `workspace` when given (at least reduce_workspace_bytes), else
// from the context's pool. Returns the kernel that ran.
std::size_t reduce_workspace_bytes(const Context& ctx, std::size_t n, DType dtype, ReduceOp op,
                                   std::string_view kernel = "auto");
const ReduceKernel& reduce(Context& ctx, const ReduceProblem& problem, Stream stream,
                           std::string_view kernel = "auto", Workspace workspace = {});
template <class T>
const ReduceKernel& reduce(Context& ctx, const T* x, std::size_t n, ReduceOp op, T* result,
                           Stream stream, std::string_view kernel = "auto",
                           Workspace workspace = {}) {
  return reduce(ctx, ReduceProblem{dtype_of<T>, op, x, n, result}, stream, kernel, workspace);
}

bool reduce_cuda_available();  // built with CUDA and a device is present

// ---- dispatch ----
struct ReduceChoice {
  Backend backend = Backend::cpu;
  std::string kernel;  // "cpu_reference" on the CPU
};
// backend nullopt = auto (the GPU when there is one); kernel "auto" or a name from
// reduce_registry(). Throws a usage error for an impossible combination.
ReduceChoice choose_reduce(std::optional<Backend> backend, std::string_view kernel);

// ---- host API: x in host memory ----
// Runs the choice (copying x to the device and the result back for CUDA, and waiting) in
// `ctx`, or in a context made for the call when ctx is null.
template <class T>
T reduce(const T* x, std::size_t n, ReduceOp op, const ReduceChoice& choice,
         Context* ctx = nullptr);

// ---- benchmark ----
// Random values in [-1, 1) generated on the device from `seed`; every kernel, variants of the
// last rung and CUB timed in the same process with CUDA events (median of `reps` after
// `warmup`), beside the device copy of the same bytes. The report: operation "reduce", a row
// per kernel with its ReduceBenchFacts (each run's bits compared with the first), rates in
// GB/s of the bytes read (bytes: n values), percent_of "cub", percent_of_copy; no check.
BenchReport reduce_bench(std::size_t n, DType dtype, ReduceOp op, int warmup, int reps, std::uint64_t seed);

}  // namespace gemmkit

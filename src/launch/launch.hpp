// Host-side helpers every launcher shares, the dispatch half of the launcher toolkit
// (explain_launch.hpp has the launch half): the problem converted for kernels, run-time
// dtypes, flags (transposes, alignments) and sizes turned into template arguments, and
// launch checking.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "runtime/ceil_div.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "ops/gemm/cuda/common/common.cuh"
#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

template <class T>
kernels::GemmArgs<T> gemm_args(const GemmProblem& p) {
  return {int(p.m),       int(p.n),
          int(p.k),       T(p.alpha),
          T(p.beta),      static_cast<const T*>(p.a),
          p.lda,          static_cast<const T*>(p.b),
          p.ldb,          static_cast<T*>(p.c),
          p.ldc};
}

// Calls f(std::bool_constant<b>{}...) for the run-time flags b...: turns them into template
// arguments, one instantiation per combination (f(auto... flags) { kernel<flags...> }).
template <class F>
decltype(auto) with_bools(F&& f) {
  return f();
}
template <class F, class... Bools>
decltype(auto) with_bools(F&& f, bool first, Bools... rest) {
  if (first)
    return with_bools([&](auto... flags) -> decltype(auto) { return f(std::true_type{}, flags...); }, rest...);
  return with_bools([&](auto... flags) -> decltype(auto) { return f(std::false_type{}, flags...); }, rest...);
}

// Calls f(std::integral_constant<int, V>{}) for the first V of the list equal to `value`, or
// for the last V when none is: a run-time choice among a kernel's compiled sizes.
template <int V, int... Vs, class F>
decltype(auto) with_int(int value, F&& f) {
  if constexpr (sizeof...(Vs) == 0) {
    return f(std::integral_constant<int, V>{});
  } else {
    if (value == V) return f(std::integral_constant<int, V>{});
    return with_int<Vs...>(value, std::forward<F>(f));
  }
}

// Whether the element type T holds a problem of this dtype: float for f32 and tf32, double,
// __nv_bfloat16, __half, std::int8_t.
template <class T>
constexpr bool holds_dtype(DType dtype) {
  if constexpr (std::is_same_v<T, float>) return dtype == DType::f32 || dtype == DType::tf32;
  else if constexpr (std::is_same_v<T, double>) return dtype == DType::f64;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return dtype == DType::bf16;
  else if constexpr (std::is_same_v<T, __half>) return dtype == DType::f16;
  else if constexpr (std::is_same_v<T, std::int8_t>) return dtype == DType::i8;
  else return false;
}

// Calls f(T{}) with the first of the element types Ts that holds `dtype`: a launcher
// instantiates its kernel for the types it takes, e.g. with_element<float, double>(...).
// The registry sends an entry only the dtypes it declares.
template <class T, class... Ts, class F>
decltype(auto) with_element(DType dtype, F&& f) {
  if (holds_dtype<T>(dtype)) return f(T{});
  if constexpr (sizeof...(Ts) > 0) return with_element<Ts...>(dtype, std::forward<F>(f));
  else fail(ErrorCategory::internal, "a CUDA kernel was called with a dtype it does not take");
}

// Calls f(std::bool_constant<TransA>{}, std::bool_constant<TransB>{}) so a launcher can
// instantiate its kernel for the problem's transposes: f(auto ta, auto tb) { kernel<ta, tb> }.
template <class F>
decltype(auto) with_transposes(const GemmProblem& p, F&& f) {
  return with_bools(std::forward<F>(f), p.trans_a, p.trans_b);
}

// Calls f(T{}, ta, tb) with the element type (float or double: f32 or f64) and the
// transposes of the problem: the instantiation of a seed or SIMT kernel.
template <class F>
void with_float_instance(const GemmProblem& p, F&& f) {
  with_element<float, double>(p.dtype, [&](auto t) { with_transposes(p, [&](auto ta, auto tb) { f(t, ta, tb); }); });
}

// Whether 16-byte accesses may read the rows of a matrix at ptr with leading dimension ld
// (elements of elem_bytes): its start and every row lie on 16 bytes.
inline bool rows_on_16_bytes(const void* ptr, std::int64_t ld, int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * elem_bytes) % 16 == 0;
}

// Precondition every CUDA ladder kernel shares: sizes fit the int indices kernels use,
// and a grid of (n_blocks, m_blocks) blocks fits the hardware's grid limits (x up to
// 2^31-1, y up to 65535).
inline std::optional<std::string> fits_grid(const GemmProblem& p, std::int64_t n_blocks,
                                            std::int64_t m_blocks) {
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return "a dimension exceeds 2^31-1, the kernel's index range";
  if (n_blocks > INT_MAX || m_blocks > 65535)
    return "the grid would need " + std::to_string(n_blocks) + " x " + std::to_string(m_blocks) +
           " blocks, beyond the CUDA grid limits";
  return std::nullopt;
}

// Calls f(ta, tb, va, vb), four std::bool_constant: the transposes, and whether 16-byte
// copies may read op(A) and op(B) (f32 elements). Those need the operand's start and rows on
// 16-byte boundaries (every matrix's, in a batch), and apply only to an operand whose
// contiguous side is m or n (A when transposed, B when not); elsewhere the flag is forced
// off so no duplicate kernel exists.
template <class F>
void with_transposes_and_vectors(const GemmProblem& p, F&& f) {
  const bool batched = p.batch > 1;
  const bool vec_a = rows_on_16_bytes(p.a, p.lda, 4) && (!batched || p.stride_a % 4 == 0);
  const bool vec_b = rows_on_16_bytes(p.b, p.ldb, 4) && (!batched || p.stride_b % 4 == 0);
  with_bools([&](auto ta, auto tb, auto va, auto vb) {
    f(ta, tb, std::bool_constant<decltype(ta)::value && decltype(va)::value>{},
      std::bool_constant<!decltype(tb)::value && decltype(vb)::value>{});
  }, p.trans_a, p.trans_b, vec_a && p.trans_a, vec_b && !p.trans_b);
}

using gemmkit::ceil_div;  // runtime/ceil_div.hpp, also as cuda::ceil_div

// After every launch: a bad configuration shows up here, with the kernel's name.
inline void check_launch(const char* kernel_name) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw Error(ErrorCategory::device, std::string("launch of ") + kernel_name + " failed: " +
                                           cudaGetErrorName(status) + " (" +
                                           cudaGetErrorString(status) + ")");
}

}  // namespace gemmkit::cuda

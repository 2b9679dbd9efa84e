// Host-side helpers every launcher shares: the problem converted for kernels, the four
// transpose combinations turned into template arguments, and launch checking.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/ceil_div.hpp"
#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/kernels/gemm/common.cuh"
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

// Calls f(std::bool_constant<TransA>{}, std::bool_constant<TransB>{}) so a launcher can
// instantiate its kernel for the problem's transposes: f(auto ta, auto tb) { kernel<ta, tb> }.
template <class F>
void with_transposes(const GemmProblem& p, F&& f) {
  using F0 = std::false_type;
  using T1 = std::true_type;
  if (!p.trans_a && !p.trans_b) f(F0{}, F0{});
  else if (p.trans_a && !p.trans_b) f(T1{}, F0{});
  else if (!p.trans_a && p.trans_b) f(F0{}, T1{});
  else f(T1{}, T1{});
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
// copies may read op(A) and op(B). Those need the operand's start and rows on 16-byte
// boundaries (every matrix's, in a batch), and apply only to an operand whose contiguous
// side is m or n (A when transposed, B when not); elsewhere the flag is forced off so no
// duplicate kernel exists.
template <class F>
void with_transposes_and_vectors(const GemmProblem& p, F&& f) {
  const auto aligned16 = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
  };
  const bool batched = p.batch > 1;
  const bool vec_a = p.lda % 4 == 0 && aligned16(p.a) && (!batched || p.stride_a % 4 == 0);
  const bool vec_b = p.ldb % 4 == 0 && aligned16(p.b) && (!batched || p.stride_b % 4 == 0);
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    using VA = std::bool_constant<TA>;   // 16-byte copies of A when vec_a allows
    using VB = std::bool_constant<!TB>;  // 16-byte copies of B when vec_b allows
    using F0 = std::false_type;
    if (vec_a && vec_b) f(ta, tb, VA{}, VB{});
    else if (vec_a) f(ta, tb, VA{}, F0{});
    else if (vec_b) f(ta, tb, F0{}, VB{});
    else f(ta, tb, F0{}, F0{});
  });
}

// Launches Kernel with SmemBytes of dynamic shared memory on the launch's stream (the opt-in
// above 48 KiB is made once per context: see cuda/context.hpp).
template <auto Kernel, int SmemBytes, class... Args>
void launch_with_smem(const KernelLaunch& launch, dim3 grid, dim3 block, const Args&... args) {
  allow_dynamic_smem<Kernel, SmemBytes>(launch.context);
  Kernel<<<grid, block, SmemBytes, launch.stream>>>(args...);
}

using gemmkit::ceil_div;  // core/ceil_div.hpp, also as cuda::ceil_div

// After every launch: a bad configuration shows up here, with the kernel's name.
inline void check_launch(const char* kernel_name) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw Error(ErrorCategory::device, std::string("launch of ") + kernel_name + " failed: " +
                                           cudaGetErrorName(status) + " (" +
                                           cudaGetErrorString(status) + ")");
}

}  // namespace gemmkit::cuda

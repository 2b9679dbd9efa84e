// Host side of the tensor-core rungs: a GemmProblem turned into the kernels' TensorArgs, and
// the dispatch from a problem's dtype to the device element type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/common/tensor_common.cuh"
#include "launch/launch.hpp"
#include "launch/tensor_map.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/launch_plan.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cuda {

// The dtype a tensor-core kernel of element type T multiplies (float: tf32).
template <class T>
const char* tensor_dtype_name() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<T, __half>) return "f16";
  else return "tf32";
}

// Bytes per element of C: the input type, or float for f32 output (tf32 problems are
// float throughout).
inline int c_bytes(const GemmProblem& p) {
  return p.dtype == DType::tf32 || p.c_dtype() == DType::f32 ? 4 : 2;
}

template <class T>
kernels::TensorArgs<T> tensor_args(const GemmProblem& p) {
  const bool c_f32 = p.c_dtype() == DType::f32 && p.dtype != DType::tf32;
  const int bytes = c_bytes(p);
  // In a strided batch (rung 19), every matrix of C must meet the same conditions.
  const bool batched = p.batch > 1;
  const bool c_pairs = p.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % (2 * bytes) == 0 &&
                       (!batched || p.stride_c % 2 == 0);
  // TMA stores clip at the matrix edge in whole 16 bytes (seen on the H200: with N = 3 they
  // wrote C's padding up to column 7), so they need rows of whole 16 bytes as well; a batch
  // needs C's stride on 16 bytes and at least one matrix (m x ldc) for its rank-3 map.
  const bool c_tma = p.beta == 0.0 && tma_compatible(p.c, p.ldc, bytes) && (p.n * bytes) % 16 == 0 &&
                     (!batched || ((p.stride_c * bytes) % 16 == 0 && p.stride_c >= p.m * p.ldc));
  return {int(p.m), int(p.n), int(p.k), float(p.alpha), float(p.beta),
          static_cast<const T*>(p.a), p.lda, static_cast<const T*>(p.b), p.ldb,
          p.c, p.ldc, c_f32, c_pairs, c_tma};
}

// Runner<T>::run(p, launch) with T the device element type of p.dtype: __nv_bfloat16, __half, or
// float for tf32.
template <template <class> class Runner>
void by_tensor_dtype(const GemmProblem& p, const KernelLaunch& launch) {
  with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto t) { Runner<decltype(t)>::run(p, launch); });
}

// The launch plans of the same: Runner<T>::plans(p), for KernelEntry::launches.
template <template <class> class Runner>
std::vector<LaunchPlan> tensor_plans(const GemmProblem& p, const LaunchQueries& q) {
  return with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto t) { return Runner<decltype(t)>::plans(p, q); });
}

}  // namespace gemmkit::cuda

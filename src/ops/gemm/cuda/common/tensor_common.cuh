// Device-side pieces the tensor-core rungs (16 and up) share: the problem as they see it
// and the epilogue that turns FP32 accumulators into C. Only __device__ code here.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace gemmkit::cuda::kernels {

// C = alpha * op(A) * op(B) + beta * C, row-major, as in GemmArgs. Inputs are T
// (__nv_bfloat16, __half, or float that the tensor cores read as tf32); products are summed
// in FP32; C holds T, or float when c_f32.
template <class T>
struct TensorArgs {
  int m, n, k;
  float alpha, beta;
  const T* __restrict__ a;
  std::int64_t lda;
  const T* __restrict__ b;
  std::int64_t ldb;
  void* __restrict__ c;
  std::int64_t ldc;
  bool c_f32;    // C is float (half inputs with f32 output); otherwise C is T
  bool c_pairs;  // C(i, 2j) and C(i, 2j + 1) may move as one access (ldc even, C aligned)
  bool c_tma;    // C may be written by TMA stores: beta == 0, C, ldc and n on 16 bytes
};

// The parameters of every kernel that takes TensorArgs alone (rungs 16 and 17), as a
// launcher of a kernel compiled on first use passes them; each kernel checks that it has them.
template <class T>
using TensorArgsParameters = void(TensorArgs<T>);

template <class T>
__device__ __forceinline__ float to_f32(T x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else return x;
}

template <class T>
__device__ __forceinline__ T from_f32(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(x);
  else return x;
}

// Two adjacent values of type Out as one access.
template <class Out>
struct alignas(2 * sizeof(Out)) Pair {
  Out x, y;
};

// alpha * acc + beta * C for C(row, col) and C(row, col + 1), each only if its column is
// inside n (the caller checks row < m). beta == 0 never reads C, so NaN already there
// cannot leak into the result.
template <class Out, class T>
__device__ __forceinline__ void store_pair_as(const TensorArgs<T>& g, int row, int col, float v0,
                                              float v1) {
  Out* c = static_cast<Out*>(g.c) + std::int64_t(row) * g.ldc + col;
  v0 *= g.alpha;
  v1 *= g.alpha;
  if (g.c_pairs && col + 1 < g.n) {
    Pair<Out>* p = reinterpret_cast<Pair<Out>*>(c);
    if (g.beta != 0.0f) {
      const Pair<Out> old = *p;
      v0 += g.beta * to_f32(old.x);
      v1 += g.beta * to_f32(old.y);
    }
    *p = Pair<Out>{from_f32<Out>(v0), from_f32<Out>(v1)};
    return;
  }
  if (col < g.n) c[0] = from_f32<Out>(g.beta != 0.0f ? v0 + g.beta * to_f32(c[0]) : v0);
  if (col + 1 < g.n) c[1] = from_f32<Out>(g.beta != 0.0f ? v1 + g.beta * to_f32(c[1]) : v1);
}

template <class T>
__device__ __forceinline__ void store_pair(const TensorArgs<T>& g, int row, int col, float v0,
                                           float v1) {
  if (g.c_f32) store_pair_as<float>(g, row, col, v0, v1);
  else store_pair_as<T>(g, row, col, v0, v1);
}

}  // namespace gemmkit::cuda::kernels

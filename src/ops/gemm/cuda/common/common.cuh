// Device-side pieces every rung shares: the problem as kernels see it, the operand
// accessors that hide transposes, and the alpha/beta epilogue. Only __device__ code here.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

// C = alpha * op(A) * op(B) + beta * C, all row-major. op(A) is (m, k), op(B) is (k, n),
// C is (m, n). A transposed operand is stored as its transpose: A^T is stored (k, m) with
// leading dimension lda. Sizes fit in int (launchers check); offsets are 64-bit because
// row * ld can pass 2^31.
template <class T>
struct GemmArgs {
  int m, n, k;
  T alpha, beta;
  const T* __restrict__ a;
  std::int64_t lda;
  const T* __restrict__ b;
  std::int64_t ldb;
  T* __restrict__ c;
  std::int64_t ldc;
};

// The parameters of every kernel that takes GemmArgs alone (rungs 7-11), as a launcher of a
// kernel compiled on first use passes them; each kernel checks that it has them.
template <class T>
using GemmArgsParameters = void(GemmArgs<T>);

// op(A)(i, p) for 0 <= i < m, 0 <= p < k.
template <bool TransA, class T>
__device__ __forceinline__ T load_a(const GemmArgs<T>& g, int i, int p) {
  return TransA ? g.a[std::int64_t(p) * g.lda + i] : g.a[std::int64_t(i) * g.lda + p];
}

// op(B)(p, j) for 0 <= p < k, 0 <= j < n.
template <bool TransB, class T>
__device__ __forceinline__ T load_b(const GemmArgs<T>& g, int p, int j) {
  return TransB ? g.b[std::int64_t(j) * g.ldb + p] : g.b[std::int64_t(p) * g.ldb + j];
}

// Writes alpha * acc + beta * C(i, j). beta == 0 never reads C, so NaN or garbage already
// there cannot leak into the result (the BLAS convention).
template <class T>
__device__ __forceinline__ void store_c(const GemmArgs<T>& g, int i, int j, T acc) {
  T* c = g.c + std::int64_t(i) * g.ldc + j;
  *c = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}

}  // namespace gemmkit::cuda::kernels

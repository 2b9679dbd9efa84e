// Rung 4: the naive kernel with `const T* __restrict__` operands and the k loop unrolled
// by 8.
//
// The thread mapping is rung 3's; two hints to the compiler change. __restrict__ on the
// kernel's pointer parameters promises that A, B and C never alias, and with const that
// lets the compiler fetch A and B through the read-only (non-coherent) data path and move
// loads freely around the store it no longer has to fear. An explicit unroll puts several
// independent load pairs in each loop trip, so more memory requests are in flight per
// thread. The pointers walk along row i of op(A) and column j of op(B) by fixed strides,
// which is also where the transposes are resolved: no per-element index multiply remains.
//
// On older GPUs and compilers this was a large step (the teaching texts report 2.6x). On an H200
// with nvcc 12/13 it is roughly even with rung 3: L1 already caches ordinary global loads,
// and nvcc unrolls rung 3's loop by itself. Unrolling by 4, the classic factor, is even
// below what nvcc picks on its own (f64 lost at 4096^3); 8 keeps pace.
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

inline constexpr int restrict_block = 16;  // (16, 16) threads per block, as rung 3

// Grid and block as rung 3: x over row blocks of C, y over column blocks, threadIdx.x =
// column. The operands come as separate restrict parameters, the form nvcc honours.
template <bool TransA, bool TransB, class T>
__global__ void restrict_kernel(int m, int n, int k, T alpha, T beta,
                                const T* __restrict__ a, std::int64_t lda,
                                const T* __restrict__ b, std::int64_t ldb,
                                T* __restrict__ c, std::int64_t ldc) {
  const int i = blockIdx.x * restrict_block + threadIdx.y;  // row of C
  const int j = blockIdx.y * restrict_block + threadIdx.x;  // column of C
  if (i >= m || j >= n) return;
  // op(A)(i, p) = a_row[p * a_step]: row i of A, or column i of the stored (k, m) A^T.
  const T* __restrict__ a_row = a + (TransA ? std::int64_t(i) : std::int64_t(i) * lda);
  const std::int64_t a_step = TransA ? lda : 1;
  // op(B)(p, j) = b_col[p * b_step]: column j of B, or row j of the stored (n, k) B^T.
  const T* __restrict__ b_col = b + (TransB ? std::int64_t(j) * ldb : std::int64_t(j));
  const std::int64_t b_step = TransB ? 1 : ldb;
  T acc = T(0);
#pragma unroll 8
  for (int p = 0; p < k; ++p) acc += a_row[p * a_step] * b_col[p * b_step];
  const GemmArgs<T> g{m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
  store_c(g, i, j, acc);
}

}  // namespace gemmkit::cuda::kernels

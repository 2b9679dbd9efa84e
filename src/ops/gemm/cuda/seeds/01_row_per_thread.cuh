// Rung 1: one thread computes one whole row of C.
//
// The first way anyone parallelises C = A * B: the m rows of C are independent, so give
// each to a thread. It is slow for two reasons this ladder goes on to remove. There are
// only m threads, far too few to fill a GPU unless m is huge. And the threads of a warp sit
// on m consecutive rows, so at each step they read A at addresses lda apart (one memory
// transaction per thread) and write C at addresses ldc apart; only the B element, the same
// for every thread, is a cheap broadcast.
//
// The seeds track (gemm/seeds/, rungs 1-6) holds the teaching texts' kernels, for f32 and
// f64, in namespace gemmkit::cuda::kernels. Operands (gemm/common.cuh, GemmArgs):
// C = alpha * op(A) * op(B) + beta * C, every matrix row-major with its leading dimension
// (lda, ldb, ldc); op(A) is (m, k), op(B) is (k, n), and the template flag TransA (TransB)
// says the operand is stored as its transpose, A^T as (k, m) (B^T as (n, k)). load_a and
// load_b hide the transposes; store_c applies alpha and beta. Grids: rungs 1 and 2 are
// one-dimensional (a thread per row, a thread per column of C); rungs 3-6 are 2-D with
// blockIdx.x over the row blocks of C and blockIdx.y over its column blocks (so a tall C may
// have 2^31 - 1 row blocks), threadIdx.x along a row of C and threadIdx.y down a column.
// The SIMT track (gemm/simt/) turns the grid round: blockIdx.x runs over columns there.
#pragma once

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

// 1D grid of 1D blocks over the rows: thread i owns row i of C, (1, n).
template <bool TransA, bool TransB, class T>
__global__ void row_per_thread_kernel(GemmArgs<T> g) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // row of C and of op(A)
  if (i >= g.m) return;
  for (int j = 0; j < g.n; ++j) {
    T acc = T(0);
    for (int p = 0; p < g.k; ++p)  // row i of op(A) . column j of op(B)
      acc += load_a<TransA>(g, i, p) * load_b<TransB>(g, p, j);
    store_c(g, i, j, acc);
  }
}

}  // namespace gemmkit::cuda::kernels

// Rung 2: one thread computes one whole column of C.
//
// The same amount of parallelism as rung 1 (n threads instead of m), but the access
// pattern is turned around: the threads of a warp now sit on n consecutive columns, so
// their reads of a row of B and their writes to a row of C fall on consecutive addresses
// and coalesce into a few transactions, while the A element is the same for every thread
// (a broadcast). For row-major B and C this is the better of the two one-dimensional
// decompositions, and the reason every later rung maps threadIdx.x to the column of C.
#pragma once

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

// 1D grid of 1D blocks over the columns: thread j owns column j of C, (m, 1).
template <bool TransA, bool TransB, class T>
__global__ void column_per_thread_kernel(GemmArgs<T> g) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;  // column of C and of op(B)
  if (j >= g.n) return;
  for (int i = 0; i < g.m; ++i) {
    T acc = T(0);
    for (int p = 0; p < g.k; ++p)  // row i of op(A) . column j of op(B)
      acc += load_a<TransA>(g, i, p) * load_b<TransB>(g, p, j);
    store_c(g, i, j, acc);
  }
}

}  // namespace gemmkit::cuda::kernels

// Rung 3: one thread per element of C, in 16 x 16 blocks (the textbook kernel).
//
// Rungs 1 and 2 made each thread do a whole row or column; here every one of the m * n
// dot products gets its own thread, so even a 1024 x 1024 product has a million threads
// to hide memory latency with. threadIdx.x runs along the columns of C, so a warp reads
// consecutive elements of a row of B and writes consecutive elements of C (coalesced),
// and all its threads of one row share each A element. Every operand is still fetched
// from global memory (or cache) once per multiply-add: 2 loads per FMA is what limits it.
#pragma once

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

inline constexpr int naive_block = 16;  // (16, 16) threads per block

// Grid: x over row blocks of C (so a tall C is limited by 2^31-1 blocks, not 65535),
// y over column blocks. Block: (naive_block, naive_block) threads, x = column.
template <bool TransA, bool TransB, class T>
__global__ void naive_kernel(GemmArgs<T> g) {
  const int i = blockIdx.x * naive_block + threadIdx.y;  // row of C
  const int j = blockIdx.y * naive_block + threadIdx.x;  // column of C
  if (i >= g.m || j >= g.n) return;
  T acc = T(0);
  for (int p = 0; p < g.k; ++p)  // row i of op(A) . column j of op(B)
    acc += load_a<TransA>(g, i, p) * load_b<TransB>(g, p, j);
  store_c(g, i, j, acc);
}

}  // namespace gemmkit::cuda::kernels

// Rung 9: 2-D register blocking. Rung 8 still issues more than one shared-memory load per
// FMA (9 loads for 8 FMAs), and shared memory, not arithmetic, is what limits it. Here each
// of 256 threads computes a TM x TN = 8 x 8 sub-tile of a (128, 128) block tile. At every
// step p of the K tile a thread loads a column of 8 op(A) values and a row of 8 op(B)
// values into registers and forms their outer product: 64 FMAs from 16 shared loads, 4
// FMAs per load instead of 0.9. The larger block tile also halves the global traffic per
// FMA again (every element of op(A) or op(B) copied into shared memory now feeds 128
// outputs instead of 64).
//
// The cost is registers: 64 accumulators plus 16 fragment values per thread, which is why
// the block has only 256 threads.
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/simt/08_blocktile_1d.cuh"
#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels::simt {

template <bool TransA, bool TransB, class T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN)) blocktile_2d_kernel(GemmArgs<T> g) {
  static_assert(std::is_same_v<decltype(blocktile_2d_kernel<TransA, TransB, T, BM, BN, BK, TM, TN>), GemmArgsParameters<T>>);
  constexpr int NT = (BM / TM) * (BN / TN);
  constexpr int threads_per_row = BN / TN;  // threads side by side along a row of the tile
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tiles must cover the block tile");
  __shared__ T As[BM * BK];  // (BM, BK) tile of op(A), row-major: As[i * BK + p]
  __shared__ T Bs[BK * BN];  // (BK, BN) tile of op(B), row-major: Bs[p * BN + j]

  const int m0 = int(blockIdx.y) * BM;  // this block's (BM, BN) tile of C starts at (m0, n0)
  const int n0 = int(blockIdx.x) * BN;
  // Thread (ty, tx) owns the (TM, TN) sub-tile at rows ty * TM, columns tx * TN.
  const int tx = int(threadIdx.x) % threads_per_row;
  const int ty = int(threadIdx.x) / threads_per_row;

  TileLoader<T, BM, BK, NT, !TransA, 1, BK> a_tiles(g.a, g.lda, g.m, m0, g.k);
  TileLoader<T, BN, BK, NT, TransB, BN, 1> b_tiles(g.b, g.ldb, g.n, n0, g.k);

  T acc[TM][TN] = {};
  T a_frag[TM];  // op(A)(ty * TM + r, p) for r < TM
  T b_frag[TN];  // op(B)(p, tx * TN + c) for c < TN
  for (int k_left = g.k; k_left > 0; k_left -= BK) {
    a_tiles.load(As);
    b_tiles.load(Bs);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
#pragma unroll
      for (int r = 0; r < TM; ++r) a_frag[r] = As[(ty * TM + r) * BK + p];
#pragma unroll
      for (int c = 0; c < TN; ++c) b_frag[c] = Bs[p * BN + tx * TN + c];
      // Outer product of the two fragments: all operands are already in registers.
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] += a_frag[r] * b_frag[c];
    }
    __syncthreads();  // everyone is done with this tile before it is overwritten
    a_tiles.advance();
    b_tiles.advance();
  }

  const int rows_left = g.m - m0 - ty * TM;  // rows of this thread's sub-tile inside C
  const int cols_left = g.n - n0 - tx * TN;
#pragma unroll
  for (int r = 0; r < TM; ++r) {
#pragma unroll
    for (int c = 0; c < TN; ++c) {
      if (r < rows_left && c < cols_left)
        store_c(g, m0 + ty * TM + r, n0 + tx * TN + c, acc[r][c]);
    }
  }
}

}  // namespace gemmkit::cuda::kernels::simt

// Rung 6: rung 5 at TILE = 32, explicitly unrolled, with padded tiles for transposed operands.
//
// Three small changes to the 32 x 32 tiled kernel:
// - The 32-step product loop over a tile pair is fully unrolled (`#pragma unroll`): every
//   shared-memory address becomes a constant offset, and with the A tile 16-byte aligned
//   nvcc reads four consecutive a_tile[ty][kk] (one broadcast per warp) with one 16-byte
//   shared load, so a step takes 8 + 32 shared loads for 32 FMAs instead of 32 + 32.
// - The loop over k tiles, whose trip count is known only at run time, is unrolled by 16,
//   the teaching texts' trick of unrolling the outer loop (a small gain over no unrolling and over
//   unrolling by 4 on an H200 at 4096^3, f32).
// - The tile rows are padded. When an operand is stored transposed, rung 5 lets its
//   threads store into the tile down a column, 32 elements apart, so all 32 stores of a
//   warp hit one bank and serialise. Padding each row of the op(B) tile by one element
//   puts a column in 32 different banks (for 8-byte T, distinct bank pairs in each
//   half-warp). The op(A) tile is padded by 16 bytes instead, which keeps its rows aligned
//   for the 16-byte loads above and still spreads a column over 8 banks (a 4-way conflict
//   for f32, 2-way for f64, once per tile step instead of once per FMA). The
//   non-transposed layouts store along rows and are unaffected.
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/seeds/05_tiled.cuh"

namespace gemmkit::cuda::kernels {

inline constexpr int unrolled_tile = 32;

// Grid: x over row blocks of C, y over column blocks. Block: (32, 32) threads,
// threadIdx.x = column of C within the tile, threadIdx.y = row.
template <bool TransA, bool TransB, class T>
__global__ void tiled_unrolled_kernel(GemmArgs<T> g) {
  constexpr int TILE = unrolled_tile;
  constexpr int a_pad = 16 / int(sizeof(T));  // 16 bytes: rows stay 16-byte aligned
  // (TILE, TILE) tile of op(A), [row of C][k], rows padded by 16 bytes.
  __shared__ alignas(16) T a_tile[TILE][TILE + a_pad];
  // (TILE, TILE) tile of op(B), [k][column of C], rows padded by one element.
  __shared__ T b_tile[TILE][TILE + 1];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.x * TILE;  // first row of this block's C tile
  const int col0 = blockIdx.y * TILE;  // first column of this block's C tile

  T acc = T(0);
#pragma unroll 16
  for (int k0 = 0; k0 < g.k; k0 += TILE) {
    load_tile_pair<TILE, TransA, TransB>(g, a_tile, b_tile, row0, col0, k0, tx, ty);
    __syncthreads();  // both tiles complete before anyone reads them

#pragma unroll
    for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();  // everyone done reading before the next step overwrites the tiles
  }

  const int i = row0 + ty, j = col0 + tx;
  if (i < g.m && j < g.n) store_c(g, i, j, acc);
}

}  // namespace gemmkit::cuda::kernels

// Rung 7: coalesced one-thread-per-element. Still one thread per element of C and no reuse
// beyond the caches, but the mapping from threads to elements is now spelled out: a 1-D
// block of 32 * 32 threads covers a 32 x 32 tile of C, and consecutive threads take
// consecutive COLUMNS of C. A warp (32 consecutive threads) therefore owns 32 neighbouring
// elements of one row of C, so at every step of the dot product
//   - its 32 reads of op(B)(p, j..j+31) are one contiguous 128-byte run (one transaction
//     instead of 32 when B is stored untransposed),
//   - its 32 reads of op(A)(i, p) are the same address, served by one broadcast,
//   - its 32 writes of C at the end are one contiguous run.
// The mapping that loses all of this puts threadIdx.x on the ROW: a warp then reads 32
// different rows of A and writes 32 different rows of C, one 32-byte sector per thread for
// 4 useful bytes, and only B gets the broadcast; the memory system moves ~8x the bytes the
// kernel uses. The teaching texts' 2-D naive kernel already happens to coalesce
// (its threadIdx.x runs along columns of C), so this rung does not make the teaching texts' kernel faster
// by itself; it makes the mapping explicit, with a 1-D block whose index arithmetic every
// later block-tiled rung builds on.
//
// The SIMT track (gemm/simt/, rungs 7-15 and 23) is the ladder on CUDA cores: f32 and f64
// up to rung 9, f32 from rung 10 on. Operands as in the seeds track (gemm/common.cuh:
// GemmArgs, op(A) (m, k) and op(B) (k, n) row-major, TransA / TransB for an operand stored
// as its transpose). What differs from the seeds track, and within this one:
//   - blocks are one-dimensional; each rung splits threadIdx.x into rows and columns;
//   - the grid: blockIdx.x runs over the column blocks of C and blockIdx.y over its row
//     blocks (rungs 7-11; the seeds' rungs 3-6 have it the other way round); rungs 12-14
//     take a one-dimensional grid of tiles in grouped order (grouped_tile, rung 12) with
//     the matrices of a batch on blockIdx.z; rung 15 numbers its blocks in the order they
//     start (an atomic counter), not by blockIdx; rung 23's reduction has its own grid;
//   - namespaces: rungs 7-11 are in gemmkit::cuda::kernels::simt, rungs 12-15 and 23 in
//     gemmkit::cuda::kernels like the other tracks, for no reason but history;
//   - tile loaders: rungs 8-11 share TileLoader (rung 8; rung 10 adds 16-byte chunks),
//     rungs 12-15 TileCopy (rung 12; rung 13 issues its copies as cp.async).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels::simt {

inline constexpr int coalesced_tile = 32;  // the block covers (32, 32) elements of C

template <bool TransA, bool TransB, class T>
__global__ void __launch_bounds__(coalesced_tile * coalesced_tile)
    coalesced_kernel(GemmArgs<T> g) {
  static_assert(std::is_same_v<decltype(coalesced_kernel<TransA, TransB, T>), GemmArgsParameters<T>>);
  constexpr int tile = coalesced_tile;
  // threadIdx.x = r * 32 + c: c (fast) walks the columns of C, r the rows.
  const int r = int(threadIdx.x) / tile;
  const int c = int(threadIdx.x) % tile;
  const int i0 = int(blockIdx.y) * tile;  // first row of this block's (32, 32) tile of C
  const int j0 = int(blockIdx.x) * tile;  // first column
  // Compare local offsets with what is left, so i0 + r never has to be formed past m.
  if (r >= g.m - i0 || c >= g.n - j0) return;
  const int i = i0 + r;
  const int j = j0 + c;

  // Per-thread walkers over row i of op(A) and column j of op(B), with 64-bit offsets
  // computed once. A row of op(A) is contiguous unless A is stored transposed (then it
  // strides by lda); a column of op(B) strides by ldb unless B is stored transposed.
  const T* a = g.a + (TransA ? std::int64_t(i) : std::int64_t(i) * g.lda);
  const T* b = g.b + (TransB ? std::int64_t(j) * g.ldb : std::int64_t(j));
  const std::int64_t a_step = TransA ? g.lda : 1;
  const std::int64_t b_step = TransB ? 1 : g.ldb;

  T acc = T(0);
  for (int p = 0; p < g.k; ++p) {
    acc += *a * *b;  // op(A)(i, p) * op(B)(p, j)
    a += a_step;
    b += b_step;
  }
  store_c(g, i, j, acc);
}

}  // namespace gemmkit::cuda::kernels::simt

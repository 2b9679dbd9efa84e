// Rung 5: shared-memory tiling, one (TILE, TILE) block of threads per (TILE, TILE) tile
// of C, TILE in {8, 16, 32}.
//
// Rungs 3-4 fetch every operand from memory once per FMA, and each element of A is
// fetched by all n threads of its row of C (each of B by all m of its column). Here the
// block walks the k dimension in steps of TILE: its threads first copy one (TILE, TILE)
// tile of op(A) and one of op(B) into shared memory, one element each, then every thread
// takes TILE multiply-adds from shared memory. Each global element is now read by
// m/TILE (or n/TILE) blocks instead of m (or n) threads, a TILE-fold cut in global
// traffic, and the FMA loop reads only shared memory, far closer than L1/L2.
//
// Edges: loads outside op(A) or op(B) store a zero in the tile, so a partial tile (at the
// m or n edge, or a last k step shorter than TILE) adds nothing, and only threads inside C
// store. When an operand is stored transposed, the threads swap roles for its load so
// that threadIdx.x still runs along the contiguous storage dimension (coalesced), at the
// price of a strided, bank-conflicting store into the tile (rung 6 removes that).
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

// Step k0 of a tiled kernel: thread (tx, ty) copies one element of the (TILE, TILE) tile
// of op(A) (a_tile[row of C][k]) and one of op(B) (b_tile[k][column of C]) into shared
// memory, zero outside the matrices. Consecutive tx read consecutive addresses in every
// layout; for a transposed operand that means writing the tile down a column. Rung 6
// reuses this with padded tiles.
template <int TILE, bool TransA, bool TransB, class T, class TileA, class TileB>
__device__ __forceinline__ void load_tile_pair(const GemmArgs<T>& g, TileA& a_tile,
                                               TileB& b_tile, int row0, int col0, int k0,
                                               int tx, int ty) {
  if constexpr (!TransA) {
    // A is (m, k): tx runs along k, the contiguous dimension.
    const int i = row0 + ty, p = k0 + tx;
    a_tile[ty][tx] = (i < g.m && p < g.k) ? g.a[std::int64_t(i) * g.lda + p] : T(0);
  } else {
    // A^T is stored (k, m): tx runs along m, the contiguous dimension.
    const int i = row0 + tx, p = k0 + ty;
    a_tile[tx][ty] = (i < g.m && p < g.k) ? g.a[std::int64_t(p) * g.lda + i] : T(0);
  }
  if constexpr (!TransB) {
    // B is (k, n): tx runs along n, the contiguous dimension.
    const int p = k0 + ty, j = col0 + tx;
    b_tile[ty][tx] = (p < g.k && j < g.n) ? g.b[std::int64_t(p) * g.ldb + j] : T(0);
  } else {
    // B^T is stored (n, k): tx runs along k, the contiguous dimension.
    const int p = k0 + tx, j = col0 + ty;
    b_tile[tx][ty] = (p < g.k && j < g.n) ? g.b[std::int64_t(j) * g.ldb + p] : T(0);
  }
}

// Grid: x over row blocks of C, y over column blocks. Block: (TILE, TILE) threads,
// threadIdx.x = column of C within the tile, threadIdx.y = row.
template <int TILE, bool TransA, bool TransB, class T>
__global__ void tiled_kernel(GemmArgs<T> g) {
  static_assert(TILE == 8 || TILE == 16 || TILE == 32,
                "tiled_kernel: TILE must be 8, 16 or 32 (TILE * TILE threads per block)");
  __shared__ T a_tile[TILE][TILE];  // (TILE, TILE) tile of op(A): [row of C][k]
  __shared__ T b_tile[TILE][TILE];  // (TILE, TILE) tile of op(B): [k][column of C]

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.x * TILE;  // first row of this block's C tile
  const int col0 = blockIdx.y * TILE;  // first column of this block's C tile

  T acc = T(0);
  for (int k0 = 0; k0 < g.k; k0 += TILE) {
    load_tile_pair<TILE, TransA, TransB>(g, a_tile, b_tile, row0, col0, k0, tx, ty);
    __syncthreads();  // both tiles complete before anyone reads them

    for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();  // everyone done reading before the next step overwrites the tiles
  }

  const int i = row0 + ty, j = col0 + tx;
  if (i < g.m && j < g.n) store_c(g, i, j, acc);
}

}  // namespace gemmkit::cuda::kernels

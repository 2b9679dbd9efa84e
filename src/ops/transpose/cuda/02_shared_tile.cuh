// Rung 2: a 32x32 tile of A staged in shared memory, so that both sides are coalesced. The
// block reads the tile row by row (a warp per 32 consecutive elements of a row of A), waits,
// and writes it to B row by row, reading the tile down a column: tile[tx][r]. Those 32 reads
// of a warp are 32 elements apart, which for 4-byte elements is the same bank 32 times over:
// the shared-memory reads serialise 32 ways (rung 3 pads the tile).
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

inline constexpr int kTransposeTile = 32;  // a tile is 32 x 32 elements
inline constexpr int kTransposeRows = 8;   // block (32, 8): each thread moves 4 elements of a tile

// Tiles (blockIdx.x, blockIdx.y + t * gridDim.y): tile (x, y) covers rows 32y.. and columns
// 32x.. of A; the grid's y side is capped at 65535, so blocks step down the rows of tiles.
// kPad extra elements per tile row move each column of the tile to another bank.
template <class T, int kPad>
__device__ void transpose_tiles(const T* a, std::int64_t lda, T* b, std::int64_t ldb, std::int64_t rows,
                                std::int64_t cols) {
  __shared__ T tile[kTransposeTile][kTransposeTile + kPad];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const std::int64_t col0 = std::int64_t(blockIdx.x) * kTransposeTile;  // the tile's first column of A
  for (std::int64_t row0 = std::int64_t(blockIdx.y) * kTransposeTile; row0 < rows;
       row0 += std::int64_t(gridDim.y) * kTransposeTile) {  // the tile's first row of A
    // tile[r][tx] = A(row0 + r, col0 + tx): rows ty, ty + 8, ty + 16, ty + 24 of the tile.
    for (int r = ty; r < kTransposeTile; r += kTransposeRows) {
      const std::int64_t i = row0 + r, j = col0 + tx;
      if (i < rows && j < cols) tile[r][tx] = a[i * lda + j];
    }
    __syncthreads();
    // B(col0 + r, row0 + tx) = tile[tx][r]: row r of B's tile is column r of A's.
    for (int r = ty; r < kTransposeTile; r += kTransposeRows) {
      const std::int64_t j = col0 + r, i = row0 + tx;
      if (j < cols && i < rows) b[j * ldb + i] = tile[tx][r];
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

template <class T>
__global__ void transpose_shared_tile_kernel(const T* a, std::int64_t lda, T* b, std::int64_t ldb, std::int64_t rows,
                                             std::int64_t cols) {
  transpose_tiles<T, 0>(a, lda, b, ldb, rows, cols);
}

}  // namespace gemmkit::cuda::kernels

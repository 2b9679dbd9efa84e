// Rung 3: rung 2's tile with one extra element per row, tile[32][33]. Column r of the tile
// then starts one bank later in each row, so the 32 reads tile[tx][r] of a warp fall in 32
// different banks (for 8-byte elements, two per bank pair, which the hardware serves in two
// halves without conflict): the copy runs at the speed of its global traffic.
#pragma once

#include "ops/transpose/cuda/02_shared_tile.cuh"

namespace gemmkit::cuda::kernels {

template <class T>
__global__ void transpose_padded_tile_kernel(const T* a, std::int64_t lda, T* b, std::int64_t ldb, std::int64_t rows,
                                             std::int64_t cols) {
  transpose_tiles<T, 1>(a, lda, b, ldb, rows, cols);
}

}  // namespace gemmkit::cuda::kernels

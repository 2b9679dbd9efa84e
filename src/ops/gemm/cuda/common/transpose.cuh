// out = in^T: the pre-pass that gives tf32 and int8 wgmma (which read K-major operands
// only) a K-major copy of an MN-major operand. A 32 x 32 tile goes through shared
// memory so that both the reads and the writes are coalesced; the +1 column keeps the
// transposed reads free of bank conflicts.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

// in: (rows, cols) with leading dimension ld_in; out: (cols, rows) with ld_out.
// Block (32, 8): tile (blockIdx.y, blockIdx.x), each thread 4 rows of it.
template <class T>
__global__ void transpose(const T* __restrict__ in, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld_in, T* __restrict__ out, std::int64_t ld_out) {
  __shared__ T tile[32][33];
  const std::int64_t col0 = std::int64_t(blockIdx.x) * 32;
  for (std::int64_t row0 = std::int64_t(blockIdx.y) * 32; row0 < rows;
       row0 += std::int64_t(gridDim.y) * 32) {  // grid.y is capped at 65535 tiles
    for (int r = threadIdx.y; r < 32; r += 8) {
      const std::int64_t i = row0 + r, j = col0 + threadIdx.x;
      if (i < rows && j < cols) tile[r][threadIdx.x] = in[i * ld_in + j];
    }
    __syncthreads();
    // Row (col0 + c) of out holds column (col0 + c) of in.
    for (int c = threadIdx.y; c < 32; c += 8) {
      const std::int64_t i = col0 + c, j = row0 + threadIdx.x;
      if (i < cols && j < rows) out[i * ld_out + j] = tile[threadIdx.x][c];
    }
    __syncthreads();
  }
}

}  // namespace gemmkit::cuda::kernels

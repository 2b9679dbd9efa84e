// Rung 1: one thread per element, B(j, i) = A(i, j). A warp takes 32 consecutive columns of a
// row of A, so its reads are coalesced; its writes land in 32 different rows of B, ldb
// elements apart, one memory transaction each. The lesson of the ladder is that store.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

// Block (32, 8): x over the columns of A, y over its rows. The grid's y side is capped at the
// hardware's 65535 blocks, so the blocks step down the rows by gridDim.y * 8.
template <class T>
__global__ void transpose_naive_kernel(const T* a, std::int64_t lda, T* b, std::int64_t ldb, std::int64_t rows,
                                       std::int64_t cols) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;  // column of A, row of B
  if (j >= cols) return;
  for (std::int64_t i = std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y; i < rows;
       i += std::int64_t(gridDim.y) * blockDim.y)  // row of A, column of B
    b[j * ldb + i] = a[i * lda + j];
}

}  // namespace gemmkit::cuda::kernels

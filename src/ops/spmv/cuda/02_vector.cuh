// Rung 2: a warp per row (the "vector" CSR kernel). The 32 lanes read 32 consecutive
// nonzeros of one row, so loads of values and columns are coalesced, x is read through the
// read-only (non-coherent) cache, and the lanes' partial sums meet in a shuffle reduction.
// Wasteful for rows much shorter than 32 (idle lanes) and still one warp per long row.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::spmv {

template <class T, class Offset>
__global__ void vector_kernel(std::int64_t rows, const Offset* __restrict__ row_offsets,
                              const std::int32_t* __restrict__ cols, const T* __restrict__ values,
                              const T* __restrict__ x, T* __restrict__ y) {
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // the whole warp shares `row`, so it leaves together
  const Offset begin = row_offsets[row], end = row_offsets[row + 1];
  T sum = 0;
  for (Offset j = begin + lane; j < end; j += 32) sum += values[j] * __ldg(x + cols[j]);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) y[row] = sum;
}

}  // namespace gemmkit::cuda::spmv

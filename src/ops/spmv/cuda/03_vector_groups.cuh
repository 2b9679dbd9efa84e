// Rung 3: groups of G = 2, 4, 8, 16 or 32 lanes per row, G chosen by the launcher from the
// mean row length (about four nonzeros per lane), so short rows no longer leave most of a
// warp idle: a warp covers 32 / G consecutive rows whose nonzeros are contiguous, and its
// loads stay coalesced. Each lane keeps two independent partial sums (two nonzeros in
// flight per step) so more loads are outstanding; the reduction is a shuffle within the
// group. Still row-split: a single very long row serialises on one group.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::spmv {

template <class T, class Offset, int G>
__global__ void vector_groups_kernel(std::int64_t rows, const Offset* __restrict__ row_offsets,
                                     const std::int32_t* __restrict__ cols,
                                     const T* __restrict__ values, const T* __restrict__ x,
                                     T* __restrict__ y) {
  static_assert(G >= 2 && G <= 32 && (G & (G - 1)) == 0, "group size must be a power of two in [2, 32]");
  const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const int lane = threadIdx.x % G;  // lane within the group
  // Rows past the end still join the shuffles below (with zero sums): the shuffle mask
  // names the whole warp.
  T sum0 = 0, sum1 = 0;
  if (row < rows) {
    const Offset begin = row_offsets[row], end = row_offsets[row + 1];
    Offset j = begin + lane;
    for (; j + G < end; j += 2 * G) {  // two nonzeros per lane per step: j and j + G
      sum0 += values[j] * __ldg(x + cols[j]);
      sum1 += values[j + G] * __ldg(x + cols[j + G]);
    }
    if (j < end) sum0 += values[j] * __ldg(x + cols[j]);
  }
  T sum = sum0 + sum1;
  for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset, G);
  if (lane == 0 && row < rows) y[row] = sum;
}

}  // namespace gemmkit::cuda::spmv

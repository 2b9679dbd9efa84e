// Rung 1: the teaching texts' CSR kernel, one thread per row (generalised to any row count, 32- or
// 64-bit row offsets, f32 or f64). Simple, and fast only when rows are short and even:
// neighbouring threads walk different rows, so a warp's loads of values and columns land
// on up to 32 different cache lines per step, and one long row keeps its warp busy alone.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::spmv {

template <class T, class Offset>
__global__ void scalar_kernel(std::int64_t rows, const Offset* __restrict__ row_offsets,
                              const std::int32_t* __restrict__ cols, const T* __restrict__ values,
                              const T* __restrict__ x, T* __restrict__ y) {
  const std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  T dot = 0;
  for (Offset j = row_offsets[row]; j < row_offsets[row + 1]; ++j) dot += values[j] * x[cols[j]];
  y[row] = dot;
}

}  // namespace gemmkit::cuda::spmv

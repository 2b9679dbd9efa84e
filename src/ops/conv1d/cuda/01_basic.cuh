// Rung 1, the teaching texts' basic kernel: one thread per output, the mask read from global memory
// on every tap. Changed from the seed only where it was wrong for general sizes: threads
// past the end return (the seed's grid had exactly `Width` threads), and indices are 64-bit.
#pragma once

#include <cstdint>

namespace gemmkit::cuda::kernels {

template <class T>
__global__ void conv1d_basic_kernel(const T* x, const T* mask, T* y, std::int64_t n, int width) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t start = i - width / 2;  // x index under mask[0]
  T sum = 0;
  for (int j = 0; j < width; ++j) {
    const std::int64_t at = start + j;
    if (at >= 0 && at < n) sum += x[at] * mask[j];  // outside [0, n) x is zero: skip the tap
  }
  y[i] = sum;
}

}  // namespace gemmkit::cuda::kernels

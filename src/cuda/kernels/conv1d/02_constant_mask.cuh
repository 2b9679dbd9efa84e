// Rung 2, the seeds' second kernel: the mask moves to constant memory. Every thread of a warp
// reads the same tap at the same time, which the constant cache serves as one broadcast,
// instead of each tap costing a global load. The buffer is fixed at compile time, so masks
// wider than kConv1dConstantMaskTaps are refused by the launcher.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gemmkit/conv1d.hpp"

namespace gemmkit::cuda::kernels {

// 16 KiB + 32 KiB of the 64 KiB constant bank; filled with cudaMemcpyToSymbol before a launch.
__constant__ float conv1d_mask_f32[kConv1dConstantMaskTaps];
__constant__ double conv1d_mask_f64[kConv1dConstantMaskTaps];

// Names the symbol directly, so the load is a constant-bank load, not a generic one.
template <class T>
__device__ __forceinline__ T constant_tap(int j) {
  if constexpr (std::is_same_v<T, float>) return conv1d_mask_f32[j];
  else return conv1d_mask_f64[j];
}

template <class T>
__global__ void conv1d_constant_mask_kernel(const T* x, T* y, std::int64_t n, int width) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t start = i - width / 2;  // x index under tap 0
  T sum = 0;
  for (int j = 0; j < width; ++j) {
    const std::int64_t at = start + j;
    if (at >= 0 && at < n) sum += x[at] * constant_tap<T>(j);
  }
  y[i] = sum;
}

}  // namespace gemmkit::cuda::kernels

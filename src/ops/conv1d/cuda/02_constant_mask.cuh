// Rung 2, the teaching texts' second kernel: the mask moves to constant memory. Every thread of a warp
// reads the same tap at the same time, which the constant cache serves as one broadcast,
// instead of each tap costing a global load.
//
// The teaching texts put the mask in a __constant__ array filled by cudaMemcpyToSymbol. That array is
// one per process and device: two streams convolving with different masks at once would race
// on it. Here the taps travel in the launch's own parameters instead, which the hardware also
// keeps in the constant bank (__grid_constant__ lets the kernel index them in place, without
// a copy to local memory): each launch carries its mask, so concurrent launches cannot
// disturb each other, and nothing needs uploading first. The parameter space (32764 bytes
// from CUDA 12.1 on Volta and later) caps the width at kConv1dConstantMaskTaps.
#pragma once

#include <cstdint>

#include "gemmkit/conv1d.hpp"

namespace gemmkit::cuda::kernels {

// The taps as a kernel parameter. kTaps is the capacity, fixed at compile time: the launcher
// picks the smallest instance that holds the mask, since every launch copies all of it.
template <class T, int kTaps>
struct Conv1dMaskParams {
  T taps[kTaps];
};
inline constexpr int conv1d_mask_capacities[] = {64, 512, int(kConv1dConstantMaskTaps)};
static_assert(sizeof(Conv1dMaskParams<double, kConv1dConstantMaskTaps>) + 32 <= 32764,
              "the mask and the other parameters must fit the 32764 bytes of a launch");

template <class T, int kTaps>
__global__ void conv1d_constant_mask_kernel(const T* x, T* y, std::int64_t n, int width,
                                            const __grid_constant__ Conv1dMaskParams<T, kTaps> mask) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::int64_t start = i - width / 2;  // x index under tap 0
  T sum = 0;
  for (int j = 0; j < width; ++j) {
    const std::int64_t at = start + j;
    if (at >= 0 && at < n) sum += x[at] * mask.taps[j];
  }
  y[i] = sum;
}

}  // namespace gemmkit::cuda::kernels

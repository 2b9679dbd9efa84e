// Rung 3, tiled with halo cells: rung 2 loads each input w times from global memory (once per
// output that needs it). Here a block first copies the inputs its outputs need, its own
// blockDim.x plus w-1 halo cells, into shared memory once, with zeros ("ghost cells") where
// the window runs past either end, so the tap loop reads shared memory and needs no bounds
// checks. The mask stays in constant memory (rung 2: the launch's parameters).
#pragma once

#include <cstdint>

#include "ops/conv1d/cuda/02_constant_mask.cuh"

namespace gemmkit::cuda::kernels {

// Dynamic shared memory: (blockDim.x + width - 1) values of T.
template <class T, int kTaps>
__global__ void conv1d_tiled_kernel(const T* x, T* y, std::int64_t n, int width,
                                    const __grid_constant__ Conv1dMaskParams<T, kTaps> mask) {
  extern __shared__ __align__(16) unsigned char conv1d_tiled_smem[];
  T* tile = reinterpret_cast<T*>(conv1d_tiled_smem);
  const std::int64_t block_start = std::int64_t(blockIdx.x) * blockDim.x;
  const std::int64_t first = block_start - width / 2;  // tile[k] = x[first + k]
  const int span = blockDim.x + width - 1;             // left halo, the block's own, right halo
  for (int k = threadIdx.x; k < span; k += blockDim.x) {
    const std::int64_t at = first + k;
    tile[k] = at >= 0 && at < n ? x[at] : T(0);
  }
  __syncthreads();
  const std::int64_t i = block_start + threadIdx.x;
  if (i >= n) return;
  T sum = 0;
  for (int j = 0; j < width; ++j) sum += tile[threadIdx.x + j] * mask.taps[j];
  y[i] = sum;
}

}  // namespace gemmkit::cuda::kernels

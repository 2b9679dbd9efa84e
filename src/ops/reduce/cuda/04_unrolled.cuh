// Rung 4 (the teaching texts' reduce4): the tree unrolled at compile time for a block size fixed by
// a template parameter, and the last five steps done by the first warp alone with
// __syncwarp instead of __syncthreads (the other warps are done by then). It removes loop
// overhead and block-wide barriers from the tree; the grid-stride loop, which dominates
// for large n, is unchanged, so the gain is small.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

template <class Op, bool kRaw, int kThreads>
__global__ void __launch_bounds__(kThreads)
    unrolled_partials(const typename Reader<Op, kRaw>::In* src, typename Op::Acc* out, std::size_t n) {
  static_assert(kThreads >= 64 && kThreads <= 1024 && (kThreads & (kThreads - 1)) == 0,
                "unrolled_partials: kThreads must be a power of two in [64, 1024]");
  using Acc = typename Op::Acc;
  __shared__ Acc partial[kThreads];
  const int id = threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * kThreads;
  Acc acc = Op::identity();
  for (std::size_t k = std::size_t(blockIdx.x) * kThreads + id; k < n; k += stride)
    acc = Op::combine(acc, Reader<Op, kRaw>::read(src[k]));
  partial[id] = acc;
  __syncthreads();
  // Block-wide steps down to 64 values, each followed by a barrier.
  if constexpr (kThreads >= 1024) { if (id < 512) partial[id] = Op::combine(partial[id], partial[id + 512]); __syncthreads(); }
  if constexpr (kThreads >= 512) { if (id < 256) partial[id] = Op::combine(partial[id], partial[id + 256]); __syncthreads(); }
  if constexpr (kThreads >= 256) { if (id < 128) partial[id] = Op::combine(partial[id], partial[id + 128]); __syncthreads(); }
  if constexpr (kThreads >= 128) { if (id < 64) partial[id] = Op::combine(partial[id], partial[id + 64]); __syncthreads(); }
  // The first warp alone from here: 64 values to 1.
  if (id < 32) {
    partial[id] = Op::combine(partial[id], partial[id + 32]);
    __syncwarp();
#pragma unroll
    for (int half = 16; half > 0; half /= 2) {
      if (id < half) partial[id] = Op::combine(partial[id], partial[id + half]);
      __syncwarp();
    }
    if (id == 0) out[blockIdx.x] = partial[0];
  }
}

}  // namespace gemmkit::cuda::reduce_kernels

// Rung 5: warp shuffles instead of the shared-memory tree. Lanes of a warp exchange
// registers directly (__shfl_down_sync), so a block needs one shared slot per warp and a
// single barrier, instead of a barrier per tree level. The grid is a few blocks per SM
// (a whole number of waves) and the second launch is one 1024-thread block.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

template <class Op, bool kRaw>
__global__ void warp_shuffle_partials(const typename Reader<Op, kRaw>::In* src,
                                      typename Op::Acc* out, std::size_t n) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  auto acc = Op::identity();
  for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride)
    acc = Op::combine(acc, Reader<Op, kRaw>::read(src[k]));
  acc = block_combine<Op>(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

}  // namespace gemmkit::cuda::reduce_kernels

// Rung 1 (the teaching texts' reduce1): thread-linear addressing. Each thread of a fixed grid walks
// the array with the grid's stride, keeping its partial result in a register, and writes
// it once: one read per value instead of rung 0's two reads and a write per fold, and any
// length works. The partial results are reduced by the same kernel twice more (one block,
// then one thread), as the teaching texts do; those launches barely use the GPU.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

// out[t] = combination of src[t], src[t + stride], ... for each thread t of the grid.
template <class Op, bool kRaw>
__global__ void grid_stride_partials(const typename Reader<Op, kRaw>::In* src,
                                     typename Op::Acc* out, std::size_t n) {
  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  auto acc = Op::identity();
  for (std::size_t k = t; k < n; k += stride) acc = Op::combine(acc, Reader<Op, kRaw>::read(src[k]));
  out[t] = acc;
}

}  // namespace gemmkit::cuda::reduce_kernels

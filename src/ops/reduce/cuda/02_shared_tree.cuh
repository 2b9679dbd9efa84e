// Rung 2 (the teaching texts' reduce2): the threads of a block cooperate through shared memory.
// After the grid-stride accumulation of rung 1, each block combines its threads' partial
// results in a power-of-two tree in shared memory (half the threads add the other half's
// values, then a quarter, ...) and writes one value per block. Two launches: the grid,
// then one block over the block results. blockDim.x must be a power of two.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

// out[blockIdx.x] = combination of everything the block's threads saw.
template <class Op, bool kRaw>
__global__ void shared_tree_partials(const typename Reader<Op, kRaw>::In* src,
                                     typename Op::Acc* out, std::size_t n) {
  extern __shared__ unsigned char shared_bytes[];
  auto* partial = reinterpret_cast<typename Op::Acc*>(shared_bytes);  // (blockDim.x) values
  const int id = threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  auto acc = Op::identity();
  for (std::size_t k = std::size_t(blockIdx.x) * blockDim.x + id; k < n; k += stride)
    acc = Op::combine(acc, Reader<Op, kRaw>::read(src[k]));
  partial[id] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (id < half) partial[id] = Op::combine(partial[id], partial[id + half]);
    __syncthreads();
  }
  if (id == 0) out[blockIdx.x] = partial[0];
}

}  // namespace gemmkit::cuda::reduce_kernels

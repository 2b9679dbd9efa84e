// Rung 3 (the teaching texts' reduce3): block sizes and block counts that are not powers of two.
// The tree starts at the power of two at or above blockDim.x and skips partners beyond
// the block, so the grid can be a whole number of blocks per SM (here 4 per SM) and the
// second launch can be one block with exactly that many threads (528 on a 132-SM H200),
// which keeps every SM equally busy.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

template <class Op, bool kRaw>
__global__ void any_block_partials(const typename Reader<Op, kRaw>::In* src,
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
  const int pow2 = blockDim.x <= 1 ? 1 : 1 << (32 - __clz(int(blockDim.x) - 1));  // >= blockDim.x
  for (int half = pow2 / 2; half > 0; half /= 2) {
    if (id < half && id + half < int(blockDim.x)) partial[id] = Op::combine(partial[id], partial[id + half]);
    __syncthreads();
  }
  if (id == 0) out[blockIdx.x] = partial[0];
}

}  // namespace gemmkit::cuda::reduce_kernels

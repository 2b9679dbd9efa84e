// Rung 0 (the teaching texts' reduce0): fold the top half of the array onto the bottom half,
// x[i] = x[i] + x[i + half], one launch per halving, until one value is left. Every launch
// reads two values and writes one per thread, and the whole array is touched log2(n)
// times, so it is slow; the partial sums are balanced pairwise, so it is accurate.
// Generalised to any length: half = ceil(len / 2), and the middle value of an odd length
// has no partner. The first launch reads the input and writes a scratch array (the input is
// left alone); later launches fold the scratch array in place, which is safe because a
// thread writes x[i] and reads x[i + half], and no thread writes above half.
#pragma once

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

// One fold: dst[i] = src[i] (+) src[i + half] for i < half, with len = the live length.
template <class Op, bool kRaw>
__global__ void fold_halves(const typename Reader<Op, kRaw>::In* src, typename Op::Acc* dst,
                            std::size_t len, std::size_t half) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= half) return;
  auto v = Reader<Op, kRaw>::read(src[i]);
  if (i + half < len) v = Op::combine(v, Reader<Op, kRaw>::read(src[i + half]));
  dst[i] = v;
}

}  // namespace gemmkit::cuda::reduce_kernels

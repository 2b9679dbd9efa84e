// Rung 6: at the memory-bandwidth limit. Three changes from rung 5:
//  - 16-byte loads (float4 / double2): a quarter (half) of the load instructions, and each
//    warp asks for 512 contiguous bytes at once.
//  - kUnroll independent loads issued by each thread before any of them is combined, so
//    every thread keeps kUnroll * 16 bytes in flight; with the grid below that is enough
//    outstanding traffic to cover HBM latency on every SM.
//  - The grid is exactly the blocks that fit on the device at once (SM count x resident
//    blocks per SM), so there is one wave and no tail of half-empty SMs.
// The second pass is deterministic: the per-block partial results go to a buffer in block
// order, and one 1024-thread block combines them (rung 5's kernel) in a fixed order, so the
// same input on the same device gives the same bits on every run. No atomics anywhere.
// Any alignment and length: the values before the first 16-byte boundary (head) and after
// the last whole vector (tail), fewer than one vector each, are read one by one.
#pragma once

#include <cstdint>

#include "common.cuh"

namespace gemmkit::cuda::reduce_kernels {

template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kLanes = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kLanes = 2;
};

// kStreaming: ld.global.cs (evict-first: every byte is read once); else ld.global.nc.
template <bool kStreaming, class V>
__device__ __forceinline__ V load_vector(const V* p) {
  if constexpr (kStreaming) return __ldcs(p);
  else return __ldg(p);
}

// The lanes of one vector combined pairwise: ((x (+) y) (+) (z (+) w)).
template <class Op>
__device__ __forceinline__ typename Op::Acc combine_lanes(float4 v) {
  return Op::combine(Op::combine(Op::load(v.x), Op::load(v.y)), Op::combine(Op::load(v.z), Op::load(v.w)));
}
template <class Op>
__device__ __forceinline__ typename Op::Acc combine_lanes(double2 v) {
  return Op::combine(Op::load(v.x), Op::load(v.y));
}

template <class Op, int kUnroll, bool kStreaming>
__global__ void __launch_bounds__(256)
    vec16_partials(const typename Op::Value* __restrict__ x, std::size_t n, typename Op::Acc* __restrict__ out) {
  using T = typename Op::Value;
  using V = typename Vec16<T>::type;
  constexpr int kLanes = Vec16<T>::kLanes;
  // x = [head | `vectors` whole 16-byte vectors | tail]
  const auto address = reinterpret_cast<std::uintptr_t>(x);
  std::size_t head = ((16 - address % 16) % 16) / sizeof(T);
  if (head > n) head = n;
  const std::size_t vectors = (n - head) / kLanes;
  const V* body = reinterpret_cast<const V*>(x + head);
  const std::size_t tail_begin = head + vectors * kLanes;

  const std::size_t t = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t threads = std::size_t(gridDim.x) * blockDim.x;
  auto acc = Op::identity();
  std::size_t v = t;
  // Thread t reads vectors v, v + threads, ..., v + (kUnroll-1) * threads per step: each
  // of the kUnroll loads is coalesced across the warp, and all are in flight together.
  for (; v + (kUnroll - 1) * threads < vectors; v += kUnroll * threads) {
    V loaded[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) loaded[u] = load_vector<kStreaming>(body + v + u * threads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc = Op::combine(acc, combine_lanes<Op>(loaded[u]));
  }
  for (; v < vectors; v += threads) acc = Op::combine(acc, combine_lanes<Op>(load_vector<kStreaming>(body + v)));
  if (t < head) acc = Op::combine(acc, Op::load(x[t]));
  if (tail_begin + t < n) acc = Op::combine(acc, Op::load(x[tail_begin + t]));

  acc = block_combine<Op>(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

}  // namespace gemmkit::cuda::reduce_kernels

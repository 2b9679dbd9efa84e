// Rung 15, stream-K. Rung 14 launches one block per output tile, so when the tile count is
// not a multiple of the blocks the GPU holds at once, the last wave runs partly empty (at
// 4096^3 on an H200: 3.88 waves). Here the full waves still run
// one block per tile, but the partial last wave is dealt out by K iterations to a full
// wave of blocks, so all SMs finish together; blocks that share a tile add up their partial
// sums through a workspace. The schedule and its invariants are in
// src/ops/gemm/cuda/common/stream_k_schedule.hpp; the multiplying itself is rung 13's pipeline, unchanged.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/common/flag.cuh"
#include "ops/gemm/cuda/simt/13_cp_async.cuh"
#include "ops/gemm/cuda/common/stream_k_schedule.hpp"

namespace gemmkit::cuda::kernels {

// Device memory the blocks of one launch share; flags and next_block are zero at launch.
struct StreamKWorkspace {
  float* partials;  // (sk_blocks, kThreads * TM * TN): one partial tile per block
  unsigned* flags;  // (sk_blocks): 1 once block c's partial tile is in `partials` (flag.cuh)
  int* next_block;  // the counter that numbers blocks in the order they start
};

// Block c's slot, as float4s laid out (TM * TN / 4, kThreads): thread t's q-th float4 at
// q * kThreads + t, so every store and load of the block is coalesced.
template <class Cfg>
__device__ __forceinline__ float4* partial_slot(const StreamKWorkspace& w, int c) {
  return reinterpret_cast<float4*>(w.partials) + std::int64_t(c) * Cfg::kThreads * (Cfg::TM * Cfg::TN / 4);
}

// Writes this block's partial tile and raises its flag. Every thread's stores are fenced
// before the barrier, and the flag's release orders them before any reader's acquire.
template <class Cfg>
__device__ void publish_partial(const StreamKWorkspace& w, int c,
                                const float (&acc)[Cfg::TM][Cfg::TN]) {
  float4* slot = partial_slot<Cfg>(w, c);
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::TN / 4; ++j)
      __stcg(slot + (i * (Cfg::TN / 4) + j) * Cfg::kThreads + threadIdx.x,
             make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) flag_raise(&w.flags[c], 1);
}

// Waits for block c's partial tile and adds it to acc. Loads bypass L1 (.cg): L1 is not
// coherent with other SMs' writes.
template <class Cfg>
__device__ void add_partial(const StreamKWorkspace& w, int c, float (&acc)[Cfg::TM][Cfg::TN]) {
  if (threadIdx.x == 0) flag_wait(&w.flags[c], 1, 256);
  __syncthreads();
  const float4* slot = partial_slot<Cfg>(w, c);
#pragma unroll
  for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::TN / 4; ++j) {
      const float4 v = __ldcg(slot + (i * (Cfg::TN / 4) + j) * Cfg::kThreads + threadIdx.x);
      acc[i][4 * j] += v.x, acc[i][4 * j + 1] += v.y;
      acc[i][4 * j + 2] += v.z, acc[i][4 * j + 3] += v.w;
    }
}

// Where `tile` lies in C (grouped order, as in rungs 13-14).
template <class Cfg>
__device__ __forceinline__ TilePosition tile_position(const GemmArgs<float>& g, int tile) {
  const int m_tiles = (g.m + Cfg::BM - 1) / Cfg::BM, n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  return grouped_tile(tile, m_tiles, n_tiles, Cfg::BM, Cfg::BN);
}

// alpha * acc + beta * C for this lane's outputs of `tile`. Positions are recomputed here
// rather than kept from before the main loop: every register held across it is one the
// accumulators could not have.
template <class Cfg>
__device__ __forceinline__ void store_tile(const GemmArgs<float>& g, int tile,
                                           const float (&acc)[Cfg::TM][Cfg::TN]) {
  const TilePosition at = tile_position<Cfg>(g, tile);
  int row, col;
  lane_origin<Cfg>(row, col);
  warp_tile_epilogue<Cfg>(g, at.m0 + row, at.n0 + col, acc);
}

// The kernel's parameters, as the launcher passes them (it is compiled on first use, so the
// host never sees its instantiation; the kernel checks that they agree).
using StreamKParameters = void(GemmArgs<float>, StreamKSchedule, StreamKWorkspace);

template <class Cfg, bool TransA, bool TransB, bool VecA, bool VecB>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    stream_k_kernel(GemmArgs<float> g, StreamKSchedule s, StreamKWorkspace w) {
  static_assert(std::is_same_v<decltype(stream_k_kernel<Cfg, TransA, TransB, VecA, VecB>), StreamKParameters>);
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  __shared__ int block_number;
  if (threadIdx.x == 0) block_number = atomicAdd(w.next_block, 1);
  __syncthreads();

  // K tiles [kt_begin, kt_end) of `tile` into acc; the barrier after the main loop frees
  // shared memory for the next call.
  auto multiply = [&](int tile, int kt_begin, int kt_end, float (&acc)[Cfg::TM][Cfg::TN]) {
    const TilePosition at = tile_position<Cfg>(g, tile);
    multiply_k_tiles<Cfg, TransA, TransB, VecA, VecB>(g, at.m0, at.n0, kt_begin,
                                                      kt_end - kt_begin, smem, acc);
    __syncthreads();
  };

  // The full waves: one whole tile per block, as in rung 14.
  if (block_number < s.dp_tiles) {
    const int tile = block_number;
    float acc[Cfg::TM][Cfg::TN] = {};
    multiply(tile, 0, s.k_tiles, acc);
    store_tile<Cfg>(g, tile, acc);
    return;
  }
  // The partial wave, by K iterations: this block's range from its last tile back to its
  // first.
  const int c = block_number - s.dp_tiles;
  s.for_each_segment(c, [&](const StreamKSegment part) {
    float acc[Cfg::TM][Cfg::TN] = {};
    multiply(part.tile, part.kt_begin, part.kt_end, acc);
    if (part.kt_end < s.k_tiles) {  // the tile ends in a later block
      publish_partial<Cfg>(w, c, acc);
      return;
    }
    // This block owns the tile: add what earlier blocks summed of its K range, in block
    // order (a fixed order, so results do not change from run to run).
    const int first = s.first_sk_block(part.tile);
    for (int p = c - 1; p >= first; --p) add_partial<Cfg>(w, p, acc);
    store_tile<Cfg>(g, part.tile, acc);
  });
}

}  // namespace gemmkit::cuda::kernels

// Rung 13, multi-stage cp.async pipeline. Rung 12 moves every element global -> register
// -> shared memory and keeps one K tile in flight, so the loads occupy registers and issue
// slots of the threads that should be multiplying, and a slow load still stalls the next
// tile. cp.async (sm_80+) copies global memory straight into shared memory without
// registers; with STAGES buffers, STAGES-1 K tiles are in flight while one is multiplied,
// which hides the latency of HBM behind arithmetic. Out-of-range elements are copied with
// a source size of 0, which fills zeros, so edge tiles need no separate path. The loader
// is rung 12's TileCopy (its addresses, passes and bounds); what changes is that
// copy_tile_async issues its copies as cp.async instead of fetch() and store().
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/simt/12_warptile.cuh"

namespace gemmkit::cuda::kernels {

// 16-byte copy of a chunk wholly inside the operand (cut chunks go element by element).
// .cg skips L1, which the streamed tiles would only pollute.
__device__ __forceinline__ void cp_async16(std::uint32_t smem_addr, const void* src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(src));
#else
  __trap();
#endif
}

// 4-byte copy (one element, or a zero when bytes == 0). Only .ca takes 4 bytes.
__device__ __forceinline__ void cp_async4(std::uint32_t smem_addr, const void* src, int bytes) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr), "l"(src),
               "r"(bytes));
#else
  __trap();
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `Pending` committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

// Issues the copies of this thread's share of the current K tile into `tile` (a shared
// (BK, R + 4) buffer). Most copies are of whole tiles inside the operand; those skip the
// bounds arithmetic, which otherwise costs about a tenth of the loop's instructions.
template <class Copy>
__device__ __forceinline__ void copy_tile_async(const Copy& copy, float* tile) {
  const auto tile_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  if (copy.all_inside()) {
#pragma unroll
    for (int pr = 0; pr < Copy::kPassesR; ++pr)
#pragma unroll
      for (int pk = 0; pk < Copy::kPassesK; ++pk) {
        const std::uint32_t dst = tile_addr + 4u * copy.smem_offset(pr, pk);
        if constexpr (Copy::V == 4)
          cp_async16(dst, copy.at(pr, pk));
        else
          cp_async4(dst, copy.at(pr, pk), 4);
      }
    return;
  }
#pragma unroll
  for (int pr = 0; pr < Copy::kPassesR; ++pr)
#pragma unroll
    for (int pk = 0; pk < Copy::kPassesK; ++pk) {
      const std::uint32_t dst = tile_addr + 4u * copy.smem_offset(pr, pk);
      const int n = copy.valid(pr, pk);
      const float* src = copy.at(pr, pk);
      if constexpr (Copy::V == 4) {
        if (n == 4) {
          cp_async16(dst, src);
          continue;
        }
      }
      // A chunk cut by the edge goes element by element: a 16-byte copy with a shorter
      // source size would still name bytes past the end of the operand.
#pragma unroll
      for (int e = 0; e < Copy::V; ++e)
        cp_async4(dst + 4u * e, e < n ? src + e : copy.origin, e < n ? 4 : 0);
    }
}

// The lane's (TM, TN) share of tile (m0, n0) of C, summed over k_tiles K tiles from K tile
// kt_first: acc += op(A)(m0.., k) op(B)(k, n0..). Shared memory must be free on entry (no
// warp still reading it); on return every copy has landed but warps may still be reading
// the last stage, so a caller that reuses shared memory syncs first. Rung 13 calls this
// for a whole tile; rung 15 for parts of a tile's K range.
template <class Cfg, bool TransA, bool TransB, bool VecA, bool VecB>
__device__ __forceinline__ void multiply_k_tiles(const GemmArgs<float>& g, int m0, int n0,
                                                 int kt_first, int k_tiles, float* smem,
                                                 float (&acc)[Cfg::TM][Cfg::TN]) {
  using CopyA = TileCopy<Cfg::BM, Cfg::BK, Cfg::kThreads, !TransA, VecA>;
  using CopyB = TileCopy<Cfg::BN, Cfg::BK, Cfg::kThreads, TransB, VecB>;
  constexpr int S = Cfg::STAGES;
  CopyA copy_a(g.a, g.lda, m0, g.m, g.k);
  CopyB copy_b(g.b, g.ldb, n0, g.n, g.k);
  if (kt_first != 0) {
    copy_a.advance(kt_first);
    copy_b.advance(kt_first);
  }

  int a_col, b_col;
  lane_origin<Cfg>(a_col, b_col);

  // Stage s holds A as (BK, BM + 4) followed by B as (BK, BN + 4).
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageFloats; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageFloats + Cfg::BK * Cfg::kLdA; };

  // Prologue: tiles 0 .. S-2 in flight, one commit group each (empty groups past the end
  // keep the group count, and so the wait below, uniform).
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < k_tiles) {
      copy_tile_async(copy_a, stage_a(s));
      copy_tile_async(copy_b, stage_b(s));
      copy_a.advance();
      copy_b.advance();
    }
    cp_async_commit();
  }

  int read_stage = 0, write_stage = S - 1;  // kt % S and (kt + S - 1) % S
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Groups committed so far: S-1+kt. Leaving S-2 in flight means tile kt has landed
    // (for this thread); the barrier makes every thread's copies visible, and also says
    // every warp is done with the buffer multiplied in the previous iteration.
    cp_async_wait<S - 2>();
    __syncthreads();
    const int next = kt + S - 1;  // refill the buffer freed by tile kt-1
    if (next < k_tiles) {
      copy_tile_async(copy_a, stage_a(write_stage));
      copy_tile_async(copy_b, stage_b(write_stage));
      copy_a.advance();
      copy_b.advance();
    }
    cp_async_commit();
    warp_tile_multiply<Cfg>(stage_a(read_stage), stage_b(read_stage), a_col, b_col, acc);
    read_stage = read_stage == S - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == S - 1 ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits
}

// One tile of C per block (blockIdx.x) of matrix blockIdx.z of the batch, and of every
// gridDim.z-th matrix after it.
template <class Cfg, bool TransA, bool TransB, bool VecA, bool VecB>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    cp_async_kernel(GemmArgs<float> g_batch, BatchStrides batch) {
  static_assert(std::is_same_v<decltype(cp_async_kernel<Cfg, TransA, TransB, VecA, VecB>), WarpTileParameters>);
  extern __shared__ float4 smem4[];
  const int m_tiles = (g_batch.m + Cfg::BM - 1) / Cfg::BM;
  const int n_tiles = (g_batch.n + Cfg::BN - 1) / Cfg::BN;
  const TilePosition tile = grouped_tile(blockIdx.x, m_tiles, n_tiles, Cfg::BM, Cfg::BN);
  int row, col;
  lane_origin<Cfg>(row, col);
  for (std::int64_t z = blockIdx.z; z < batch.count; z += gridDim.z) {
    // Warps may still be reading the previous matrix's last stage.
    if (z != int(blockIdx.z)) __syncthreads();
    const GemmArgs<float> g = item_args(g_batch, batch, z);
    float acc[Cfg::TM][Cfg::TN] = {};
    multiply_k_tiles<Cfg, TransA, TransB, VecA, VecB>(g, tile.m0, tile.n0, 0,
                                                      (g.k + Cfg::BK - 1) / Cfg::BK,
                                                      reinterpret_cast<float*>(smem4), acc);
    warp_tile_epilogue<Cfg>(g, tile.m0 + row, tile.n0 + col, acc);
  }
}

}  // namespace gemmkit::cuda::kernels

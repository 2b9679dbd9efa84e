// Rung 18, Hopper wgmma fed by TMA. The mma.sync rung moves every operand through
// registers: threads copy tiles, threads load fragments, and a warp multiplies 16 x 8 x 16
// at a time. On Hopper two engines take that work off the threads:
//   - TMA (the bulk tensor copy engine) copies a whole (rows, 64) tile from global to
//     shared memory on one thread's request, swizzled so the tensor cores read it without
//     bank conflicts, and counts the bytes on an mbarrier that the readers wait on;
//   - wgmma lets a warpgroup (four warps) multiply 64 x 256 x 16 in one asynchronous
//     instruction whose operands come straight from shared memory, described by a
//     64-bit descriptor; the accumulators stay in registers.
// Two warpgroups share a 128 x 256 tile; thread 0 keeps four stages of copies in flight.
// Still simple: everyone waits for each stage's multiplies before the stage is refilled,
// and one block runs one tile. Rung 19 removes both.
//
// The Hopper track (gemm/hopper/, rungs 18, 19, 21, 22 and 24) runs on sm_90a only, in
// namespace gemmkit::cuda::kernels, with the PTX wrappers (wgmma, TMA, mbarriers) in
// gemmkit::cuda::kernels::hopper (hopper.cuh). Operands: TensorArgs<T> as in the tensor
// track (rung 24 takes int8: its file), but the kernels never index A or B: TMA reads them
// through tensor maps the launcher builds. So the template flags name the contiguous
// dimension rather than the transpose: MnMajorA means A is stored (k, m) (TransA),
// MnMajorB means B is stored (k, n) (not TransB); tf32 takes K-major operands only. Grid:
// rung 18 runs one block per (BM, BN) tile in row-major order, as the tensor track does;
// rungs 19, 21 and 24 are persistent, clusters of ClusterM blocks (the cluster is
// blockIdx.x / ClusterM) walking the tiles in the order rung 19 describes; rung 22 copies
// operands with a grid of its own, then runs one of those.
#pragma once

#include "ops/gemm/cuda/hopper/hopper.cuh"
#include "ops/gemm/cuda/common/tensor_common.cuh"

namespace gemmkit::cuda::kernels {

template <class T>
struct WgmmaTmaConfig {
  static constexpr int BM = 128, BN = 256;
  static constexpr int BK = 128 / sizeof(T);      // one 128-byte swizzle row of K
  static constexpr int kInstrK = 32 / sizeof(T);  // K of one wgmma: 16 (16-bit), 8 (tf32)
  static constexpr int kStages = 4;
  static constexpr int kThreads = 256;            // two warpgroups of 64 x 256 outputs
  static constexpr int kABytes = BM * 128, kBBytes = BN * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kBoxBytes = 64 * 128;      // an MN-major box: 64 of M or N by BK rows
  static constexpr int kSmemBytes = kStages * kStageBytes + kStages * 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "stage buffers exceed the shared memory of an SM");
};

// The kernel's parameters, as the launcher passes them (see WgmmaWsParameters).
template <class T>
using WgmmaTmaParameters = void(CUtensorMap, CUtensorMap, TensorArgs<T>);

template <class T, bool MnMajorA, bool MnMajorB>
__global__ void __launch_bounds__(WgmmaTmaConfig<T>::kThreads, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, const TensorArgs<T> g) {
  static_assert(std::is_same_v<decltype(wgmma_tma_kernel<T, MnMajorA, MnMajorB>), WgmmaTmaParameters<T>>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Cfg = WgmmaTmaConfig<T>;
  using namespace hopper;

  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024);
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageBytes; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageBytes + Cfg::kABytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + Cfg::kStages * Cfg::kStageBytes);

  const int n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  const int m0 = (blockIdx.x / n_tiles) * Cfg::BM, n0 = (blockIdx.x % n_tiles) * Cfg::BN;
  const int k_tiles = (g.k + Cfg::BK - 1) / Cfg::BK;

  // Thread 0 asks for k tile kt in stage kt % kStages.
  auto load = [&](int kt) {
    const int s = kt % Cfg::kStages, k0 = kt * Cfg::BK;
    barrier_arrive_expect_bytes(&full[s], Cfg::kStageBytes);
    if constexpr (MnMajorA) {
      tma_load_2d(stage_a(s), &map_a, &full[s], m0, k0);
      tma_load_2d(stage_a(s) + Cfg::kBoxBytes, &map_a, &full[s], m0 + 64, k0);
    } else {
      tma_load_2d(stage_a(s), &map_a, &full[s], k0, m0);
    }
    if constexpr (MnMajorB) {
      for (int box = 0; box < 4; ++box)
        tma_load_2d(stage_b(s) + box * Cfg::kBoxBytes, &map_b, &full[s], n0 + 64 * box, k0);
    } else {
      tma_load_2d(stage_b(s), &map_b, &full[s], k0, n0);
    }
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) barrier_init(&full[s], 1);
    fence_barrier_init();
    for (int kt = 0; kt < min(k_tiles, Cfg::kStages); ++kt) load(kt);
  }
  __syncthreads();

  const int c = threadIdx.x / 128;  // this warpgroup's rows: [64c, 64c + 64) of the tile
  constexpr int kStepA = MnMajorA ? Cfg::kInstrK * 128 : 32;  // bytes per wgmma K step
  constexpr int kStepB = MnMajorB ? Cfg::kInstrK * 128 : 32;
  constexpr std::uint32_t kLeadA = MnMajorA ? Cfg::kBoxBytes : 16;
  constexpr std::uint32_t kLeadB = MnMajorB ? Cfg::kBoxBytes : 16;

  float acc[128];
#pragma unroll
  for (int r = 0; r < 128; ++r) acc[r] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % Cfg::kStages;
    barrier_wait(&full[s], (kt / Cfg::kStages) & 1);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / Cfg::kInstrK; ++kk) {
      const std::uint64_t da = smem_descriptor(stage_a(s) + c * 64 * 128 + kk * kStepA, kLeadA, 1024);
      const std::uint64_t db = smem_descriptor(stage_b(s) + kk * kStepB, kLeadB, 1024);
      wgmma_64x256<T, MnMajorA, MnMajorB>(acc, da, db);
    }
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();  // both warpgroups are done with stage s: refill it
    if (threadIdx.x == 0 && kt + Cfg::kStages < k_tiles) load(kt + Cfg::kStages);
  }

  store_wgmma_tile(g, acc, m0 + c * 64, n0);
#else
  __trap();  // built only for sm_90a; the launcher never picks it elsewhere
#endif
}

}  // namespace gemmkit::cuda::kernels

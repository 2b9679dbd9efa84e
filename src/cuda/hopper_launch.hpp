// Internal: host pieces the warp-specialised Hopper launchers share (rungs 19 and 21 in
// ladder_hopper.cu, rung 24 in ladder_i8.cu): rank-3 tensor maps of strided batches,
// cluster launches, residency, and the plan that shares tiles out over the persistent grid.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/context.hpp"
#include "cuda/hopper_tune_table.hpp"
#include "cuda/kernels/gemm/hopper/19_wgmma_ws.cuh"
#include "cuda/launch.hpp"
#include "cuda/tensor_map.hpp"

namespace gemmkit::cuda {

// Rung 19's tensor maps are of rank 3, over a strided batch of `batch` matrices at `stride`
// elements (rows x cols, leading dimension ld). One matrix, or an operand that serves the
// whole batch (stride 0), is a batch of one (its stride then unused but a valid pitch).
inline CUtensorMap batch_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                      std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                      std::int64_t stride, int box_rows, int box_cols) {
  if (batch == 1 || stride == 0) batch = 1, stride = rows * ld;
  return make_batched_tile_map(base, type, elem_bytes, rows, cols, ld, batch, stride, box_rows,
                               box_cols);
}

// A launch of `blocks` blocks in clusters of cluster_m along x. The attribute lives in the
// returned object, which config.attrs points into.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterLaunch(int blocks, int threads, int smem_bytes, int cluster_m) {
    config.gridDim = dim3(unsigned(blocks));
    config.blockDim = dim3(unsigned(threads));
    config.dynamicSmemBytes = std::size_t(smem_bytes);
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(cluster_m);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

template <class Kernel, class... Args>
void launch_clustered(Kernel kernel, cudaStream_t stream, int blocks, int threads, int smem_bytes,
                      int cluster_m, const Args&... args) {
  ClusterLaunch launch(blocks, threads, smem_bytes, cluster_m);
  launch.config.stream = stream;
  GEMMKIT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args...));
}

// Clusters of Kernel the device runs at once (one per SM pair for rung 19). Asked once per
// kernel: the query costs host time inside every timed call otherwise.
template <auto Kernel, int Threads, int SmemBytes, int ClusterM>
int resident_clusters(const Context& ctx) {
  return ctx.cached(&fact_key<ResidentBlocks, Kernel>, [&] {
    allow_dynamic_smem<Kernel, SmemBytes>(ctx);
    const ClusterLaunch launch(ClusterM * 256, Threads, SmemBytes, ClusterM);
    int clusters = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, Kernel, &launch.config));
    if (clusters < 1)
      fail(ErrorCategory::device, "wgmma_ws_kernel does not fit on this device's multiprocessors");
    return clusters;
  });
}

// Stream-K for the last round of tiles when it would leave many clusters idle: between a
// quarter and two thirds of them busy in it, and at least two K-blocks per cluster.
// Otherwise every tile goes whole (sk_tiles = 0). Measured on the H200 in bf16
// (docs/notes/ladder-log.md): stream-K gained at 8192^3 (last round 34 of 66 clusters)
// and lost at 4096^3 (58 of 66): so nearly full a round costs little when left idle (the
// busy SMs run the faster) while the partial sums cost more.
//
// Per (cluster, block, consumer) the plan needs 64 x BN floats of partial sums and a flag,
// in the workspace after the tf32 copies. The flags are zeroed on the stream before each
// launch that uses them, so a launch waits only for flags its own blocks set.
//
// Rung 21 with `splits` > 1 (at most the K-blocks): split-K instead, every cluster tile cut
// into that many work units; per (tile, block, consumer) the slices' 64 x BN floats of
// partial sums and wgmma_split_counters(splits) counters, zeroed on the stream before each
// launch.
struct WsPlan {
  int clusters = 0;
  kernels::StreamK sk;
  std::size_t slots = 0;  // stream-K: (cluster, block, consumer) triples with partial sums;
                          // split-K: (tile, block, consumer) triples with a counter
  std::size_t stream_k_bytes = 0;  // stream-K's or split-K's workspace
};

// The plan for `cluster_tiles` tiles of `k_tiles` K-blocks each (all matrices of a batch).
template <class Cfg>
WsPlan plan_ws_tiles(std::int64_t cluster_tiles, std::int64_t k_tiles, int resident, int splits = 1) {
  WsPlan plan;
  constexpr std::size_t kSlotBytes = 64 * Cfg::BN * sizeof(float);
  kernels::StreamK& sk = plan.sk;
  splits = int(std::clamp<std::int64_t>(splits, 1, k_tiles));
  if (Cfg::kSplitK && splits > 1) {
    const std::int64_t units = cluster_tiles * splits;
    plan.clusters = int(std::min<std::int64_t>(units, resident));
    plan.clusters = int(ceil_div(units, ceil_div(units, std::int64_t(plan.clusters))));  // equal rounds
    sk.dp_tiles = int(cluster_tiles);
    sk.splits = splits;
    plan.slots = std::size_t(cluster_tiles) * Cfg::kClusterM * Cfg::kConsumers;
    plan.stream_k_bytes = plan.slots * (splits * kSlotBytes + wgmma_split_counters(splits) * sizeof(unsigned));
    return plan;
  }
  plan.clusters = int(std::min<std::int64_t>(cluster_tiles, resident));
  sk.dp_tiles = int(cluster_tiles);
  const std::int64_t last_round = cluster_tiles % plan.clusters;
  if (cluster_tiles <= plan.clusters || 4 * last_round < plan.clusters ||
      3 * last_round > 2 * plan.clusters || last_round * k_tiles < 2 * plan.clusters) {
    // Without stream-K, as few clusters as give the same number of rounds, so that every
    // round is as full as the last: at 4096^3, 64 clusters (rounds of 8 x 8 cluster tiles,
    // one half of a tile group each) rather than 66 (rounds that straddle the groups, the
    // last with 58 tiles).
    plan.clusters = int(ceil_div(cluster_tiles, ceil_div(cluster_tiles, std::int64_t(plan.clusters))));
    return plan;
  }
  sk.dp_tiles = int(cluster_tiles - last_round);
  sk.sk_tiles = int(last_round);
  plan.slots = std::size_t(plan.clusters) * Cfg::kClusterM * Cfg::kConsumers;
  plan.stream_k_bytes = plan.slots * (kSlotBytes + sizeof(unsigned));
  return plan;
}


}  // namespace gemmkit::cuda

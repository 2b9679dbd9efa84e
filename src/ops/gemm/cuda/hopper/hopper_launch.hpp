// Internal: host pieces the warp-specialised Hopper launchers share (rungs 19 and 21 in
// ladder_hopper.cu, rung 24 in 24_wgmma_i8.cu): rank-3 tensor maps of strided batches,
// residency, and the plan that shares tiles out over the persistent grid.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "runtime/cuda/context.hpp"
#include "launch/explain_launch.hpp"
#include "ops/gemm/cuda/hopper/hopper_tune_table.hpp"
#include "ops/gemm/cuda/hopper/19_wgmma_ws.cuh"
#include "launch/launch.hpp"
#include "launch/tensor_map.hpp"

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

// The launch of kernels::transpose (transpose.cuh) for stored (rows, cols): 32x32 tiles,
// blocks of 32x8 threads, at most 65535 tile rows at once (blocks then step further down).
inline Geometry transpose_geometry(std::int64_t rows, std::int64_t cols) {
  return {dim3(unsigned(ceil_div(cols, 32)), unsigned(std::min<std::int64_t>(ceil_div(rows, 32), 65535))),
          dim3(32, 8)};
}

// Clusters of Kernel the device runs at once (one per SM pair for rung 19), in geometry g
// (its grid only a probe: kResidencyProbe clusters).
constexpr int kResidencyProbe = 256;
inline int resident_clusters(const Context& ctx, const KernelRef& kernel, const Geometry& g) {
  const int clusters = active_clusters(ctx, kernel, g);
  if (clusters < 1) fail(ErrorCategory::device, *kernel.name + " does not fit on this device's multiprocessors");
  return clusters;
}
template <auto Kernel>
int resident_clusters(const Context& ctx, const Geometry& g) {
  return resident_clusters(ctx, ahead_of_time<Kernel>(), g);
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

// The most stream-K scratch that plan_ws_tiles (splits = 1) asks for, over every problem of
// at most `cluster_tiles` tiles: one slot set per cluster, and at most min(tiles, resident)
// clusters. A workspace declared for a shape must serve the smaller launches its callers
// run in it (a last batch of fewer moduli, a last pass of fewer rows), and stream-K can plan
// for those where the whole shape needs none.
template <class Cfg>
std::size_t plan_ws_stream_k_bound(std::int64_t cluster_tiles, int resident) {
  const std::size_t clusters = std::size_t(std::clamp<std::int64_t>(cluster_tiles, 0, resident));
  return clusters * Cfg::kClusterM * Cfg::kConsumers * (64 * Cfg::BN * sizeof(float) + sizeof(unsigned));
}


}  // namespace gemmkit::cuda

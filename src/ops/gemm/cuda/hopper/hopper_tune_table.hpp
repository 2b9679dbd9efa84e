// Rung 21's choice per problem shape (cuda_wgmma_tuned): which wgmma tile configuration,
// and into how many slices of K (split-K) each tile's work is cut. Plain host code, so the
// rule is unit-tested on the host (tests/host/test_hopper_tune_table.cpp).
//
// The rule is a small cost model, not a list of shapes: for every configuration and split
// count it estimates the time as (rounds of work units over the clusters the GPU holds) x
// (the time of one unit), and takes the cheapest. A unit's time, in K-blocks of a
// 128 x 256 tile:
//   tile area / (128 x 256) x tile cost x (K-blocks of its slice + fixed cost per unit
//                                           + split-K's partial sums when split),
// where the tile cost says how much slower a smaller tile runs per output once the SMs are
// full (it re-reads A and B more often per product), and a split tile's last slice reads
// every slice's partial sums back. The named constants below are what the lead tunes from
// the H200 runs of the cuda_wgmma_<tile> entries (each configuration as the rule splits
// it, never split (_k1), and split as far as it goes (_kmax): see ladder_hopper.cu);
// measured: the ladder tables of docs/ladder.md and docs/notes/ladder-log.md.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gemmkit::cuda {

enum class WgmmaTile { t128x256, t128x128, t64x256, t64x128 };

struct WgmmaTileShape {
  int bm, bn, cluster_m;  // block tile, blocks per cluster (stacked along M)
  double cost;            // time per output x K relative to 128 x 256 with the SMs full
};

// Relative costs, from the H200 (2026-11-24, bf16, unsplit entries at 2048x2048x16384 and
// 4096x4096x32768, where every configuration fills the SMs for many rounds), as the
// ratios of their rates to 128x256's.
constexpr double kCost128x256 = 1.00;
constexpr double kCost128x128 = 1.07;
constexpr double kCost64x256 = 1.22;
constexpr double kCost64x128 = 1.53;

constexpr WgmmaTileShape wgmma_tile_shape(WgmmaTile t) {
  switch (t) {
    case WgmmaTile::t128x256: return {128, 256, 2, kCost128x256};
    case WgmmaTile::t128x128: return {128, 128, 2, kCost128x128};
    case WgmmaTile::t64x256: return {64, 256, 2, kCost64x256};
    case WgmmaTile::t64x128: return {64, 128, 2, kCost64x128};
  }
  return {128, 256, 2, kCost128x256};
}

constexpr WgmmaTile kWgmmaTiles[] = {WgmmaTile::t128x256, WgmmaTile::t128x128,
                                     WgmmaTile::t64x256, WgmmaTile::t64x128};

// Split-K's limits: each slice holds at least kMinKBlocksPerSlice K-blocks (so that the
// pipeline fills and the partial sums stay small against the products), at most
// kMaxSplits slices, and the partial sums of all slices fit in kMaxSplitBytes of workspace.
constexpr int kMinKBlocksPerSlice = 4;
constexpr int kMaxSplits = 64;
constexpr std::int64_t kMaxSplitBytes = std::int64_t(256) << 20;
// Fixed cost of a work unit (the pipeline's fill, the epilogue), in K-blocks.
constexpr double kUnitCostKBlocks = 2.0;
// Split-K: writing a slice's FP32 partial sums costs about kSplitWriteKBlocks K-blocks of
// the same tile, and the last slice reads every slice back (kSplitReadKBlocks each).
// From the same run: with 2 and 1, the rule split small squares (640^3, 1536^3) and lost
// 20-27 points against the unsplit entries; 4 and 2 choose the best measured configuration
// on every small square and keep the splits that won on long K.
constexpr double kSplitWriteKBlocks = 4.0;
constexpr double kSplitReadKBlocks = 2.0;

// How far a split may go: "rule" lets the cost model choose, "none" never splits (the
// _k1 entries of a tuning run), "most" splits as far as the limits allow (the _kmax
// entries of a tuning run; it ignores kMinKBlocksPerSlice).
enum class SplitMode { rule, none, most };

struct WgmmaShape {
  std::int64_t m, n, k, batch;
  int k_block;  // elements of K per K-block: 64 (16-bit types) or 32 (tf32)
};

// Work units of one configuration: cluster tiles (the batch's matrices side by side).
inline std::int64_t wgmma_cluster_tiles(const WgmmaTileShape& t, const WgmmaShape& s) {
  const std::int64_t m_tiles = (s.m + t.bm - 1) / t.bm;
  return (m_tiles + t.cluster_m - 1) / t.cluster_m * ((s.n + t.bn - 1) / t.bn) * s.batch;
}

inline std::int64_t wgmma_k_blocks(const WgmmaShape& s) { return (s.k + s.k_block - 1) / s.k_block; }

// How the kernel adds the slices of a tile (the kernel calls these too): from
// kSplitGroupsFrom slices on, in two levels, groups of about sqrt(splits) slices each
// summed by the group's last slice, then the group sums by the last group; below, the
// last slice adds them all. The last one to arrive then reads about 2 sqrt(splits) slices
// rather than all of them.
constexpr int kSplitGroupsFrom = 8;
constexpr int wgmma_split_group_size(int splits) {
  if (splits < kSplitGroupsFrom) return splits;
  int size = 1;
  while (size * size < splits) ++size;
  return size;
}
constexpr int wgmma_split_groups(int splits) {
  const int size = wgmma_split_group_size(splits);
  return (splits + size - 1) / size;
}
// Counters per consumer tile: one of the groups done, then one per group; or one of the
// slices done.
constexpr int wgmma_split_counters(int splits) {
  return wgmma_split_groups(splits) > 1 ? 1 + wgmma_split_groups(splits) : 1;
}

// Bytes of split-K workspace `splits` slices need: FP32 partial sums of every slice of every
// block tile, and the counters of each consumer tile (64 rows).
inline std::int64_t wgmma_split_bytes(const WgmmaTileShape& t, const WgmmaShape& s, int splits) {
  if (splits <= 1) return 0;
  const std::int64_t block_tiles = wgmma_cluster_tiles(t, s) * t.cluster_m;
  return block_tiles * t.bm * t.bn * splits * std::int64_t(sizeof(float)) +
         block_tiles * (t.bm / 64) * wgmma_split_counters(splits) * std::int64_t(sizeof(unsigned));
}

// The most slices the limits allow for this configuration and shape (at least 1).
inline int wgmma_max_splits(const WgmmaTileShape& t, const WgmmaShape& s, SplitMode mode) {
  if (mode == SplitMode::none) return 1;
  const std::int64_t k_blocks = wgmma_k_blocks(s);
  std::int64_t most = std::min<std::int64_t>(kMaxSplits, mode == SplitMode::most ? k_blocks : k_blocks / kMinKBlocksPerSlice);
  while (most > 1 && wgmma_split_bytes(t, s, int(most)) > kMaxSplitBytes) --most;
  return int(std::max<std::int64_t>(most, 1));
}

// Estimated time of configuration t with `splits` slices on `sms` multiprocessors, in
// K-blocks of a 128 x 256 tile (only comparisons matter).
inline double wgmma_estimate(const WgmmaTileShape& t, const WgmmaShape& s, int splits, int sms) {
  const std::int64_t clusters = std::max(sms / t.cluster_m, 1);
  const std::int64_t units = wgmma_cluster_tiles(t, s) * splits;
  const std::int64_t rounds = (units + clusters - 1) / clusters;
  const std::int64_t k_blocks = wgmma_k_blocks(s);
  double unit = double((k_blocks + splits - 1) / splits) + kUnitCostKBlocks;
  if (splits > 1) unit += kSplitWriteKBlocks;
  double time = double(rounds) * unit;
  if (splits > 1) {  // the last slices' sums, once per tile
    const int groups = wgmma_split_groups(splits);
    time += kSplitReadKBlocks * wgmma_split_group_size(splits);
    if (groups > 1) time += kSplitWriteKBlocks + kSplitReadKBlocks * groups;
  }
  return time * t.cost * (double(t.bm) * t.bn) / (128.0 * 256.0);
}

// The split count for configuration t: the cheapest estimate from 1 to the limit (fewer
// slices on a tie).
inline int choose_wgmma_splits(WgmmaTile tile, const WgmmaShape& s, int sms, SplitMode mode) {
  const WgmmaTileShape t = wgmma_tile_shape(tile);
  const int most = wgmma_max_splits(t, s, mode);
  if (mode == SplitMode::most) return most;
  int best = 1;
  double best_time = wgmma_estimate(t, s, 1, sms);
  for (int splits = 2; splits <= most; ++splits) {
    const double time = wgmma_estimate(t, s, splits, sms);
    if (time < best_time) best = splits, best_time = time;
  }
  return best;
}

struct WgmmaChoice {
  WgmmaTile tile;
  int splits;
};

// cuda_wgmma_tuned's choice: the configuration and split count with the cheapest estimate
// (the larger tile on a tie: kWgmmaTiles is in order of preference).
inline WgmmaChoice choose_wgmma_config(const WgmmaShape& s, int sms) {
  WgmmaChoice best{WgmmaTile::t128x256, 1};
  double best_time = -1;
  for (WgmmaTile tile : kWgmmaTiles) {
    const int splits = choose_wgmma_splits(tile, s, sms, SplitMode::rule);
    const double time = wgmma_estimate(wgmma_tile_shape(tile), s, splits, sms);
    if (best_time < 0 || time < best_time) best = {tile, splits}, best_time = time;
  }
  return best;
}

}  // namespace gemmkit::cuda

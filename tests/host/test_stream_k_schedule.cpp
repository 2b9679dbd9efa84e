// The stream-K schedule (src/ops/gemm/cuda/common/stream_k_schedule.hpp) of rungs 15, 19 and 24 is plain
// arithmetic; these tests walk it the way the kernels do, block by block, and check what the
// kernels rely on: every K iteration of every tile is done exactly once, the blocks' work is
// even, each shared tile has one owner that only waits for lower-numbered blocks (from the
// first one with a part of it), and no block has to publish more than one partial tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "ops/gemm/cuda/common/stream_k_schedule.hpp"

using gemmkit::cuda::make_stream_k_schedule;
using gemmkit::cuda::stream_k_split;
using gemmkit::cuda::StreamKSchedule;
using gemmkit::cuda::StreamKSegment;

namespace {

struct Walk {
  std::vector<int> covered;               // (tile * k_tiles + kt) -> times done
  std::vector<std::int64_t> block_iters;  // K iterations per stream-K block
  std::map<int, int> owner;               // shared tile -> the block that writes it
  std::map<int, std::vector<int>> contributors;
  std::vector<int> publishes;             // partial tiles published per stream-K block
};

// Follows the kernel: data-parallel blocks do their tile whole; stream-K blocks walk their
// range from its last tile back to its first.
Walk walk(const StreamKSchedule& s) {
  Walk w;
  w.covered.assign(std::size_t(s.tiles) * std::max(s.k_tiles, 1), 0);
  w.block_iters.assign(s.sk_blocks, 0);
  w.publishes.assign(s.sk_blocks, 0);
  for (int tile = 0; tile < s.dp_tiles; ++tile)
    for (int kt = 0; kt < s.k_tiles; ++kt) ++w.covered[std::size_t(tile) * s.k_tiles + kt];
  for (int c = 0; c < s.sk_blocks; ++c) {
    EXPECT_LT(s.sk_begin(c), s.sk_begin(c + 1)) << "stream-K block " << c << " has no work";
    EXPECT_GE(s.first_sk_tile(c), s.dp_tiles);
    EXPECT_LT(s.last_sk_tile(c), s.tiles);
    bool first_processed = true;
    int next_tile = s.last_sk_tile(c);  // for_each_segment's order: the last tile first
    s.for_each_segment(c, [&](const StreamKSegment part) {
      const int tile = part.tile;
      EXPECT_EQ(tile, next_tile--) << "block " << c;
      EXPECT_EQ(part.kt_begin, s.segment(c, tile).kt_begin) << "block " << c << " tile " << tile;
      EXPECT_EQ(part.kt_end, s.segment(c, tile).kt_end) << "block " << c << " tile " << tile;
      EXPECT_LT(part.kt_begin, part.kt_end) << "block " << c << " tile " << tile;
      for (int kt = part.kt_begin; kt < part.kt_end; ++kt)
        ++w.covered[std::size_t(tile) * s.k_tiles + kt];
      w.block_iters[c] += part.kt_end - part.kt_begin;
      if (part.kt_end < s.k_tiles) {
        ++w.publishes[c];
        // A partial tile is published before the block can wait for anyone.
        EXPECT_TRUE(first_processed) << "block " << c << " publishes after waiting";
        w.contributors[tile].push_back(c);
      } else {
        EXPECT_EQ(w.owner.count(tile), 0u) << "tile " << tile << " has two owners";
        w.owner[tile] = c;
      }
      first_processed = false;
    });
    EXPECT_EQ(next_tile, s.first_sk_tile(c) - 1) << "block " << c;
  }
  // The first block with a part of a shared tile, which the owner's wait starts from.
  for (const auto& [tile, blocks] : w.contributors)
    EXPECT_EQ(s.first_sk_block(tile), *std::min_element(blocks.begin(), blocks.end())) << "tile " << tile;
  for (const auto& [tile, owner] : w.owner)
    if (w.contributors.count(tile) == 0) EXPECT_EQ(s.first_sk_block(tile), owner) << "tile " << tile;
  return w;
}

void check(std::int64_t tiles, std::int64_t k_tiles, int resident, int min_iters) {
  SCOPED_TRACE(testing::Message() << tiles << " tiles of " << k_tiles << " K tiles, "
                                  << resident << " resident blocks, min " << min_iters);
  const StreamKSchedule s = make_stream_k_schedule(tiles, k_tiles, resident, min_iters);
  ASSERT_EQ(s.tiles, tiles);
  ASSERT_LE(s.dp_tiles, s.tiles);
  if (s.sk_blocks > 0) {
    ASSERT_EQ(s.dp_tiles % resident, 0) << "the data-parallel part must be whole waves";
  }
  ASSERT_LE(s.sk_blocks, std::max<std::int64_t>(resident, tiles - s.dp_tiles));
  ASSERT_EQ(s.sk_iters, (tiles - s.dp_tiles) * k_tiles);
  const Walk w = walk(s);
  if (k_tiles > 0) {
    for (std::size_t i = 0; i < w.covered.size(); ++i)
      ASSERT_EQ(w.covered[i], 1) << "tile " << i / k_tiles << " K tile " << i % k_tiles;
  }
  // Every tile with contributors has an owner numbered above all of them.
  for (const auto& [tile, blocks] : w.contributors) {
    ASSERT_EQ(w.owner.count(tile), 1u) << "tile " << tile << " is never written";
    for (int c : blocks) EXPECT_LT(c, w.owner.at(tile)) << "tile " << tile;
  }
  for (int c = 0; c < s.sk_blocks; ++c) EXPECT_LE(w.publishes[c], 1) << "block " << c;
  if (s.sk_blocks > 0) {
    const auto [lo, hi] = std::minmax_element(w.block_iters.begin(), w.block_iters.end());
    EXPECT_LE(*hi - *lo, 1) << "uneven work: " << *lo << " to " << *hi << " iterations";
  }
}

}  // namespace

TEST(StreamKSchedule, The4096CaseSplitsOnlyThePartialWave) {
  // 4096^3 in 128x256 tiles on 132 SMs, one block each: 512 tiles, 3.88 waves.
  const StreamKSchedule s = make_stream_k_schedule(512, 256, 132, 8);
  EXPECT_EQ(s.dp_tiles, 3 * 132);
  EXPECT_EQ(s.sk_blocks, 132);
  EXPECT_EQ(s.blocks(), 3 * 132 + 132);
  // The 116 tiles of the partial wave, 29696 iterations, 224.97 per block.
  EXPECT_EQ(s.sk_begin(1), 224);
  const StreamKSegment first = s.segment(0, 396);
  EXPECT_EQ(first.kt_begin, 0);
  EXPECT_EQ(first.kt_end, 224);
  const StreamKSegment shared = s.segment(1, 396);
  EXPECT_EQ(shared.kt_begin, 224);
  EXPECT_EQ(shared.kt_end, 256);
  EXPECT_EQ(s.first_sk_tile(1), 396);
  EXPECT_EQ(s.last_sk_tile(1), 397);
  check(512, 256, 132, 8);
}

TEST(StreamKSchedule, WholeWavesStayDataParallel) {
  const StreamKSchedule s = make_stream_k_schedule(396, 128, 132, 8);
  EXPECT_EQ(s.dp_tiles, 396);
  EXPECT_EQ(s.sk_blocks, 0);
  check(396, 128, 132, 8);
}

TEST(StreamKSchedule, LessThanOneWaveSplitsEachTileByK) {
  // 1024^3 in 64x128 tiles: 128 tiles of 64 K tiles on 528 resident blocks.
  const StreamKSchedule s = make_stream_k_schedule(128, 64, 528, 8);
  EXPECT_EQ(s.dp_tiles, 0);
  EXPECT_EQ(s.sk_blocks, 528);
  check(128, 64, 528, 8);
  // Just enough K to split: no block gets fewer than min_iters K tiles.
  const StreamKSchedule shallow = make_stream_k_schedule(100, 40, 528, 10);
  EXPECT_EQ(shallow.sk_blocks, 400);
  check(100, 40, 528, 10);
}

TEST(StreamKSchedule, ShortKStaysWhole) {
  // 1024x8192x256 in 128x256 tiles: 256 tiles of 16 K tiles. Splitting measured 62% of
  // cuBLAS against 93% whole.
  const StreamKSchedule s = make_stream_k_schedule(256, 16, 132, 8);
  EXPECT_EQ(s.dp_tiles, 256);
  EXPECT_EQ(s.sk_blocks, 0);
  check(256, 16, 132, 8);
  EXPECT_GT(make_stream_k_schedule(256, 32, 132, 8).sk_blocks, 0);
}

TEST(StreamKSchedule, EdgeCases) {
  EXPECT_EQ(make_stream_k_schedule(0, 10, 132, 8).blocks(), 0);
  const StreamKSchedule no_k = make_stream_k_schedule(7, 0, 4, 8);  // K = 0: C = beta C
  EXPECT_EQ(no_k.dp_tiles, 7);
  EXPECT_EQ(no_k.sk_blocks, 0);
  check(7, 0, 4, 8);
  check(1, 1, 132, 8);
  check(1, 1000, 132, 8);
  check(1, 1000, 132, 1);
  check(133, 1, 132, 1);  // one iteration per tile
}

TEST(StreamKSchedule, EveryIterationOnceOverManyShapes) {
  for (int resident : {1, 2, 5, 132, 264, 528})
    for (std::int64_t tiles : {1, 2, 3, 7, 64, 131, 133, 200, 511, 1000})
      for (std::int64_t k_tiles : {1, 2, 3, 8, 17, 64, 257})
        for (int min_iters : {1, 8})
          check(tiles, k_tiles, resident, min_iters);
}

// Rung 19's persistent clusters: the last round's tiles (fewer than the clusters) shared
// by iterations over every cluster, as its planner (hopper_launch.hpp) decides them. The
// walk is the order its kernel follows, and the ranges those its earlier closed formulas
// gave: cluster c's share of the sk_tiles * k_tiles iterations is [c * iters / clusters,
// (c + 1) * iters / clusters), and a tile's first sharer the last c whose share starts at or
// before the tile's first iteration.
TEST(StreamKSchedule, PersistentClustersShareTheLastRound) {
  for (int clusters : {2, 33, 64, 66, 132})
    for (int tiles : {67, 100, 1000, 1024})
      for (int k_tiles : {2, 16, 64, 128}) {
        const int last_round = tiles % clusters;
        if (last_round == 0 || std::int64_t(last_round) * k_tiles < 2 * clusters) continue;  // the planner's floor
        SCOPED_TRACE(testing::Message() << tiles << " tiles of " << k_tiles << " K-blocks on " << clusters << " clusters");
        const StreamKSchedule s = stream_k_split(tiles - last_round, last_round, k_tiles, clusters);
        EXPECT_EQ(s.tiles, tiles);
        EXPECT_EQ(s.blocks(), tiles - last_round + clusters);
        const Walk w = walk(s);
        for (std::size_t i = 0; i < w.covered.size(); ++i) ASSERT_EQ(w.covered[i], 1) << "iteration " << i;
        const std::int64_t iters = std::int64_t(last_round) * k_tiles;
        for (int c = 0; c < clusters; ++c) {
          EXPECT_EQ(s.sk_begin(c), c * iters / clusters);
          for (int t = s.first_sk_tile(c); t <= s.last_sk_tile(c); ++t) {
            const std::int64_t start = std::int64_t(t - s.dp_tiles) * k_tiles;
            EXPECT_EQ(s.first_sk_block(t), int(((start + 1) * clusters - 1) / iters));
          }
        }
        for (int c = 0; c < clusters; ++c) EXPECT_LE(w.publishes[c], 1) << "cluster " << c;
      }
}

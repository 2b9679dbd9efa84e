// Rung 21's per-shape rule (src/ops/gemm/cuda/hopper/hopper_tune_table.hpp) is plain arithmetic: these
// tests check what the launcher relies on (a split never exceeds the K-blocks, never leaves
// a slice empty, stays within the workspace cap) and that the rule does what it is for on
// the losing shapes (long K splits, small outputs take smaller tiles, large
// squares keep rung 19's tile unsplit).
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "ops/gemm/cuda/hopper/hopper_tune_table.hpp"

using namespace gemmkit::cuda;

namespace {

constexpr int kH200Sms = 132;

WgmmaShape bf16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return {m, n, k, batch, 64};
}

std::string describe(const WgmmaShape& s) {
  std::ostringstream o;
  o << s.m << "x" << s.n << "x" << s.k << " batch " << s.batch << " K-block " << s.k_block;
  return o.str();
}

std::vector<WgmmaShape> shapes() {
  std::vector<WgmmaShape> out;
  const std::int64_t sizes[] = {1, 63, 64, 65, 128, 129, 256, 1000, 1024, 4096, 8192};
  const std::int64_t ks[] = {1, 8, 63, 64, 65, 255, 256, 4096, 131072, 1048576};
  for (std::int64_t m : sizes)
    for (std::int64_t n : sizes)
      for (std::int64_t k : ks)
        for (int kb : {64, 32}) out.push_back({m, n, k, 1, kb});
  out.push_back(bf16(256, 1024, 512, 24));
  out.push_back(bf16(5, 3, 7, 70001));
  return out;
}

TEST(HopperTuneTable, SplitsStayWithinTheKBlocksAndTheWorkspaceCap) {
  for (const WgmmaShape& s : shapes())
    for (WgmmaTile tile : kWgmmaTiles)
      for (SplitMode mode : {SplitMode::rule, SplitMode::none, SplitMode::most})
        for (int sms : {1, 2, 78, 132}) {
          const int splits = choose_wgmma_splits(tile, s, sms, mode);
          const std::string what = describe(s);
          ASSERT_GE(splits, 1) << what;
          ASSERT_LE(splits, wgmma_k_blocks(s)) << what << ": a slice would be empty";
          ASSERT_LE(splits, kMaxSplits) << what;
          if (mode == SplitMode::none) {
            EXPECT_EQ(splits, 1) << what;
          }
          if (mode == SplitMode::rule && splits > 1) {
            EXPECT_GE(wgmma_k_blocks(s) / splits, kMinKBlocksPerSlice) << what;
          }
          if (splits > 1) {
            EXPECT_LE(wgmma_split_bytes(wgmma_tile_shape(tile), s, splits), kMaxSplitBytes) << what;
          }
          EXPECT_LE(splits, choose_wgmma_splits(tile, s, sms, SplitMode::most)) << what;
        }
}

TEST(HopperTuneTable, TheChoiceIsOneOfTheTilesWithItsOwnSplit) {
  for (const WgmmaShape& s : shapes()) {
    const WgmmaChoice c = choose_wgmma_config(s, kH200Sms);
    EXPECT_EQ(c.splits, choose_wgmma_splits(c.tile, s, kH200Sms, SplitMode::rule)) << describe(s);
    // Nothing the rule could have picked is estimated cheaper.
    for (WgmmaTile tile : kWgmmaTiles) {
      const int splits = choose_wgmma_splits(tile, s, kH200Sms, SplitMode::rule);
      EXPECT_LE(wgmma_estimate(wgmma_tile_shape(c.tile), s, c.splits, kH200Sms),
                wgmma_estimate(wgmma_tile_shape(tile), s, splits, kH200Sms))
          << describe(s);
    }
  }
}

TEST(HopperTuneTable, LongKWithFewTilesSplits) {
  for (const WgmmaShape& s : {bf16(96, 96, 1048576), bf16(128, 128, 131072), bf16(256, 256, 65536),
                              bf16(1024, 1024, 8192), bf16(512, 512, 16384)}) {
    const WgmmaChoice c = choose_wgmma_config(s, kH200Sms);
    const WgmmaTileShape t = wgmma_tile_shape(c.tile);
    EXPECT_GT(c.splits, 1) << describe(s);
    // The work units keep a good part of the GPU's clusters busy (not all: the last slice
    // reads every slice back, so more slices cost more).
    EXPECT_GE(wgmma_cluster_tiles(t, s) * c.splits, kH200Sms / t.cluster_m / 4) << describe(s);
  }
  // One tile's K of 2^20 is cut as far as the limit allows.
  EXPECT_EQ(choose_wgmma_config(bf16(96, 96, 1048576), kH200Sms).splits, kMaxSplits);
}

TEST(HopperTuneTable, LargeSquaresKeepRung19sTileWhole) {
  for (const WgmmaShape& s : {bf16(4096, 4096, 4096), bf16(8192, 8192, 8192)}) {
    const WgmmaChoice c = choose_wgmma_config(s, kH200Sms);
    EXPECT_EQ(c.tile, WgmmaTile::t128x256) << describe(s);
    EXPECT_EQ(c.splits, 1) << describe(s);
  }
}

TEST(HopperTuneTable, SmallOutputsTakeSmallerTilesOrSplits) {
  // 1024^3 has 32 tiles of 128 x 256 for 132 SMs: the rule must do better than that.
  for (const WgmmaShape& s : {bf16(1024, 1024, 1024), bf16(128, 8192, 8192), bf16(256, 8192, 8192)}) {
    const WgmmaChoice c = choose_wgmma_config(s, kH200Sms);
    EXPECT_TRUE(c.tile != WgmmaTile::t128x256 || c.splits > 1) << describe(s);
    const WgmmaTileShape t = wgmma_tile_shape(c.tile);
    EXPECT_GT(wgmma_cluster_tiles(t, s) * c.splits, 32) << describe(s);
  }
}

TEST(HopperTuneTable, SplitBytesCountEverySliceOfEveryBlockTile) {
  const WgmmaTileShape t = wgmma_tile_shape(WgmmaTile::t128x128);
  const WgmmaShape s = bf16(300, 200, 8192);  // 3 block tiles of M (2 cluster rows), 2 of N
  EXPECT_EQ(wgmma_cluster_tiles(t, s), 2 * 2);
  EXPECT_EQ(wgmma_split_bytes(t, s, 1), 0);
  EXPECT_EQ(wgmma_split_bytes(t, s, 3), 8 * (128 * 128 * 3 * 4 + 2 * 4));
}

}  // namespace

namespace {

// The kernel's two-level sum: every slice in exactly one group, no group empty, and fewer
// slices read on the way to the result than all of them once there are many.
TEST(HopperTuneTable, SplitGroupsCoverEverySliceOnce) {
  for (int splits = 2; splits <= kMaxSplits; ++splits) {
    const int size = wgmma_split_group_size(splits), groups = wgmma_split_groups(splits);
    ASSERT_GE(size, 1) << splits;
    EXPECT_GE(groups * size, splits) << splits;
    EXPECT_LT((groups - 1) * size, splits) << splits << ": the last group is empty";
    EXPECT_EQ(wgmma_split_counters(splits), groups > 1 ? groups + 1 : 1) << splits;
    if (splits < kSplitGroupsFrom) {
      EXPECT_EQ(groups, 1) << splits;
    } else {
      EXPECT_LT(size + groups, splits) << splits;
    }
  }
}

}  // namespace

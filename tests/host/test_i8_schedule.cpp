// Which schedule rung 24's int32 product runs (src/ops/gemm/cuda/hopper/i8_schedule.hpp) is plain
// arithmetic: these check it on the H200's 66 clusters of two SMs, where it was measured.
#include <gtest/gtest.h>

#include <cstdint>

#include "ops/gemm/cuda/hopper/i8_schedule.hpp"

using gemmkit::cuda::I8Rounds;
using gemmkit::cuda::i8_overlap_spread;
using gemmkit::cuda::prefer_i8_overlapped;

namespace {

constexpr int kClusters = 66;

// Cluster tiles of 256 x 256 (wide) or 256 x 208 (overlapped) over m x n.
std::int64_t tiles(std::int64_t m, std::int64_t n, int columns) {
  return ((m + 255) / 256) * ((n + columns - 1) / columns);
}

bool overlapped(std::int64_t m, std::int64_t n, std::int64_t k, bool wide_stream_k = false) {
  const std::int64_t wide = tiles(m, n, 256), narrow = tiles(m, n, 208);
  return prefer_i8_overlapped({wide, std::min<std::int64_t>(wide, kClusters), wide_stream_k},
                              {narrow, std::min<std::int64_t>(narrow, kClusters), false}, m, n, (k + 127) / 128);
}

}  // namespace

TEST(I8Schedule, SpreadFollowsK) {
  EXPECT_EQ(i8_overlap_spread(1), 0);
  EXPECT_EQ(i8_overlap_spread(12), 0);  // fewer K-blocks than boxes of C to hide
  EXPECT_EQ(i8_overlap_spread(13), 1);
  EXPECT_EQ(i8_overlap_spread(25), 1);
  EXPECT_EQ(i8_overlap_spread(26), 2);
  EXPECT_EQ(i8_overlap_spread(1000), 2);
}

TEST(I8Schedule, RoundsCountWholeOrShared) {
  EXPECT_DOUBLE_EQ((I8Rounds{256, 66, false}.rounds()), 4.0);   // 3.88 rounds take 4
  EXPECT_DOUBLE_EQ((I8Rounds{1023, 66, true}.rounds()), 15.5);  // stream-K shares the last
}

TEST(I8Schedule, OverlappedWhereItsRoundsCostNoMore) {
  // 4096^3: 256 wide tiles in 4 rounds, 320 narrow ones in 5; the hidden epilogues win
  // (measured 96.7% and 100.7-101.6% of cuBLAS INT8).
  EXPECT_TRUE(overlapped(4096, 4096, 4096));
  // 12288 x 12288 x 4096 (measured 90.5% and 98.9%).
  EXPECT_TRUE(overlapped(12288, 12288, 4096));
  // 8192^3: the wide tiles' half-empty last round is shared by stream-K (15.5 rounds
  // against 20); measured about 2% faster overlapped, and so counted.
  EXPECT_TRUE(overlapped(8192, 8192, 8192, true));
}

TEST(I8Schedule, OneRoundTakesNarrowTilesOnlyWhereRereadingAIsCheap) {
  // n = 256: one wide column of tiles against two narrow ones, all in one round. A of 8192
  // rows read twice (measured 17% slower overlapped); the same at 4096 rows.
  EXPECT_FALSE(overlapped(8192, 256, 8192));
  EXPECT_FALSE(overlapped(4096, 256, 4096));
  // M-skinny: A's 128 or 256 rows read 40 times instead of 32 beside B's 8192 columns read
  // once (measured 3% faster overlapped in NN form, 13% in TN form).
  EXPECT_TRUE(overlapped(128, 8192, 8192));
  EXPECT_TRUE(overlapped(256, 8192, 8192));
  // n <= 208: one column of tiles either way, the narrow ones simply narrower (measured
  // 15% faster at 4096 x 128 x 14336).
  EXPECT_TRUE(overlapped(4096, 128, 14336));
  EXPECT_TRUE(overlapped(8192, 64, 8192));
}

TEST(I8Schedule, WideWhereNarrowTilesCostARound) {
  // n = 512: two wide column tiles against three narrow ones, one round against two.
  EXPECT_FALSE(overlapped(33 * 256, 512, 4096));
  // K too short to hide C's 13 boxes under.
  EXPECT_FALSE(overlapped(4096, 4096, 1536));
}

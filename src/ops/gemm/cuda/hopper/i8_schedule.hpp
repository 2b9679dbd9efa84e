// Which schedule rung 24's int32 product runs (24_wgmma_i8.cuh), as plain arithmetic the
// host tests can check:
//   - wide: 128 x 256 cluster-half tiles; both consumers stop multiplying between tiles to
//     write C (about 3.5 K-blocks' time per tile on the H200), and a half-empty last round
//     is shared out by stream-K;
//   - overlapped: 128 x 208 tiles, each tile's C written under the next tile's first
//     13 * spread K-blocks, so only the last tile's epilogue costs time; whole tiles only.
// Narrower tiles can cost a round, so the two are compared by their rounds: time ~ rounds
// x tile width x K-blocks, plus the epilogues that are not hidden; and a single round takes
// the narrow tiles only where their extra reads of A are cheap (overlapped_rereads_cheap).
#pragma once

#include <cstdint>

#include "runtime/ceil_div.hpp"

namespace gemmkit::cuda {

inline constexpr int kI8WideColumns = 256, kI8OverlapColumns = 208;
inline constexpr int kI8TileRows = 256;           // rows of C per cluster tile, in both schedules
inline constexpr int kI8OverlapBoxes = 13;        // boxes of 16 columns of C per overlapped tile
inline constexpr double kI8EpilogueBlocks = 3.5;  // one tile's epilogue in K-blocks (H200, 2026-11-25)

// K-blocks of the next tile per box of C in the overlapped schedule: two where K has room
// for them (measured faster: fewer barriers between multiplies), else one; 0: K too short
// to hide the 13 boxes under, so the overlapped schedule does not run.
inline int i8_overlap_spread(std::int64_t k_tiles) {
  return k_tiles >= 2 * kI8OverlapBoxes ? 2 : (k_tiles >= kI8OverlapBoxes ? 1 : 0);
}

// A schedule's plan, as the comparison needs it: cluster tiles, persistent clusters, and
// whether the last round's tiles are shared out by stream-K (rounds then are fractional).
struct I8Rounds {
  std::int64_t tiles = 0;
  std::int64_t clusters = 1;
  bool stream_k = false;
  double rounds() const {
    return stream_k ? double(tiles) / double(clusters) : double(ceil_div(tiles, clusters));
  }
};

// Within a single round no epilogue is hidden: there the narrow tiles win only by their width
// and by filling more SMs, and where they cut C's n columns into more tiles than the wide ones,
// each extra column of tiles reads A's m rows again while every tile runs at once. Measured on
// the H200 (2026-11-29, NN, beside the wide schedule's run of 2026-11-24): 8192 x 256 x 8192
// ran 17% slower overlapped (A read twice); 128 x 8192 x 8192 and 256 x 8192 x 8192 ran 3%
// faster (13% in TN form), A's few rows read 40 times instead of 32 beside B read once. So a
// single round takes the narrow tiles only where A's extra reads are at most a quarter of the
// wide plan's reads of A and B (K cancels: every read is of whole K).
inline bool overlapped_rereads_cheap(std::int64_t m, std::int64_t n) {
  const double wide_cols = double(ceil_div(n, std::int64_t(kI8WideColumns)));
  const double narrow_cols = double(ceil_div(n, std::int64_t(kI8OverlapColumns)));
  const double row_tiles = double(ceil_div(m, std::int64_t(kI8TileRows)));
  const double wide_reads = wide_cols * double(m) + row_tiles * double(n);  // times K bytes
  return 4 * (narrow_cols - wide_cols) * double(m) <= wide_reads;
}

inline bool prefer_i8_overlapped(const I8Rounds& wide, const I8Rounds& overlapped, std::int64_t m, std::int64_t n,
                                 std::int64_t k_tiles) {
  if (i8_overlap_spread(k_tiles) == 0) return false;
  if (overlapped.rounds() <= 1 && !overlapped_rereads_cheap(m, n)) return false;
  const double k = double(k_tiles);
  const double wide_cost = wide.rounds() * kI8WideColumns * (k + kI8EpilogueBlocks);
  const double overlapped_cost = overlapped.rounds() * kI8OverlapColumns * k + kI8OverlapColumns * kI8EpilogueBlocks;
  return overlapped_cost < wide_cost;
}

}  // namespace gemmkit::cuda

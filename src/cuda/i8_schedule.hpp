// Which schedule rung 24's int32 product runs (24_wgmma_i8.cuh), as plain arithmetic the
// host tests can check:
//   - wide: 128 x 256 cluster-half tiles; both consumers stop multiplying between tiles to
//     write C (about 3.5 K-blocks' time per tile on the H200), and a half-empty last round
//     is shared out by stream-K;
//   - overlapped: 128 x 208 tiles, each tile's C written under the next tile's first
//     13 * spread K-blocks, so only the last tile's epilogue costs time; whole tiles only.
// Narrower tiles can cost a round, so the two are compared by their rounds: time ~ rounds
// x tile width x K-blocks, plus the epilogues that are not hidden.
#pragma once

#include <cstdint>

#include "core/ceil_div.hpp"

namespace gemmkit::cuda {

inline constexpr int kI8WideColumns = 256, kI8OverlapColumns = 208;
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

inline bool prefer_i8_overlapped(const I8Rounds& wide, const I8Rounds& overlapped, std::int64_t k_tiles) {
  if (i8_overlap_spread(k_tiles) == 0) return false;
  const double k = double(k_tiles);
  const double wide_cost = wide.rounds() * kI8WideColumns * (k + kI8EpilogueBlocks);
  const double overlapped_cost = overlapped.rounds() * kI8OverlapColumns * k + kI8OverlapColumns * kI8EpilogueBlocks;
  return overlapped_cost < wide_cost;
}

}  // namespace gemmkit::cuda

// How stream-K divides a GEMM among the blocks of one launch (rung 15, and rungs 19 and 24's
// persistent clusters): plain integer arithmetic that the launchers, the kernels and the CI
// tests share (it compiles without nvcc).
//
// A data-parallel grid gives each block one (BM, BN) tile of C. When the tile count is not
// a multiple of the blocks the GPU holds at once, the last wave runs partly empty: on an
// H200, 4096^3 in 128x256 tiles is 512 tiles on 132 SMs, 3.88 waves, so while the fourth
// wave runs 12% of the chip idles. Stream-K cuts that last, partial wave finer: its unit
// is one K tile of one output tile (an "iteration"), and its iterations are dealt out
// evenly to one full wave of blocks, so every SM finishes at about the same time.
//
// Work order. Tiles [0, dp_tiles) are data-parallel, one block each, whole: those are the
// full waves, and the hardware hands them to SMs as SMs free up. The partial wave's tiles
// [dp_tiles, tiles) are the stream-K part: their iterations, numbered
// (tile - dp_tiles) * k_tiles + kt, are cut into sk_blocks contiguous ranges, one per
// block, for the blocks numbered after the data-parallel ones.
//
// Fix-up. A range can cross tile boundaries, so a tile can be shared by several blocks,
// each summing part of its K range. The block holding the tile's last K iteration (the
// owner) adds the others' partial sums and writes C; the others publish their sums to a
// workspace slot of their own and raise a flag. Contributors always have lower numbers than
// the owner, and each block walks its range from its last tile back to its first: it
// publishes its partial tile first and finishes, as an owner, last. Blocks take their
// numbers from an atomic counter in the order they start, so a block only ever waits for
// blocks that are already running: no deadlock, whatever the hardware's block order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/host_device.hpp"

namespace gemmkit::cuda {

// One block's part of one tile: K tiles [kt_begin, kt_end) of output tile `tile`.
struct StreamKSegment {
  int tile;
  int kt_begin, kt_end;
};

struct StreamKSchedule {
  int tiles = 0;              // output tiles, in grouped order
  int k_tiles = 0;            // K tiles (iterations) per output tile
  int dp_tiles = 0;           // tiles [0, dp_tiles) are whole, one block each
  int sk_blocks = 0;          // blocks that share tiles [dp_tiles, tiles) by iterations
  std::int64_t sk_iters = 0;  // (tiles - dp_tiles) * k_tiles

  GEMMKIT_HOST_DEVICE int blocks() const { return dp_tiles + sk_blocks; }

  // Stream-K block c (0 <= c < sk_blocks) has iterations [sk_begin(c), sk_begin(c + 1));
  // sk_begin(sk_blocks) is sk_iters. The schedule never leaves a range empty.
  GEMMKIT_HOST_DEVICE std::int64_t sk_begin(int c) const { return sk_iters * c / sk_blocks; }

  // Stream-K block c's part of `tile` (empty, kt_begin == kt_end, if it has none).
  GEMMKIT_HOST_DEVICE StreamKSegment segment(int c, int tile) const {
    const std::int64_t start = std::int64_t(tile - dp_tiles) * k_tiles;
    const std::int64_t lo = sk_begin(c) > start ? sk_begin(c) : start;
    const std::int64_t end = sk_begin(c + 1), tile_end = start + k_tiles;
    const std::int64_t hi = end < tile_end ? end : tile_end;
    return {tile, int(lo - start), int(hi > lo ? hi - start : lo - start)};
  }
  // The tiles stream-K block c touches: it works from the last to the first.
  GEMMKIT_HOST_DEVICE int first_sk_tile(int c) const {
    return dp_tiles + int(sk_begin(c) / k_tiles);
  }
  GEMMKIT_HOST_DEVICE int last_sk_tile(int c) const {
    return dp_tiles + int((sk_begin(c + 1) - 1) / k_tiles);
  }
  // Calls f(StreamKSegment) for each of stream-K block c's parts of a tile, from its last
  // tile back to its first (nothing for an empty range).
  // The same parts segment() gives, with the range's ends computed once.
  template <class F>
  GEMMKIT_HOST_DEVICE void for_each_segment(int c, F&& f) const {
    const std::int64_t begin = sk_begin(c), end = sk_begin(c + 1);
    if (begin == end) return;
    for (std::int64_t st = (end - 1) / k_tiles; st >= begin / k_tiles; --st) {
      const std::int64_t base = st * k_tiles;  // the tile's first stream-K iteration
      const std::int64_t lo = begin > base ? begin : base, hi = end < base + k_tiles ? end : base + k_tiles;
      f(StreamKSegment{dp_tiles + int(st), int(lo - base), int(hi - base)});
    }
  }
  // The stream-K block whose range holds iteration `iter` (0 <= iter < sk_iters): the last c
  // with sk_begin(c) <= iter.
  GEMMKIT_HOST_DEVICE int sk_block_of(std::int64_t iter) const {
    return int(((iter + 1) * sk_blocks - 1) / sk_iters);
  }
  // The first stream-K block with a part of stream-K tile `tile`: the blocks from it up to
  // the tile's owner (the block with its last iteration) share the tile.
  GEMMKIT_HOST_DEVICE int first_sk_block(int tile) const {
    return sk_block_of(std::int64_t(tile - dp_tiles) * k_tiles);
  }
};

// The schedule whose tiles [dp_tiles, dp_tiles + sk_tiles) are shared by iterations among
// sk_blocks blocks, the tiles before them going whole: what make_stream_k_schedule decides
// for rung 15, and rung 19 (19_wgmma_ws.cuh) for its persistent clusters, which take the
// whole tiles in rounds and then one stream-K range each.
GEMMKIT_HOST_DEVICE inline StreamKSchedule stream_k_split(int dp_tiles, int sk_tiles, int k_tiles, int sk_blocks) {
  StreamKSchedule s;
  s.tiles = dp_tiles + sk_tiles;
  s.k_tiles = k_tiles;
  s.dp_tiles = dp_tiles;
  s.sk_blocks = sk_blocks;
  s.sk_iters = std::int64_t(sk_tiles) * k_tiles;
  return s;
}

// resident: blocks the device runs at once (SMs x blocks per SM); min_iters: the fewest K
// iterations worth giving a stream-K block (below that its pipeline start and fix-up cost
// more than the parallelism gains). Tiles of fewer than 4 * min_iters K tiles are never
// split: there the round trip of the partial sums costs more than the idle tail (measured
// at 1024x8192x256 on the H200; docs/notes/ladder-log.md, rung 15).
inline StreamKSchedule make_stream_k_schedule(std::int64_t tiles, std::int64_t k_tiles,
                                              int resident, int min_iters) {
  StreamKSchedule s;
  s.tiles = int(tiles);
  s.k_tiles = int(k_tiles);
  const std::int64_t partial_wave = tiles % resident;  // all of it when under one wave
  if (k_tiles < 4 * std::int64_t(min_iters) || partial_wave == 0) {
    // Whole waves (nothing to even out), or too little K to split: plain data-parallel.
    s.dp_tiles = int(tiles);
    return s;
  }
  // One wave of blocks, but none with fewer than min_iters iterations (which leaves at
  // least 4 blocks per tile, since k_tiles >= 4 * min_iters).
  const std::int64_t sk_iters = partial_wave * k_tiles;
  return stream_k_split(int(tiles - partial_wave), int(partial_wave), int(k_tiles),
                        int(std::min<std::int64_t>(resident, sk_iters / std::max(min_iters, 1))));
}

}  // namespace gemmkit::cuda

// Rung 21, rung 19 tuned per shape. Rung 19's one configuration, 128 x 256 tiles in
// clusters of two, is right for large squares and wrong elsewhere: 1024^3 has 32 of its
// tiles for 132 SMs (56% of cuBLAS), 128 x 8192 x 8192 leaves the second block of every
// cluster an empty tile (53%), and a long K with a small C (1024 x 1024 x 8192: 36%;
// 96 x 96 x 2^20: 1%) has a handful of tiles that each run the whole of K on one SM while
// the others idle (bf16, bench/results/2026-11-24_h200_7eb49c8/). Here, the same warp-specialised persistent kernel (19_wgmma_ws.cuh, its
// configuration made a template):
//   - Narrower tiles: 128 x 128 (two consumers of m64n128), 64 x 256 and 64 x 128 (one
//     consumer warpgroup, which then needs no register reallocation). More and smaller
//     tiles fill the SMs on small outputs; tiles of 64 rows pair up as a cluster over
//     M = 128 and share B's multicast, where skinny products stream their big operand.
//     Smaller tiles read A and B more often per product, so they lose once the SMs are
//     full: they are chosen per shape. The stages they free go into a deeper pipeline.
//   - Split-K: each tile's K-blocks are cut into slices, each a work unit of its own over
//     the persistent grid, so a few tiles of long K keep every SM busy. Each slice writes
//     its FP32 partial sums to the workspace, makes them visible (threadfence) and counts
//     itself done on the tile's counter (atomicAdd); the slice that counts last reads all
//     slices back in slice order, its own included, and runs the epilogue. The order of
//     the sums is fixed, so the result has the same bits every run whichever slice comes
//     last; no unit ever waits for another, so no schedule can deadlock. The counters are
//     zeroed on the stream before each launch. A separate reduction kernel would read the
//     same bytes but add a launch and a pass over C; here the last slice adds while the
//     other SMs already run the next units. Without a split, rung 19's stream-K of a
//     half-empty last round still applies.
//   - The choice per shape (src/ops/gemm/cuda/hopper/hopper_tune_table.hpp): a cost model over rounds of
//     work units, with named constants tuned from the H200 runs of every configuration,
//     each registered on its own (cuda_wgmma_<tile>) so the benchmark measures what the
//     table chooses from.
// Measured: see docs/ladder.md.
#pragma once

#include "ops/gemm/cuda/hopper/19_wgmma_ws.cuh"

namespace gemmkit::cuda::kernels {

// A tuned configuration: TileN columns, Consumers warpgroups of 64 rows, clusters of two
// along M, 16 KiB of epilogue buffer per consumer, split-K compiled in (and nothing else:
// NoSplitK below is the same tile for the plans that do not split). Stages: as many as
// the shared memory holds (stage bytes (64 * Consumers + TileN) * 128).
template <class T, int TileN, int Consumers, int Stages>
using WgmmaTunedConfig = WgmmaWsConfig<T, 2, Stages, 16 * 1024, 8, TileN, Consumers, true>;

template <class T> using Wgmma128x256 = WgmmaTunedConfig<T, 256, 2, 4>;  // 48 KiB stages
template <class T> using Wgmma128x128 = WgmmaTunedConfig<T, 128, 2, 6>;  // 32 KiB stages
template <class T> using Wgmma64x256 = WgmmaTunedConfig<T, 256, 1, 5>;   // 40 KiB stages
template <class T> using Wgmma64x128 = WgmmaTunedConfig<T, 128, 1, 8>;   // 24 KiB stages

// A configuration without split-K: what a plan that does not split K runs (rung 19's
// kernel in the tile, with stream-K for a ragged last round).
template <class Cfg>
struct NoSplitKOf;
template <class T, int ClusterM, int Stages, int EpilogueBytes, int GroupRows, int TileN, int Consumers, bool SplitK>
struct NoSplitKOf<WgmmaWsConfig<T, ClusterM, Stages, EpilogueBytes, GroupRows, TileN, Consumers, SplitK>> {
  using type = WgmmaWsConfig<T, ClusterM, Stages, EpilogueBytes, GroupRows, TileN, Consumers, false>;
};
template <class Cfg>
using NoSplitK = typename NoSplitKOf<Cfg>::type;

}  // namespace gemmkit::cuda::kernels

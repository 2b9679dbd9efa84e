// Rung 14, rung 13 with the tile configuration picked per shape from a table tuned on the
// H200. There is no kernel of its own: rung 13's cp_async_kernel runs with one of the three
// configurations below, picked per problem by choose_tuned_config
// (src/ops/gemm/cuda/simt/autotune_table.hpp, host code, so that the host tests check the choice), which
// also says which shapes each one won. Every configuration is an entry of its own as well
// (cuda_tuned_128x256, cuda_tuned_64x128, cuda_tuned_64x64), so the GPU tests check each
// one and the benchmark shows what the table chose from. Rungs 15 (stream-K) and 23
// (split-K) run the same configurations.
//
// The configurations of rungs 12-15 in one place (BM x BN x BK, warp tile, warp
// iterations, stages, blocks per SM the registers aim at), so that every launcher runs
// exactly the ones the table names.
#pragma once

#include "ops/gemm/cuda/simt/12_warptile.cuh"

namespace gemmkit::cuda {

using kernels::WarpTileConfig;

// Rung 12: 128 x 128 block tile, 8 warps of 64 x 32, 8 x 8 outputs per thread, BK 16.
using StagedConfig = WarpTileConfig<128, 128, 16, 64, 32, 2, 2, 2, 2>;
// Rung 13's configuration: 8 warps of 64 x 32, 8 x 8 per thread, 3 stages.
using Tile128x128 = WarpTileConfig<128, 128, 16, 64, 32, 2, 2, 3, 2>;
// The configurations rungs 14 and 15 choose among.
// 8 warps of 64 x 64, 8 x 16 per thread: more reuse per shared load, one block per SM.
using Tile128x256 = WarpTileConfig<128, 256, 16, 64, 64, 2, 4, 3, 1>;
// 4 warps of 32 x 64, 8 x 8 per thread, 4 stages: twice the blocks for mid-size grids.
using Tile64x128 = WarpTileConfig<64, 128, 16, 32, 64, 2, 2, 4, 4>;
// 4 warps of 32 x 32, 4 x 8 per thread: many small blocks for small or skinny problems.
using Tile64x64 = WarpTileConfig<64, 64, 16, 32, 32, 1, 2, 4, 4>;

}  // namespace gemmkit::cuda

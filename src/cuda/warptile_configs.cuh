// The tile configurations of rungs 12-15 (BM x BN x BK, warp tile, warp iterations,
// stages, blocks per SM the registers aim at), shared by the rung 12-14 and rung 15
// launchers so both run exactly the configurations the autotune table names.
#pragma once

#include "cuda/kernels/gemm/simt/12_warptile.cuh"

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

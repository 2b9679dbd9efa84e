// The autotuned rung's choice of tile configuration per problem shape: a small table,
// written from `gemmkit bench` runs of the cuda_tuned_* entries on the H200 (the run it
// came from is named below). Plain host code.
#pragma once

#include <cstdint>

#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

enum class TunedConfig { tile_128x256, tile_64x128, tile_64x64 };

// Measured on the H200 (bench/results/2026-11-22_h200_5e2f756/, 132 SMs):
// - 64x128 (16 warps per SM) is best once there are many waves of blocks: 8192^3 runs at
//   92% of cuBLAS against 91% for 128x256;
// - 128x256 (8x16 per thread, 8 warps per SM) is best from about one wave of its blocks:
//   2048^3, 4000^3, 8192x1024x8192 and 1024x8192x256;
// - below that, smaller tiles keep every SM busy: 64x128 down to ~100 blocks (1024^3:
//   99%), then 64x64.
// The 128x128 tile of rung 13 lost to one of these on every shape measured.
// A strided batch runs its matrices' blocks side by side, so it counts them all.
inline TunedConfig choose_tuned_config(const GemmProblem& p) {
  const auto blocks = [&](std::int64_t bm, std::int64_t bn) {
    return ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn) * p.batch;
  };
  if (blocks(64, 128) >= 4096) return TunedConfig::tile_64x128;
  if (blocks(128, 256) >= 120) return TunedConfig::tile_128x256;
  if (blocks(64, 128) >= 96) return TunedConfig::tile_64x128;
  return TunedConfig::tile_64x64;
}

}  // namespace gemmkit::cuda

// The autotuned rung's choice of tile configuration per problem shape: a small table,
// written from `gemmkit bench` runs of the cuda_tuned_* entries on the H200 (see
// docs/ladder.md for the run it came from). Plain host code.
#pragma once

#include <cstdint>

#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

enum class TunedConfig { tile_128x128, tile_128x256, tile_256x128, tile_64x128, tile_64x64,
                         tile_128x128_k32, tile_256x128_k32 };

// Picks by how many blocks of each candidate tile the problem makes: big tiles reuse
// more per shared load but leave SMs idle when there are too few of them.
inline TunedConfig choose_tuned_config(const GemmProblem& p) {
  const auto blocks = [&](std::int64_t bm, std::int64_t bn) {
    return ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
  };
  constexpr std::int64_t kSms = 132;  // H200; the table was tuned there
  if (blocks(128, 256) >= 4 * kSms) return p.n >= p.m ? TunedConfig::tile_128x256
                                                      : TunedConfig::tile_256x128;
  if (blocks(128, 128) >= 4 * kSms) return TunedConfig::tile_128x128;
  if (blocks(64, 128) >= 2 * kSms) return TunedConfig::tile_64x128;
  return TunedConfig::tile_64x64;
}

}  // namespace gemmkit::cuda

// Launchers and registry entries for rungs 12-14: warp tiling, the cp.async pipeline, and
// the per-shape choice among tuned cp.async configurations. Compiled here, ahead of time:
// NVRTC's code for these kernels ran 3-17% slower than nvcc's on the H200 (CUDA 13.0,
// bench/results/2026-12-04_h200_28fc692), and rung 14 is what auto runs for f32.
#include <algorithm>
#include <functional>
#include <string>

#include "ops/gemm/cuda/simt/autotune_table.hpp"
#include "ops/gemm/cuda/simt/13_cp_async.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "ops/gemm/cuda/simt/14_autotuned.cuh"

namespace gemmkit::cuda {
namespace {

using kernels::GemmArgs;

// The grid's z holds the batch up to this many matrices; the blocks of a larger batch step
// through it (the hardware limit is 65535).
constexpr std::int64_t kMaxGridZ = 65535;

// Runs configuration Cfg of the staged (rung 12) or cp.async (rungs 13-14) kernel, a strided
// batch in one launch (blockIdx.z picks the matrix).
// One block per (BM, BN) tile of C along x, the batch along z.
template <class Cfg>
Geometry warptile_geometry(const GemmProblem& p) {
  return {dim3(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN)), 1,
               unsigned(std::min(p.batch, kMaxGridZ))),
          dim3(Cfg::kThreads), std::size_t(Cfg::kSmemBytes)};
}

// Where block b's tile lies (the kernels' grouped_tile: 8 tile rows at a time down each
// column strip) and the 4x4 pieces lane t of it writes.
template <class Cfg>
std::vector<CElements> warptile_elements(const GemmProblem& p, Dim3 b, Dim3 t) {
  const std::int64_t m_tiles = ceil_div(p.m, Cfg::BM), n_tiles = ceil_div(p.n, Cfg::BN);
  const std::int64_t group = 8 * n_tiles, first_m = (b.x / group) * 8;
  const std::int64_t rows_in_group = std::min<std::int64_t>(m_tiles - first_m, 8), in_group = b.x % group;
  const std::int64_t m0 = (first_m + in_group % rows_in_group) * Cfg::BM, n0 = (in_group / rows_in_group) * Cfg::BN;
  const std::int64_t warp = t.x / 32, lane = t.x % 32;
  const std::int64_t m = m0 + (warp / (Cfg::BN / Cfg::WN)) * Cfg::WM + (lane / Cfg::LN) * 4;
  const std::int64_t n = n0 + (warp % (Cfg::BN / Cfg::WN)) * Cfg::WN + (lane % Cfg::LN) * 4;
  std::vector<CElements> out;
  for (int i = 0; i < Cfg::WMITER; ++i)
    for (int j = 0; j < Cfg::WNITER; ++j)
      add_clipped(out, p, m + i * Cfg::LM * 4, 4, 1, n + j * Cfg::LN * 4, 4, 1);
  return out;
}

template <class Cfg>
std::string warptile_text() {
  const auto s = [](int v) { return std::to_string(v); };
  return "block b (blockIdx.x) takes one " + s(Cfg::BM) + "x" + s(Cfg::BN) + " tile, walking 8 tile rows at a time "
         "down each column strip (tile row = 8 * (b / (8 * n_tiles)) + (b % (8 * n_tiles)) % rows_in_group, tile "
         "column = (b % (8 * n_tiles)) / rows_in_group); blockIdx.z is the matrix of a batch. Its " +
         s(Cfg::kThreads / 32) + " warps each take a " + s(Cfg::WM) + "x" + s(Cfg::WN) + " warp tile, and lane l " +
         "of a warp writes " + s(Cfg::WMITER) + "x" + s(Cfg::WNITER) + " pieces of 4x4: rows (l / " + s(Cfg::LN) +
         ") * 4 + i * " + s(Cfg::LM * 4) + " + 0..3, columns (l % " + s(Cfg::LN) + ") * 4 + j * " + s(Cfg::LN * 4) + " + 0..3 of the warp tile";
}

// Configuration Cfg of the staged (rung 12) or cp.async (rungs 13-14) kernel, a strided
// batch in one launch (blockIdx.z picks the matrix).
template <class Cfg, bool Staged>
auto warptile() {
  return [](const GemmProblem& p, const auto& emit) {
  const kernels::BatchStrides batch{p.stride_a, p.stride_b, p.stride_c, p.batch};
  with_transposes_and_vectors(p, [&](auto ta, auto tb, auto va, auto vb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    constexpr bool VA = decltype(va)::value, VB = decltype(vb)::value;
    const auto launch = [&](auto kernel) {
      emit.template kernel<decltype(kernel)::value>(warptile_geometry<Cfg>(p), [&] {
        return Described{"the product", warptile_text<Cfg>(), [p](Dim3 b, Dim3 t) { return warptile_elements<Cfg>(p, b, t); }};
      }, gemm_args<float>(p), batch);
    };
    if constexpr (Staged) launch(Instance<kernels::warptile_kernel<Cfg, TA, TB, VA, VB>>{});
    else launch(Instance<kernels::cp_async_kernel<Cfg, TA, TB, VA, VB>>{});
  });
  };
}

template <class Cfg>
std::optional<std::string> fits(const GemmProblem& p) {
  // One-dimensional grid of tiles.
  return fits_grid(p, ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN), 1);
}

struct TunedKernel {
  TunedConfig id;
  const char* name;
  const char* summary;
  std::optional<std::string> (*fits)(const GemmProblem&);
  std::function<void(const GemmProblem&, const KernelLaunch&)> run;
  std::function<std::vector<LaunchPlan>(const GemmProblem&, const LaunchQueries&)> plans;
};

const TunedKernel kTuned[] = {
    {TunedConfig::tile_128x256, "cuda_tuned_128x256",
     "cp.async, 128x256x16 block, 64x64 warps, 8x16 per thread, 3 stages", fits<Tile128x256>,
     runs(warptile<Tile128x256, false>()), plans(warptile<Tile128x256, false>())},
    {TunedConfig::tile_64x128, "cuda_tuned_64x128",
     "cp.async, 64x128x16 block, 32x64 warps, 8x8 per thread, 4 stages", fits<Tile64x128>,
     runs(warptile<Tile64x128, false>()), plans(warptile<Tile64x128, false>())},
    {TunedConfig::tile_64x64, "cuda_tuned_64x64",
     "cp.async, 64x64x16 block, 32x32 warps, 4x8 per thread, 4 stages", fits<Tile64x64>,
     runs(warptile<Tile64x64, false>()), plans(warptile<Tile64x64, false>())},
};

const TunedKernel& tuned(TunedConfig id) {
  for (const TunedKernel& t : kTuned)
    if (t.id == id) return t;
  fail(ErrorCategory::internal, "autotune table names an unknown configuration");
}

}  // namespace

void run_tuned_config(TunedConfig config, const GemmProblem& p, const KernelLaunch& l) {
  tuned(config).run(p, l);
}

std::vector<LaunchPlan> tuned_config_plans(TunedConfig config, const GemmProblem& p, const LaunchQueries& q) {
  return tuned(config).plans(p, q);
}

namespace {
template <class Cfg>
constexpr auto kOccupancyKernel = kernels::cp_async_kernel<Cfg, false, false, false, false>;

template <class Cfg>
int config_blocks_per_sm(const Context& ctx) {
  return std::max(blocks_per_sm<kOccupancyKernel<Cfg>>(ctx, warptile_geometry<Cfg>(GemmProblem{})), 1);
}

template <class Cfg>
int config_blocks_per_sm(const LaunchQueries& q) {
  return std::max(q.blocks_per_sm(plan_of<kOccupancyKernel<Cfg>>(warptile_geometry<Cfg>(GemmProblem{}), "", "")), 1);
}

// Calls f(Cfg{}) with the configuration of `config`.
template <class F>
int with_tuned_config(TunedConfig config, F&& f) {
  switch (config) {
    case TunedConfig::tile_128x256: return f(Tile128x256{});
    case TunedConfig::tile_64x128: return f(Tile64x128{});
    case TunedConfig::tile_64x64: return f(Tile64x64{});
  }
  fail(ErrorCategory::internal, "unknown tuned configuration");
}
}  // namespace

int tuned_config_blocks_per_sm(TunedConfig config, const LaunchQueries& q) {
  return with_tuned_config(config, [&](auto cfg) { return config_blocks_per_sm<decltype(cfg)>(q); });
}

int tuned_config_blocks_per_sm(TunedConfig config, const Context& ctx) {
  return with_tuned_config(config, [&](auto cfg) { return config_blocks_per_sm<decltype(cfg)>(ctx); });
}

void register_warptile_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_warptile", .backend = Backend::cuda, .rung = 12, .summary = "warp tiling",
                 .dtypes = {DType::f32}, .min_compute_capability = 50},
                {.precondition = fits<StagedConfig>, .run = runs(warptile<StagedConfig, true>()),
                 .launches = plans(warptile<StagedConfig, true>())},
                {.batched = true}});
  registry.add({{.name = "cuda_cp_async", .backend = Backend::cuda, .rung = 13,
                 .summary = "multi-stage cp.async pipeline", .dtypes = {DType::f32}, .min_compute_capability = 80},
                {.precondition = fits<Tile128x128>, .run = runs(warptile<Tile128x128, false>()),
                 .launches = plans(warptile<Tile128x128, false>())},
                {.batched = true}});
  registry.add({{.name = "cuda_autotuned", .backend = Backend::cuda, .rung = 14,
                 .summary = "rung 13 with the tile configuration picked per shape from a table tuned on the H200",
                 .dtypes = {DType::f32}, .min_compute_capability = 80, .auto_priority = 90},
                {.precondition = [](const GemmProblem& p) { return tuned(choose_tuned_config(p)).fits(p); },
                 .run = [](const GemmProblem& p, const KernelLaunch& l) { tuned(choose_tuned_config(p)).run(p, l); },
                 .launches = [](const GemmProblem& p, const LaunchQueries& q) { return tuned(choose_tuned_config(p)).plans(p, q); }},
                {.batched = true}});
  // Every configuration the table can pick is an entry of its own, so the GPU tests check
  // each one and the benchmark shows what the table chose from.
  for (const TunedKernel& t : kTuned)
    registry.add({{.name = t.name, .backend = Backend::cuda, .rung = 14, .summary = t.summary, .dtypes = {DType::f32},
                   .min_compute_capability = 80},
                  {.precondition = t.fits, .run = t.run, .launches = t.plans},
                  {.batched = true}});
}

}  // namespace gemmkit::cuda

// Launchers and registry entries for the portable tensor-core rungs (sm_80+): 16, WMMA;
// 17, mma.sync with ldmatrix and a cp.async pipeline.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "cuda/kernels/gemm/tensor/16_wmma.cuh"
#include "cuda/kernels/gemm/tensor/17_mma_sync.cuh"
#include "cuda/ladder.hpp"
#include "cuda/explain_launch.hpp"
#include "cuda/launch.hpp"
#include "cuda/tensor_args.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::TensorArgs;

// Rungs 16 and 17: one block per (BM, BN) tile of C along x, tiles in row order.
template <class Cfg>
Geometry tile_row_geometry(const GemmProblem& p) {
  return {dim3(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN))), dim3(Cfg::kThreads),
          std::size_t(Cfg::kSmemBytes)};
}

// What a thread of rungs 16-17 writes: its warp's (WM, WN) piece of the block's tile, held
// in tensor-core fragments.
template <class Cfg>
std::string warp_tile_text(const char* fragments) {
  const auto s = [](int v) { return std::to_string(v); };
  return "block b (blockIdx.x) takes the " + s(Cfg::BM) + "x" + s(Cfg::BN) + " tile at rows (b / n_tiles) * " +
         s(Cfg::BM) + ", columns (b % n_tiles) * " + s(Cfg::BN) + " (n_tiles = ceil(N / " + s(Cfg::BN) + ")); warp w " +
         "of its " + s(Cfg::kThreads / 32) + " takes the " + s(Cfg::WM) + "x" + s(Cfg::WN) + " piece at rows (w / " +
         s(Cfg::BN / Cfg::WN) + ") * " + s(Cfg::WM) + ", columns (w % " + s(Cfg::BN / Cfg::WN) + ") * " + s(Cfg::WN) +
         " of the tile; " + fragments;
}

template <class T>
void run_wmma(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = kernels::WmmaConfig<T>;
  const TensorArgs<T> g = tensor_args<T>(p);
  const Geometry geo = tile_row_geometry<Cfg>(p);
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    launch_with_smem<kernels::wmma_kernel<T, TA, TB>, Cfg::kSmemBytes>(l, geo.grid, geo.block, g);
  });
  check_launch("wmma_kernel");
}

// Calls f(std::integral_constant<kernel>) with the mma_sync_kernel instantiation for the
// problem's transposes and alignments: 16-byte copies need the operand's start and every row
// on 16-byte boundaries.
template <class T, class F>
void with_mma_sync_kernel(const GemmProblem& p, F&& f) {
  const auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % (16 / sizeof(T)) == 0;
  };
  const bool vec_a = aligned(p.a, p.lda), vec_b = aligned(p.b, p.ldb);
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    auto pick = [&](auto va, auto vb) {
      constexpr auto kernel = kernels::mma_sync_kernel<T, TA, TB, decltype(va)::value, decltype(vb)::value>;
      f(std::integral_constant<decltype(kernel), kernel>{});
    };
    if (vec_a && vec_b) pick(std::true_type{}, std::true_type{});
    else if (vec_a) pick(std::true_type{}, std::false_type{});
    else if (vec_b) pick(std::false_type{}, std::true_type{});
    else pick(std::false_type{}, std::false_type{});
  });
}

template <class T>
void run_mma_sync(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = kernels::MmaSyncConfig<T>;
  const TensorArgs<T> g = tensor_args<T>(p);
  const Geometry geo = tile_row_geometry<Cfg>(p);
  with_mma_sync_kernel<T>(p, [&](auto kernel) {
    launch_with_smem<decltype(kernel)::value, Cfg::kSmemBytes>(l, geo.grid, geo.block, g);
  });
  check_launch("mma_sync_kernel");
}

template <class T>
std::vector<LaunchPlan> wmma_plans(const GemmProblem& p) {
  using Cfg = kernels::WmmaConfig<T>;
  std::vector<LaunchPlan> out;
  with_transposes(p, [&](auto ta, auto tb) {
    out.push_back(plan_of<kernels::wmma_kernel<T, decltype(ta)::value, decltype(tb)::value>>(
        tile_row_geometry<Cfg>(p), "the product",
        warp_tile_text<Cfg>("WMMA fragments of 16x16 hold the sums in a layout the API leaves unspecified, so the "
                            "warp stores them to shared memory and its lanes write that piece of C row by row")));
  });
  return out;
}

template <class T>
std::vector<LaunchPlan> mma_sync_plans(const GemmProblem& p) {
  using Cfg = kernels::MmaSyncConfig<T>;
  std::vector<LaunchPlan> out;
  with_mma_sync_kernel<T>(p, [&](auto kernel) {
    out.push_back(plan_of<decltype(kernel)::value>(
        tile_row_geometry<Cfg>(p), "the product",
        warp_tile_text<Cfg>("the piece is 4 x 4 mma.sync tiles of 16x8, and lane l holds rows l / 4 and l / 4 + 8, "
                            "columns 2 * (l % 4) and 2 * (l % 4) + 1 of each")));
  });
  return out;
}

template <class T> struct WmmaRunner {
  static void run(const GemmProblem& p, const KernelLaunch& l) { run_wmma<T>(p, l); }
  static std::vector<LaunchPlan> plans(const GemmProblem& p, const LaunchQueries&) { return wmma_plans<T>(p); }
};
template <class T> struct MmaSyncRunner {
  static void run(const GemmProblem& p, const KernelLaunch& l) { run_mma_sync<T>(p, l); }
  static std::vector<LaunchPlan> plans(const GemmProblem& p, const LaunchQueries&) { return mma_sync_plans<T>(p); }
};
template <> struct MmaSyncRunner<float> {  // not registered for tf32
  static void run(const GemmProblem&, const KernelLaunch&) { fail(ErrorCategory::internal, "cuda_mma_sync has no tf32 path"); }
  static std::vector<LaunchPlan> plans(const GemmProblem&, const LaunchQueries&) { return {}; }
};

// One 1-D grid of 128 x 128 tiles.
std::optional<std::string> fits_128x128(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.m, 128) * ceil_div(p.n, 128), 1);
}

}  // namespace

void register_tensor_kernels(Registry& registry) {
  registry.add({.name = "cuda_wmma",
                .backend = Backend::cuda,
                .rung = 16,
                .role = KernelRole::ladder,
                .summary = "tensor cores through WMMA",
                .dtypes = {DType::bf16, DType::f16, DType::tf32},
                .min_compute_capability = 80,
                .auto_priority = 0,
                .half_inputs_f32_output = true,
                .precondition = fits_128x128,
                .run = by_tensor_dtype<WmmaRunner>,
                .launches = tensor_plans<WmmaRunner>});
  registry.add({.name = "cuda_mma_sync",
                .backend = Backend::cuda,
                .rung = 17,
                .role = KernelRole::ladder,
                .summary = "mma.sync with ldmatrix, swizzled shared memory and a cp.async pipeline",
                .dtypes = {DType::bf16, DType::f16},
                .min_compute_capability = 80,
                .auto_priority = 10,
                .half_inputs_f32_output = true,
                .precondition = fits_128x128,
                .run = by_tensor_dtype<MmaSyncRunner>,
                .launches = tensor_plans<MmaSyncRunner>});
}

}  // namespace gemmkit::cuda

// Launcher and registry entry for rung 20, skinny products (min(M, N) <= 64): the problem
// turned into rung 20's X (R x K, streamed) times W (K x S, small), the split of K across
// blocks, and its workspace.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "cuda/kernels/20_skinny.cuh"
#include "cuda/ladder.hpp"
#include "cuda/launch.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::SkinnyArgs;
using kernels::SkinnyConfig;

constexpr std::int64_t kMaxSkinny = 64;  // the widest short side rung 20 takes
// The fewest K tiles worth giving a block of a split K: below that the pipeline's prologue
// and the partial sums cost more than the extra blocks gain.
constexpr std::int64_t kMinKTilesPerSplit = 4;

// The problem as rung 20 sees it (row-major in, see SkinnyArgs): which side of C is short,
// and how X, W and C are stored.
struct Skinny {
  std::int64_t rows, cols;  // R, S
  bool xk, wk;
  const void* x;
  std::int64_t ldx;
  const void* w;
  std::int64_t ldw;
  std::int64_t c_row, c_col;
};

Skinny orient(const GemmProblem& p) {
  if (p.n <= kMaxSkinny && (p.n <= p.m || p.m > kMaxSkinny)) {
    // N short: X = op(A) (M x K), W = op(B) (K x N), C as it is.
    return {p.m, p.n, !p.trans_a, p.trans_b, p.a, p.lda, p.b, p.ldb, p.ldc, 1};
  }
  // M short: C^T (N x M) = op(B)^T op(A)^T. X(r, q) = op(B)(q, r): B stored (K, N) is X
  // stored (K, R); B^T stored (N, K) is X stored (R, K). W(q, s) = op(A)(s, q): A stored
  // (M, K) is W stored (S, K). C^T(r, s) = C(s, r).
  return {p.n, p.m, p.trans_b, !p.trans_a, p.b, p.ldb, p.a, p.lda, 1, p.ldc};
}

// A single column of W stored (K, 1) with ld 1 is the same memory as one row stored
// (1, K): read it so, in whole 16-byte chunks, rather than element by element (the new ld
// is unused: only row 0 is read).
Skinny normalized(Skinny s, int elem_bytes) {
  if (s.cols == 1 && !s.wk && s.ldw == 1) {
    s.wk = true;
    s.ldw = 16 / elem_bytes;
  }
  return s;
}

// W's columns in tiles of 8: 16, 32 or 64 columns (ldmatrix loads 16 at a time); the FMA
// path also takes 8, where the padding would cost it FMAs, not just bandwidth.
int column_tiles(std::int64_t cols, bool simt) {
  if (simt && cols <= 8) return 1;
  return cols <= 16 ? 2 : cols <= 32 ? 4 : 8;
}

// The most splits of a tile one cluster holds (the portable cluster size).
constexpr std::int64_t kMaxClusterSplits = 8;

struct SkinnyPlan {
  int tiles = 0, splits = 1, k_per_split = 0;
  bool in_cluster = false;  // the splits add up in a cluster (sm_90), not the workspace
  std::size_t partial_bytes = 0, bytes = 0;  // workspace: partial sums, then counters
};

// R / 128 tiles, each tile's K split in `splits` slices of whole K tiles (each of at least
// kMinKTilesPerSplit). The splits balance the SMs: the busiest runs ceil(blocks / SMs)
// blocks of per_split K tiles, so that is the cost to minimise (e.g. 96 tiles: 4 splits, 3
// blocks on every SM, rather than 2 splits, which leave half the SMs one block short).
// Near ties (2%) go to the most blocks that still run at once (memory parallelism), else
// to the fewest. With clusters (sm_90), at most 8 splits when that costs at most 5% more:
// the sums then need neither workspace nor the launch that zeroes its counters.
SkinnyPlan plan_skinny(const Skinny& s, std::int64_t k, int bk, int sn, int sms, int resident,
                       bool clusters) {
  SkinnyPlan plan;
  const std::int64_t tiles = ceil_div(s.rows, SkinnyConfig<float>::BR);
  const std::int64_t k_tiles = ceil_div(k, bk);
  struct Choice {
    std::int64_t splits, per_split;
    double cost;
  };
  // The slices of a split into at most `want` parts (no empty ones) and their cost.
  const auto choice = [&](std::int64_t want) {
    const std::int64_t per_split = std::max<std::int64_t>(ceil_div(k_tiles, want), 1);
    const std::int64_t splits = std::max<std::int64_t>(ceil_div(k_tiles, per_split), 1);
    return Choice{splits, per_split, double(ceil_div(tiles * splits, std::max(sms, 1)) * per_split)};
  };
  const std::int64_t most = std::clamp<std::int64_t>(k_tiles / kMinKTilesPerSplit, 1, 256);
  const auto best_cost = [&](std::int64_t limit) {
    double best = choice(1).cost;
    for (std::int64_t w = 2; w <= limit; ++w) best = std::min(best, choice(w).cost);
    return best;
  };
  std::int64_t limit = most;
  const double overall = best_cost(most);
  if (clusters && best_cost(std::min(most, kMaxClusterSplits)) <= 1.05 * overall)
    limit = std::min(most, kMaxClusterSplits);
  const double best = best_cost(limit);
  Choice chosen{0, 0, 0};
  for (std::int64_t w = 1; w <= limit; ++w) {  // the most splits that still run at once
    const Choice c = choice(w);
    if (c.cost <= 1.02 * best && tiles * c.splits <= resident && c.splits > chosen.splits) chosen = c;
  }
  if (chosen.splits == 0)
    for (std::int64_t w = limit; w >= 1; --w) {  // else the fewest
      const Choice c = choice(w);
      if (c.cost <= 1.02 * best) chosen = c;
    }
  const std::int64_t splits = k_tiles == 0 ? 1 : chosen.splits;
  const std::int64_t per_split = k_tiles == 0 ? 0 : chosen.per_split;
  plan.tiles = int(tiles);
  plan.splits = int(splits);
  plan.k_per_split = int(std::min<std::int64_t>(per_split * bk, INT_MAX));
  plan.in_cluster = clusters && splits > 1 && splits <= kMaxClusterSplits;
  if (plan.splits > 1 && !plan.in_cluster) {
    plan.partial_bytes = std::size_t(splits) * std::size_t(tiles) * SkinnyConfig<float>::BR *
                         std::size_t(8 * sn) * sizeof(float);
    plan.partial_bytes = (plan.partial_bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    plan.bytes = plan.partial_bytes + std::size_t(tiles) * sizeof(unsigned);
  }
  return plan;
}

// Blocks of rung 20 an SM runs at once, for sn column tiles. Every dtype's kernel has
// the same threads and shared memory (128 bytes of K per stage), so one of them is asked,
// once per context; the launcher and workspace_bytes plan with the same figure.
template <int SN>
int skinny_resident(const Context& ctx) {
  // SN = 1 exists for the FMA path only.
  using T = std::conditional_t<SN == 1, float, __nv_bfloat16>;
  constexpr auto kernel = kernels::skinny_kernel<T, SN == 1, true, true, SN, true, true>;
  constexpr int smem = SkinnyConfig<__nv_bfloat16>::template smem_bytes<SN>;
  return ctx.cached(&fact_key<ResidentBlocks, kernel>, [&] {
    allow_dynamic_smem<kernel, smem>(ctx);
    int per_sm = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel, SkinnyConfig<__nv_bfloat16>::kThreads, smem));
    if (per_sm < 1) fail(ErrorCategory::device, "skinny_kernel does not fit on a multiprocessor of this device");
    return per_sm;
  });
}

int skinny_resident(const Context& ctx, int sn) {
  switch (sn) {
    case 1: return skinny_resident<1>(ctx);
    case 2: return skinny_resident<2>(ctx);
    case 4: return skinny_resident<4>(ctx);
    default: return skinny_resident<8>(ctx);
  }
}

int element_bytes(DType dtype) { return dtype == DType::f32 || dtype == DType::tf32 ? 4 : 2; }

// Clusters on sm_90 (the sm_90a code has them; other devices run the sm_80 code).
bool cluster_device(const Context& ctx) { return ctx.compute_capability() / 10 == 9; }

SkinnyPlan plan_for(const GemmProblem& p, const Context& ctx) {
  const Skinny s = orient(p);
  const int sn = column_tiles(s.cols, p.dtype == DType::f32);
  const int sms = ctx.device_info().sm_count;
  return plan_skinny(s, p.k, 128 / element_bytes(p.dtype), sn, sms, sms * skinny_resident(ctx, sn),
                     cluster_device(ctx));
}

// Calls f(std::bool_constant...) for the stored orientations of X and W.
template <class F>
void with_orientations(const Skinny& s, F&& f) {
  using F0 = std::false_type;
  using T1 = std::true_type;
  if (s.xk && s.wk) f(T1{}, T1{});
  else if (s.xk) f(T1{}, F0{});
  else if (s.wk) f(F0{}, T1{});
  else f(F0{}, F0{});
}

// T: __nv_bfloat16, __half or float; Simt: f32 by FMAs (else tf32 when T is float).
template <class T, bool Simt>
void run_skinny(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = SkinnyConfig<T>;
  const Skinny s = normalized(orient(p), int(sizeof(T)));
  const int sn = column_tiles(s.cols, Simt);
  const int sms = l.context.device_info().sm_count;
  const SkinnyPlan plan = plan_skinny(s, p.k, Cfg::BK, sn, sms, sms * skinny_resident(l.context, sn),
                                     cluster_device(l.context));
  SkinnyArgs<T> g{int(s.rows), int(s.cols), int(p.k), float(p.alpha), float(p.beta),
                  static_cast<const T*>(s.x), s.ldx, static_cast<const T*>(s.w), s.ldw,
                  p.c, s.c_row, s.c_col,
                  p.c_dtype() == DType::f32 && p.dtype != DType::tf32 && !std::is_same_v<T, float>,
                  plan.splits, plan.k_per_split, plan.in_cluster, nullptr, nullptr};
  if (plan.splits > 1 && !plan.in_cluster) {
    if (l.workspace.bytes < plan.bytes)
      fail(ErrorCategory::internal, "cuda_skinny: the workspace is smaller than declared");
    auto* base = static_cast<unsigned char*>(l.workspace.data);
    g.partials = reinterpret_cast<float*>(base);
    g.counters = reinterpret_cast<unsigned*>(base + plan.partial_bytes);
    GEMMKIT_CUDA_CHECK(cudaMemsetAsync(g.counters, 0, std::size_t(plan.tiles) * sizeof(unsigned), l.stream));
  }
  // 16-byte copies need X's and W's starts and rows on 16-byte boundaries.
  const auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * std::int64_t(sizeof(T))) % 16 == 0;
  };
  // Three variants: both operands in 16-byte chunks, X only (W, being small, may go
  // element by element), or neither.
  const bool vec_x = aligned(s.x, s.ldx), vec_w = vec_x && aligned(s.w, s.ldw);
  const dim3 grid(unsigned(plan.tiles), unsigned(plan.splits));
  with_orientations(s, [&](auto xk, auto wk) {
    constexpr bool XK = decltype(xk)::value, WK = decltype(wk)::value;
    auto launch = [&](auto sn_c, auto vec_x_c, auto vec_w_c) {
      constexpr int SN = decltype(sn_c)::value;
      constexpr bool VecX = decltype(vec_x_c)::value, VecW = decltype(vec_w_c)::value;
      constexpr auto kernel = kernels::skinny_kernel<T, Simt, XK, WK, SN, VecX, VecW>;
      constexpr int smem = Cfg::template smem_bytes<SN>;
      if (!plan.in_cluster) {
        launch_with_smem<kernel, smem>(l, grid, dim3(Cfg::kThreads), g);
        return;
      }
      allow_dynamic_smem<kernel, smem>(l.context);
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute cluster{};
      config.gridDim = grid;
      config.blockDim = dim3(Cfg::kThreads);
      config.dynamicSmemBytes = smem;
      config.stream = l.stream;
      cluster.id = cudaLaunchAttributeClusterDimension;
      cluster.val.clusterDim.x = 1;
      cluster.val.clusterDim.y = unsigned(plan.splits);  // a tile's splits
      cluster.val.clusterDim.z = 1;
      config.attrs = &cluster;
      config.numAttrs = 1;
      GEMMKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, g));
    };
    auto with_vec = [&](auto sn_c) {
      if (vec_w) launch(sn_c, std::true_type{}, std::true_type{});
      else if (vec_x) launch(sn_c, std::true_type{}, std::false_type{});
      else launch(sn_c, std::false_type{}, std::false_type{});
    };
    if constexpr (Simt)
      if (sn == 1) return with_vec(std::integral_constant<int, 1>{});
    if (sn == 2) with_vec(std::integral_constant<int, 2>{});
    else if (sn == 4) with_vec(std::integral_constant<int, 4>{});
    else with_vec(std::integral_constant<int, 8>{});
  });
  check_launch("skinny_kernel");
}

void run_skinny_entry(const GemmProblem& p, const KernelLaunch& l) {
  switch (p.dtype) {
    case DType::bf16: run_skinny<__nv_bfloat16, false>(p, l); return;
    case DType::f16: run_skinny<__half, false>(p, l); return;
    case DType::tf32: run_skinny<float, false>(p, l); return;
    case DType::f32: run_skinny<float, true>(p, l); return;
    default: fail(ErrorCategory::internal, "cuda_skinny called with an unsupported dtype");
  }
}

std::optional<std::string> skinny_precondition(const GemmProblem& p) {
  if (std::min(p.m, p.n) > kMaxSkinny)
    return "cuda_skinny takes M or N <= " + std::to_string(kMaxSkinny) + "; this product is " +
           std::to_string(p.m) + "x" + std::to_string(p.n) + " (a tiled kernel runs it)";
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return "a dimension exceeds 2^31-1, the kernel's index range";
  return std::nullopt;
}

}  // namespace

void register_skinny_kernels(Registry& registry) {
  registry.add({.name = "cuda_skinny",
                .backend = Backend::cuda,
                .rung = 20,
                .role = KernelRole::ladder,
                .summary = "skinny products (M or N <= 64): the long operand streamed once "
                           "through a 4-stage cp.async pipeline into mma.sync (FMAs for f32), "
                           "K split across blocks with a deterministic reduction",
                .dtypes = {DType::bf16, DType::f16, DType::tf32, DType::f32},
                .min_compute_capability = 80,
                .auto_priority = 0,
                .half_inputs_f32_output = true,
                .precondition = skinny_precondition,
                .workspace_bytes = [](const GemmProblem& p, const Context& ctx) {
                  return p.m == 0 || p.n == 0 ? std::size_t(0) : plan_for(p, ctx).bytes;
                },
                .run = run_skinny_entry});
}

}  // namespace gemmkit::cuda

// Launcher and registry entry for rung 20, skinny products (min(M, N) <= 64): the problem
// turned into rung 20's X (R x K, streamed) times W (K x S, small), the split of K across
// blocks, and its workspace.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <functional>
#include <string>

#include "cuda/kernels/gemm/tensor/20_skinny.cuh"
#include "cuda/ladder.hpp"
#include "cuda/explain_launch.hpp"
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

// Rows of X per block and K per stage (elements) of one configuration.
struct Tiling {
  int br, bk;
};

template <class T, bool Simt>
Tiling tiling_of(int sn) {
  using Cfg = SkinnyConfig<T>;
  switch (sn) {
    case 1: return {Cfg::template BR<Simt, 1>, Cfg::template BK<Simt, 1>};
    case 2: return {Cfg::template BR<Simt, 2>, Cfg::template BK<Simt, 2>};
    case 4: return {Cfg::template BR<Simt, 4>, Cfg::template BK<Simt, 4>};
    default: return {Cfg::template BR<Simt, 8>, Cfg::template BK<Simt, 8>};
  }
}

struct SkinnyPlan {
  int tiles = 0, splits = 1, k_per_split = 0;
  bool in_cluster = false;  // the splits add up in a cluster (sm_90), not the workspace
  std::size_t partial_bytes = 0, bytes = 0;  // workspace: partial sums, then counters
};

// R / BR tiles, each tile's K split in `splits` slices of whole K tiles (each of at least
// kMinKTilesPerSplit). The splits balance the SMs: the busiest runs ceil(blocks / SMs)
// blocks of per_split K tiles, so that is the cost to minimise (e.g. 96 tiles: 4 splits, 3
// blocks on every SM, rather than 2 splits, which leave half the SMs one block short).
// Near ties (2%) go to the most blocks that still run at once (memory parallelism), else
// to the fewest. With clusters (sm_90), at most 8 splits when that costs at most 5% more:
// the sums then need neither workspace nor the launch that zeroes its counters.
// cluster_fit(c): clusters of c blocks the device runs at once (0: no clusters).
SkinnyPlan plan_skinny(const Skinny& s, std::int64_t k, Tiling tiling, int sn, int sms,
                       int resident, const std::function<int(int)>& cluster_fit) {
  const bool clusters = cluster_fit(2) > 0;
  SkinnyPlan plan;
  const int bk = tiling.bk;
  const std::int64_t tiles = ceil_div(s.rows, tiling.br);
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
  // At most two waves of blocks: the cost counts neither a block's start nor its partial
  // sums, and without this bound 32x12288x12288 took 48 splits of 4 K tiles (4608 blocks,
  // 75 MB of partial sums), measured far slower than 4 splits.
  const std::int64_t most = std::clamp<std::int64_t>(
      std::min(k_tiles / kMinKTilesPerSplit, 2 * std::int64_t(resident) / std::max<std::int64_t>(tiles, 1)),
      1, 256);
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
  // Clusters only when every tile's cluster runs at once: clusters are placed within a GPC,
  // and where fewer fit than blocks would, the kernel would run in two rounds (a likely
  // cause of bf16 8192x64x8192 falling far behind cuBLAS on the H200 when clusters came
  // in).
  plan.in_cluster = clusters && splits > 1 && splits <= kMaxClusterSplits &&
                    tiles <= cluster_fit(int(splits));
  if (plan.splits > 1 && !plan.in_cluster) {
    plan.partial_bytes = std::size_t(splits) * std::size_t(tiles) * std::size_t(tiling.br) *
                         std::size_t(8 * sn) * sizeof(float);
    plan.partial_bytes = (plan.partial_bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    plan.bytes = plan.partial_bytes + std::size_t(tiles) * sizeof(unsigned);
  }
  return plan;
}

// Blocks of rung 20 an SM runs at once, for sn column tiles, on the FMA path (f32) or the
// tensor cores. Asked of the bf16 kernel for the tensor cores (tf32's has the same threads
// and shared memory), once per context; the launcher and workspace_bytes plan with the
// same figure.
template <int SN, bool Simt>
int skinny_resident(const Context& ctx) {
  using T = std::conditional_t<Simt, float, __nv_bfloat16>;
  constexpr auto kernel = kernels::skinny_kernel<T, Simt, true, true, SN, true, true>;
  constexpr int smem = SkinnyConfig<T>::template smem_bytes<Simt, SN>;
  return ctx.cached(&fact_key<ResidentBlocks, kernel>, [&] {
    allow_dynamic_smem<kernel, smem>(ctx);
    int per_sm = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kernel, SkinnyConfig<T>::kThreads, smem));
    if (per_sm < 1) fail(ErrorCategory::device, "skinny_kernel does not fit on a multiprocessor of this device");
    return per_sm;
  });
}

int skinny_resident(const Context& ctx, int sn, bool simt) {
  if (simt) {
    switch (sn) {
      case 1: return skinny_resident<1, true>(ctx);
      case 2: return skinny_resident<2, true>(ctx);
      case 4: return skinny_resident<4, true>(ctx);
      default: return skinny_resident<8, true>(ctx);
    }
  }
  switch (sn) {
    case 2: return skinny_resident<2, false>(ctx);
    case 4: return skinny_resident<4, false>(ctx);
    default: return skinny_resident<8, false>(ctx);
  }
}

// Clusters on sm_90 (the sm_90a code has them; other devices run the sm_80 code).
bool cluster_device(const Context& ctx) { return ctx.compute_capability() / 10 == 9; }

template <int C>
struct ClusterFit;  // Context::cached key: clusters of C blocks that run at once

// Clusters of C blocks (along y) of rung 20's kernel for sn column tiles the device runs at
// once, asked of the same kernel as skinny_resident, once per context.
template <int SN, bool Simt, int C>
int skinny_cluster_fit(const Context& ctx) {
  using T = std::conditional_t<Simt, float, __nv_bfloat16>;
  constexpr auto kernel = kernels::skinny_kernel<T, Simt, true, true, SN, true, true>;
  constexpr int smem = SkinnyConfig<T>::template smem_bytes<Simt, SN>;
  return ctx.cached(&fact_key<ClusterFit<C>, kernel>, [&] {
    allow_dynamic_smem<kernel, smem>(ctx);
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute cluster{};
    config.gridDim = dim3(1, C);
    config.blockDim = dim3(SkinnyConfig<T>::kThreads);
    config.dynamicSmemBytes = smem;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1;
    cluster.val.clusterDim.y = C;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    return clusters;
  });
}

template <int SN, bool Simt>
int skinny_cluster_fit(const Context& ctx, int c) {
  switch (c) {
    case 2: return skinny_cluster_fit<SN, Simt, 2>(ctx);
    case 3: return skinny_cluster_fit<SN, Simt, 3>(ctx);
    case 4: return skinny_cluster_fit<SN, Simt, 4>(ctx);
    case 5: return skinny_cluster_fit<SN, Simt, 5>(ctx);
    case 6: return skinny_cluster_fit<SN, Simt, 6>(ctx);
    case 7: return skinny_cluster_fit<SN, Simt, 7>(ctx);
    case 8: return skinny_cluster_fit<SN, Simt, 8>(ctx);
    default: return 0;
  }
}

// cluster_fit for plan_skinny: 0 where the device has no clusters for rung 20 or the entry
// does not use them.
std::function<int(int)> cluster_fit_of(const Context& ctx, int sn, bool simt, bool use) {
  if (!use || !cluster_device(ctx)) return [](int) { return 0; };
  return [&ctx, sn, simt](int c) {
    if (simt) {
      switch (sn) {
        case 1: return skinny_cluster_fit<1, true>(ctx, c);
        case 2: return skinny_cluster_fit<2, true>(ctx, c);
        case 4: return skinny_cluster_fit<4, true>(ctx, c);
        default: return skinny_cluster_fit<8, true>(ctx, c);
      }
    }
    switch (sn) {
      case 2: return skinny_cluster_fit<2, false>(ctx, c);
      case 4: return skinny_cluster_fit<4, false>(ctx, c);
      default: return skinny_cluster_fit<8, false>(ctx, c);
    }
  };
}

SkinnyPlan plan_for(const GemmProblem& p, const Context& ctx, bool clusters) {
  const Skinny s = orient(p);
  const bool simt = p.dtype == DType::f32;
  const int sn = column_tiles(s.cols, simt);
  const Tiling tiling = simt ? tiling_of<float, true>(sn)
                             : p.dtype == DType::tf32 ? tiling_of<float, false>(sn)
                                                      : tiling_of<__nv_bfloat16, false>(sn);
  const int sms = ctx.device_info().sm_count;
  return plan_skinny(s, p.k, tiling, sn, sms, sms * skinny_resident(ctx, sn, simt),
                     cluster_fit_of(ctx, sn, simt, clusters));
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

// Calls f(std::integral_constant<kernel>, std::integral_constant<int, SN>) with the
// instantiation of rung 20's kernel for the problem's orientations, column tiles and
// alignments. Three variants: both operands in 16-byte chunks, X only (W, being small, may
// go element by element), or neither.
template <class T, bool Simt, class F>
void with_skinny_kernel(const Skinny& s, int sn, F&& f) {
  // 16-byte copies need X's and W's starts and rows on 16-byte boundaries.
  const auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * std::int64_t(sizeof(T))) % 16 == 0;
  };
  const bool vec_x = aligned(s.x, s.ldx), vec_w = vec_x && aligned(s.w, s.ldw);
  with_orientations(s, [&](auto xk, auto wk) {
    constexpr bool XK = decltype(xk)::value, WK = decltype(wk)::value;
    auto pick = [&](auto sn_c, auto vec_x_c, auto vec_w_c) {
      constexpr int SN = decltype(sn_c)::value;
      constexpr auto kernel =
          kernels::skinny_kernel<T, Simt, XK, WK, SN, decltype(vec_x_c)::value, decltype(vec_w_c)::value>;
      f(std::integral_constant<decltype(kernel), kernel>{}, sn_c);
    };
    auto with_vec = [&](auto sn_c) {
      if (vec_w) pick(sn_c, std::true_type{}, std::true_type{});
      else if (vec_x) pick(sn_c, std::true_type{}, std::false_type{});
      else pick(sn_c, std::false_type{}, std::false_type{});
    };
    if constexpr (Simt)
      if (sn == 1) return with_vec(std::integral_constant<int, 1>{});
    if (sn == 2) with_vec(std::integral_constant<int, 2>{});
    else if (sn == 4) with_vec(std::integral_constant<int, 4>{});
    else with_vec(std::integral_constant<int, 8>{});
  });
}

// A launch of plan's (tiles, splits) blocks; clusters of a tile's splits along y when they
// add up in the cluster.
template <class T, bool Simt, int SN>
Geometry skinny_geometry(const SkinnyPlan& plan) {
  return {dim3(unsigned(plan.tiles), unsigned(plan.splits)), dim3(SkinnyConfig<T>::kThreads),
          std::size_t(SkinnyConfig<T>::template smem_bytes<Simt, SN>),
          plan.in_cluster ? dim3(1, unsigned(plan.splits)) : dim3(1, 1, 1)};
}

// T: __nv_bfloat16, __half or float; Simt: f32 by FMAs (else tf32 when T is float).
// clusters: split K adds up in clusters where they fit (cuda_skinny_cluster).
template <class T, bool Simt>
void run_skinny(const GemmProblem& p, const KernelLaunch& l, bool clusters) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = SkinnyConfig<T>;
  const Skinny s = normalized(orient(p), int(sizeof(T)));
  const int sn = column_tiles(s.cols, Simt);
  const int sms = l.context.device_info().sm_count;
  const SkinnyPlan plan = plan_skinny(s, p.k, tiling_of<T, Simt>(sn), sn, sms,
                                     sms * skinny_resident(l.context, sn, Simt),
                                     cluster_fit_of(l.context, sn, Simt, clusters));
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
  with_skinny_kernel<T, Simt>(s, sn, [&](auto kernel_c, auto sn_c) {
    constexpr auto kernel = decltype(kernel_c)::value;
    constexpr int smem = Cfg::template smem_bytes<Simt, decltype(sn_c)::value>;
    const Geometry geo = skinny_geometry<T, Simt, decltype(sn_c)::value>(plan);
    if (!plan.in_cluster) {
      launch_with_smem<kernel, smem>(l, geo.grid, geo.block, g);
      return;
    }
    allow_dynamic_smem<kernel, smem>(l.context);
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute cluster{};
    config.gridDim = geo.grid;
    config.blockDim = geo.block;
    config.dynamicSmemBytes = geo.smem;
    config.stream = l.stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = geo.cluster.x;
    cluster.val.clusterDim.y = geo.cluster.y;  // a tile's splits
    cluster.val.clusterDim.z = geo.cluster.z;
    config.attrs = &cluster;
    config.numAttrs = 1;
    GEMMKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, g));
  });
  check_launch("skinny_kernel");
}

// run_skinny's launch, planned with the residency `q` reports (asked of the kernel
// skinny_resident and skinny_cluster_fit ask about).
template <class T, bool Simt>
std::vector<LaunchPlan> skinny_plans(const GemmProblem& p, const LaunchQueries& q, bool clusters) {
  using R = std::conditional_t<Simt, float, __nv_bfloat16>;  // the kernel residency is asked of
  const Skinny s = normalized(orient(p), int(sizeof(T)));
  const int sn = column_tiles(s.cols, Simt);
  std::vector<LaunchPlan> out;
  with_skinny_kernel<T, Simt>(s, sn, [&](auto kernel_c, auto sn_c) {
    constexpr int SN = decltype(sn_c)::value;
    constexpr auto asked = kernels::skinny_kernel<R, Simt, true, true, SN, true, true>;
    const auto probe = [](dim3 cluster) {
      Geometry g = skinny_geometry<R, Simt, SN>(SkinnyPlan{1, 1});
      g.cluster = cluster;
      return plan_of<asked>(g, "", "");
    };
    const int per_sm = std::max(q.blocks_per_sm(probe(dim3(1, 1, 1))), 1);
    const bool cluster_ok = clusters && q.compute_capability / 10 == 9;
    const auto fit = [&](int c) { return cluster_ok && c >= 2 && c <= 8 ? q.active_clusters(probe(dim3(1, c))) : 0; };
    const SkinnyPlan plan = plan_skinny(s, p.k, tiling_of<T, Simt>(sn), sn, q.sm_count, q.sm_count * per_sm, fit);
    const Tiling t = tiling_of<T, Simt>(sn);
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    const bool n_short = s.c_col == 1;  // C as it is: the short side is N
    out.push_back(plan_of<decltype(kernel_c)::value>(
        skinny_geometry<T, Simt, SN>(plan), "the product",
        "the long side of C (" + std::string(n_short ? "M" : "N") + ") in tiles of " + n(t.br) + ": block (x, y) takes " +
            "rows x * " + n(t.br) + " + 0.." + n(t.br - 1) + " of the long side and all " + n(s.cols) +
            " short-side columns (in " + n(sn) + " tiles of 8), over K slice y of " + n(plan.splits) + " (" +
            n(plan.k_per_split) + " each); its 4 warps split the rows, " +
            (Simt ? "each lane summing its rows by FMAs" : "each warp's rows by mma.sync, lanes holding fragments") +
            (plan.splits == 1 ? ", and write C"
                              : plan.in_cluster ? "; the tile's " + n(plan.splits) + " blocks form a cluster and add their sums in it in order before writing C"
                                                : "; each block leaves its partial sums in the workspace and the last of a tile's blocks adds them in order and writes C")));
  });
  return out;
}

std::vector<LaunchPlan> skinny_entry_plans(const GemmProblem& p, const LaunchQueries& q, bool clusters) {
  switch (p.dtype) {
    case DType::bf16: return skinny_plans<__nv_bfloat16, false>(p, q, clusters);
    case DType::f16: return skinny_plans<__half, false>(p, q, clusters);
    case DType::tf32: return skinny_plans<float, false>(p, q, clusters);
    case DType::f32: return skinny_plans<float, true>(p, q, clusters);
    default: fail(ErrorCategory::internal, "cuda_skinny called with an unsupported dtype");
  }
}

void run_skinny_entry(const GemmProblem& p, const KernelLaunch& l, bool clusters) {
  switch (p.dtype) {
    case DType::bf16: run_skinny<__nv_bfloat16, false>(p, l, clusters); return;
    case DType::f16: run_skinny<__half, false>(p, l, clusters); return;
    case DType::tf32: run_skinny<float, false>(p, l, clusters); return;
    case DType::f32: run_skinny<float, true>(p, l, clusters); return;
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
  // Two entries, so that one benchmark run measures both ways of adding up a split K: the
  // workspace (cuda_skinny), or clusters where every tile's cluster runs at once
  // (cuda_skinny_cluster, sm_90; the same as cuda_skinny elsewhere). With clusters the
  // first H200 run lost to the workspace, before clusters were kept to where they fit.
  for (const bool clusters : {false, true}) {
    registry.add({.name = clusters ? "cuda_skinny_cluster" : "cuda_skinny",
                  .backend = Backend::cuda,
                  .rung = 20,
                  .role = KernelRole::ladder,
                  .summary = std::string("skinny products (GEMV-like): min(M, N) <= 64") +
                             (clusters ? "; its K splits added up in clusters (sm_90) where they fit" : ""),
                  .dtypes = {DType::bf16, DType::f16, DType::tf32, DType::f32},
                  .min_compute_capability = 80,
                  .auto_priority = 0,
                  .half_inputs_f32_output = true,
                  .precondition = skinny_precondition,
                  .workspace_bytes = [clusters](const GemmProblem& p, const Context& ctx) {
                    return p.m == 0 || p.n == 0 ? std::size_t(0) : plan_for(p, ctx, clusters).bytes;
                  },
                  .run = [clusters](const GemmProblem& p, const KernelLaunch& l) {
                    run_skinny_entry(p, l, clusters);
                  },
                  .launches = [clusters](const GemmProblem& p, const LaunchQueries& q) {
                    return skinny_entry_plans(p, q, clusters);
                  }});
  }
}

}  // namespace gemmkit::cuda

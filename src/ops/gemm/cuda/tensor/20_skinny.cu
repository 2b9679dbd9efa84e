// Launcher and registry entry for rung 20, skinny products (min(M, N) <= 64): the problem
// turned into rung 20's X (R x K, streamed) times W (K x S, small), the split of K across
// blocks, and its workspace. Its kernels are compiled on first use (runtime/cuda/
// jit_kernels.hpp): this file names them (skinny_kernel_for) but instantiates none.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <functional>
#include <string>

#include "ops/gemm/cuda/tensor/20_skinny.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "ops/gemm/cuda/tensor/tensor_args.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/workspace_parts.hpp"

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
    plan.partial_bytes = workspace_aligned(plan.partial_bytes);
    plan.bytes = plan.partial_bytes + std::size_t(tiles) * sizeof(unsigned);
  }
  return plan;
}

// Calls f(T{}, simt) for the problem's dtype: T the element type (__nv_bfloat16, __half,
// float), simt a std::bool_constant, true for f32 by FMAs (float is tf32 otherwise).
template <class F>
decltype(auto) with_skinny_type(DType dtype, F&& f) {
  if (dtype == DType::f32) return f(float{}, std::true_type{});
  return with_element<__nv_bfloat16, __half, float>(dtype, [&](auto t) { return f(t, std::false_type{}); });
}

// Calls f(std::integral_constant<int, SN>{}) for the column tiles sn: 1 (FMA path only), 2,
// 4 or 8.
template <bool Simt, class F>
decltype(auto) with_column_tiles(int sn, F&& f) {
  if constexpr (Simt) return with_int<1, 2, 4, 8>(sn, std::forward<F>(f));
  else return with_int<2, 4, 8>(sn, std::forward<F>(f));
}

// A launch of plan's (tiles, splits) blocks; clusters of a tile's splits along y when they
// add up in the cluster.
template <class T, bool Simt, int SN>
Geometry skinny_geometry(const SkinnyPlan& plan) {
  return {dim3(unsigned(plan.tiles), unsigned(plan.splits)), dim3(SkinnyConfig<T>::kThreads),
          std::size_t(SkinnyConfig<T>::template smem_bytes<Simt, SN>),
          plan.in_cluster ? dim3(1, unsigned(plan.splits)) : dim3(1, 1, 1)};
}

template <class T, bool Simt>
const char* element_name() {
  if constexpr (Simt) return "f32";
  else return tensor_dtype_name<T>();
}

// Rung 20's kernel for element type T (float: tf32, or f32 when Simt), the stored
// orientations of X and W, SN column tiles of W and the 16-byte copies (X, W).
template <class T, bool Simt, bool XK, bool WK, int SN, bool VX, bool VW>
const JitKernel& skinny_kernel_for() {
  static const JitKernel kernel(
      {"ops/gemm/cuda/tensor/20_skinny.cuh",
       instantiation<T, Value<Simt>, Value<XK>, Value<WK>, Value<SN>, Value<VX>, Value<VW>>(
           "gemmkit::cuda::kernels::skinny_kernel"),
       std::string("skinny ") + std::to_string(8 * SN) + " columns " + element_name<T, Simt>() + ", X " +
           (XK ? "K-major" : "R-major") + ", W " + (WK ? "K-major" : "S-major") +
           (VX ? VW ? ", 16-byte copies" : ", 16-byte copies of X" : ", element copies"),
       element_name<T, Simt>(), 80});
  return kernel;
}

// Residency is asked of one instantiation per (Simt, SN): on the tensor cores the bf16
// kernel's (tf32's has the same threads and shared memory), so that the launcher,
// workspace_bytes and explain plan with the same figures.
template <bool Simt>
using ResidencyType = std::conditional_t<Simt, float, __nv_bfloat16>;
template <bool Simt, int SN>
const JitKernel& residency_kernel() {
  return skinny_kernel_for<ResidencyType<Simt>, Simt, true, true, SN, true, true>();
}

// Blocks of rung 20 an SM runs at once, for sn column tiles on the FMA path (f32) or the
// tensor cores; asked once per context.
int skinny_resident(const Context& ctx, int sn, bool simt) {
  return with_bools([&](auto simt_c) {
    constexpr bool Simt = decltype(simt_c)::value;
    return with_column_tiles<Simt>(sn, [&](auto sn_c) {
      constexpr int SN = decltype(sn_c)::value;
      const int per_sm = blocks_per_sm(ctx, jit_kernel(ctx, residency_kernel<Simt, SN>()),
                                       skinny_geometry<ResidencyType<Simt>, Simt, SN>({1, 1}));
      if (per_sm < 1) fail(ErrorCategory::device, "skinny_kernel does not fit on a multiprocessor of this device");
      return per_sm;
    });
  }, simt);
}

// Clusters on sm_90 (the sm_90a code has them; other devices run the sm_80 code).
bool cluster_device(const Context& ctx) { return ctx.compute_capability() / 10 == 9; }

// cluster_fit for plan_skinny: clusters of c blocks (along y) of the residency kernel that
// the device runs at once, asked once per context; 0 where the device has no clusters for
// rung 20, the entry does not use them, or c is not 2..8.
std::function<int(int)> cluster_fit_of(const Context& ctx, int sn, bool simt, bool use) {
  if (!use || !cluster_device(ctx)) return [](int) { return 0; };
  return [&ctx, sn, simt](int c) {
    if (c < 2 || c > 8) return 0;
    return with_bools([&](auto simt_c) {
      constexpr bool Simt = decltype(simt_c)::value;
      return with_column_tiles<Simt>(sn, [&](auto sn_c) {
        constexpr int SN = decltype(sn_c)::value;
        return with_int<2, 3, 4, 5, 6, 7, 8>(c, [&](auto c_c) {
          constexpr int C = decltype(c_c)::value;
          Geometry g = skinny_geometry<ResidencyType<Simt>, Simt, SN>({1, C});
          g.cluster = dim3(1, C);
          return active_clusters(ctx, jit_kernel(ctx, residency_kernel<Simt, SN>()), g);
        });
      });
    }, simt);
  };
}

// The plan of run_skinny<T, Simt> (workspace_bytes asks for it too).
template <class T, bool Simt>
SkinnyPlan plan_for(const Skinny& s, std::int64_t k, const Context& ctx, bool clusters) {
  const int sn = column_tiles(s.cols, Simt);
  const int sms = ctx.device_info().sm_count;
  return plan_skinny(s, k, tiling_of<T, Simt>(sn), sn, sms, sms * skinny_resident(ctx, sn, Simt),
                     cluster_fit_of(ctx, sn, Simt, clusters));
}

// Calls f(const JitKernel&, std::integral_constant<int, SN>) with the instantiation of rung 20's kernel for the problem's orientations, column tiles and
// alignments. Three variants: both operands in 16-byte chunks, X only (W, being small, may
// go element by element), or neither.
template <class T, bool Simt, class F>
void with_skinny_kernel(const Skinny& s, int sn, F&& f) {
  // 16-byte copies need X's and W's starts and rows on 16-byte boundaries.
  const bool vec_x = rows_on_16_bytes(s.x, s.ldx, sizeof(T));
  const bool vec_w = vec_x && rows_on_16_bytes(s.w, s.ldw, sizeof(T));
  // X and W in 16-byte chunks, X only (W, being small, may go element by element), or
  // neither.
  with_bools([&](auto xk, auto wk, auto vx, auto vw) {
    with_column_tiles<Simt>(sn, [&](auto sn_c) {
      constexpr int SN = decltype(sn_c)::value;
      constexpr bool VX = decltype(vx)::value, VW = VX && decltype(vw)::value;  // no kernel for W only
      f(skinny_kernel_for<T, Simt, decltype(xk)::value, decltype(wk)::value, SN, VX, VW>(), sn_c);
    });
  }, s.xk, s.wk, vec_x, vec_w);
}

// T: __nv_bfloat16, __half or float; Simt: f32 by FMAs (else tf32 when T is float).
// clusters: split K adds up in clusters where they fit (cuda_skinny_cluster).
template <class T, bool Simt>
void run_skinny(const GemmProblem& p, const KernelLaunch& l, bool clusters) {
  const Skinny s = normalized(orient(p), int(sizeof(T)));
  const int sn = column_tiles(s.cols, Simt);
  const SkinnyPlan plan = plan_for<T, Simt>(s, p.k, l.context, clusters);
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
  with_skinny_kernel<T, Simt>(s, sn, [&](const JitKernel& kernel, auto sn_c) {
    // Clusters of a tile's splits along y when they add up in the cluster.
    launch_kernel<kernels::SkinnyParameters<T>>(l.context, l.stream, skinny_geometry<T, Simt, decltype(sn_c)::value>(plan),
                                               jit_kernel(l.context, kernel), g);
  });
}

// run_skinny's launch, planned with the residency `q` reports (asked of the kernel
// skinny_resident and skinny_cluster_fit ask about).
template <class T, bool Simt>
std::vector<LaunchPlan> skinny_plans(const GemmProblem& p, const LaunchQueries& q, bool clusters) {
  using R = ResidencyType<Simt>;
  const Skinny s = normalized(orient(p), int(sizeof(T)));
  const int sn = column_tiles(s.cols, Simt);
  std::vector<LaunchPlan> out;
  with_skinny_kernel<T, Simt>(s, sn, [&](const JitKernel& kernel, auto sn_c) {
    constexpr int SN = decltype(sn_c)::value;
    const KernelRef asked = jit_kernel(q, residency_kernel<Simt, SN>());
    const auto probe = [&](dim3 cluster) {
      Geometry g = skinny_geometry<R, Simt, SN>(SkinnyPlan{1, 1});
      g.cluster = cluster;
      return plan_of(asked, g, "", "");
    };
    const int per_sm = std::max(q.blocks_per_sm(probe(dim3(1, 1, 1))), 1);
    const bool cluster_ok = clusters && q.compute_capability / 10 == 9;
    const auto fit = [&](int c) { return cluster_ok && c >= 2 && c <= 8 ? q.active_clusters(probe(dim3(1, c))) : 0; };
    const SkinnyPlan plan = plan_skinny(s, p.k, tiling_of<T, Simt>(sn), sn, q.sm_count, q.sm_count * per_sm, fit);
    const Tiling t = tiling_of<T, Simt>(sn);
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    const bool n_short = s.c_col == 1;  // C as it is: the short side is N
    out.push_back(plan_of(
        jit_kernel(q, kernel), skinny_geometry<T, Simt, SN>(plan), "the product",
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

std::optional<std::string> skinny_precondition(const GemmProblem& p) {
  if (std::min(p.m, p.n) > kMaxSkinny)
    return "cuda_skinny takes M or N <= " + std::to_string(kMaxSkinny) + "; this product is " +
           std::to_string(p.m) + "x" + std::to_string(p.n) + " (a tiled kernel runs it)";
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return "a dimension exceeds 2^31-1, the kernel's index range";
  return std::nullopt;
}

}  // namespace

// Every kernel rung 20 can launch, for `gemmkit cache warm` and the test that compiles them
// all: each element type's orientations, column tiles and copies.
std::vector<const JitKernel*> skinny_jit_kernels() {
  std::vector<const JitKernel*> out;
  const auto add_type = [&](auto t, auto simt) {
    using T = decltype(t);
    constexpr bool Simt = decltype(simt)::value;
    const auto add = [&](auto xk, auto wk, auto vx, auto vw, int sn) {
      constexpr bool VX = decltype(vx)::value, VW = decltype(vw)::value;
      if constexpr (VX || !VW)  // no kernel for W's copies alone
        with_column_tiles<Simt>(sn, [&](auto sn_c) {
          out.push_back(&skinny_kernel_for<T, Simt, decltype(xk)::value, decltype(wk)::value, decltype(sn_c)::value,
                                           VX, VW>());
        });
    };
    for (const int sn : {1, 2, 4, 8})
      for (const bool xk : {false, true})
        for (const bool wk : {false, true})
          for (const bool vx : {false, true})
            for (const bool vw : {false, true})
              if ((Simt || sn > 1) && (vx || !vw))
                with_bools([&](auto... flags) { add(flags..., sn); }, xk, wk, vx, vw);
  };
  add_type(__nv_bfloat16{}, std::false_type{});
  add_type(__half{}, std::false_type{});
  add_type(float{}, std::false_type{});
  add_type(float{}, std::true_type{});
  return out;
}

void register_skinny_kernels(Registry<GemmProblem>& registry) {
  // Two entries, so that one benchmark run measures both ways of adding up a split K: the
  // workspace (cuda_skinny), or clusters where every tile's cluster runs at once
  // (cuda_skinny_cluster, sm_90; the same as cuda_skinny elsewhere). With clusters the
  // first H200 run lost to the workspace, before clusters were kept to where they fit.
  for (const bool clusters : {false, true}) {
    const auto typed = [](const GemmProblem& p, auto&& f) {
      return with_skinny_type(p.dtype, [&](auto t, auto simt) { return f(t, simt); });
    };
    registry.add({{.name = clusters ? "cuda_skinny_cluster" : "cuda_skinny", .backend = Backend::cuda, .rung = 20,
                   .summary = std::string("skinny products (GEMV-like): min(M, N) <= 64") +
                              (clusters ? "; its K splits added up in clusters (sm_90) where they fit" : ""),
                   .dtypes = {DType::bf16, DType::f16, DType::tf32, DType::f32}, .min_compute_capability = 80},
                  {.precondition = skinny_precondition,
                   .workspace_bytes = [=](const GemmProblem& p, const Context& ctx) {
                     return typed(p, [&](auto t, auto simt) {
                       return plan_for<decltype(t), decltype(simt)::value>(orient(p), p.k, ctx, clusters).bytes;
                     });
                   },
                   .run = [=](const GemmProblem& p, const KernelLaunch& l) {
                     typed(p, [&](auto t, auto simt) { run_skinny<decltype(t), decltype(simt)::value>(p, l, clusters); });
                   },
                   .launches = [=](const GemmProblem& p, const LaunchQueries& q) {
                     return typed(p, [&](auto t, auto simt) { return skinny_plans<decltype(t), decltype(simt)::value>(p, q, clusters); });
                   }},
                  {.half_inputs_f32_output = true}});
  }
}

}  // namespace gemmkit::cuda

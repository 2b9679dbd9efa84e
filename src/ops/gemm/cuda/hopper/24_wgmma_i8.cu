// Launchers and registry entry for rung 24, the int8 wgmma kernel (24_wgmma_i8.cuh): int8
// GEMM with int32 results (cuda_wgmma_i8), and the fused modular GEMM of gemmkit/modular.hpp.
// 8-bit wgmma reads K-major operands only, through TMA (16-byte rows): an operand in another
// layout (A transposed, B as stored) is transposed into the workspace first, and one whose
// rows are not on 16 bytes is copied there with padded rows, so that every shape runs. The
// int8 kernels are compiled on first use (runtime/cuda/jit_kernels.hpp): this file names
// them (i8_kernel_for), except the overlapped int32 one, compiled ahead of time here (see
// i8_kernel); the copies are compiled ahead of time too.
#include <algorithm>
#include <climits>
#include <string>

#include "ops/gemm/cuda/hopper/hopper_launch.hpp"
#include "ops/gemm/cuda/hopper/i8_schedule.hpp"
#include "ops/gemm/cuda/hopper/24_wgmma_i8.cuh"
#include "ops/modular/cuda/modular_reduce.cuh"
#include "ops/gemm/cuda/common/transpose.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/launch.hpp"
#include "ops/modular/cuda/modular.hpp"
#include "runtime/cuda/jit_kernels.hpp"
#include "runtime/cuda/workspace_parts.hpp"

namespace gemmkit::cuda {
namespace {

using Cfg = kernels::WgmmaI8Config;
using OverlapCfg = kernels::WgmmaI8OverlapConfig;  // the int32 product's overlapped schedule
static_assert(Cfg::BN == kI8WideColumns && OverlapCfg::BN == kI8OverlapColumns && Cfg::BM == OverlapCfg::BM &&
                  Cfg::kClusterM * Cfg::BM == kI8TileRows &&
                  Cfg::BK == OverlapCfg::BK && Cfg::kClusterM == OverlapCfg::kClusterM,
              "i8_schedule.hpp compares these tiles");
constexpr CUtensorMapDataType kByteMap = CU_TENSOR_MAP_DATA_TYPE_UINT8;  // bits are bits to TMA

// The kernel as a launch of `clusters` persistent clusters.
template <class C = Cfg>
Geometry i8_geometry(int clusters) {
  return {dim3(unsigned(clusters * C::kClusterM)), dim3(C::kThreads), std::size_t(C::kSmemBytes), dim3(C::kClusterM)};
}

using kernels::I8Epilogue;

const char* epilogue_name(I8Epilogue e) {
  switch (e) {
    case I8Epilogue::int32_tma: return "int32_tma";
    case I8Epilogue::int32_overlapped: return "int32_overlapped";
    case I8Epilogue::int32_direct: return "int32_direct";
    case I8Epilogue::residues_c: return "residues_c";
    case I8Epilogue::residues_ct: return "residues_ct";
    case I8Epilogue::residues_both: return "residues_both";
    case I8Epilogue::residues_direct: return "residues_direct";
  }
  return "?";
}

// Rung 24's kernel with epilogue E on tile configuration C.
template <I8Epilogue E, class C = Cfg>
const JitKernel& i8_kernel_for() {
  static const JitKernel kernel(
      {"ops/gemm/cuda/hopper/24_wgmma_i8.cuh",
       "gemmkit::cuda::kernels::wgmma_i8_kernel<" + type_name<C>() + ", gemmkit::cuda::kernels::I8Epilogue::" +
           epilogue_name(E) + ">",
       "wgmma_i8 " + std::to_string(C::kClusterM * C::BM) + "x" + std::to_string(C::BN) + " " + epilogue_name(E),
       "i8", 90});
  return kernel;
}

// The kernel a launch or a plan takes. The overlapped int32 schedule is compiled ahead of time:
// its 13 stores, unrolled into the K-loop of the next tile twice over, are 2-3% faster than
// any loop over them (4096^3 and 8192^3 on the H200) but take NVRTC 8-10 s to compile there,
// past what a first call should wait; ahead of time they cost the build about as much.
template <I8Epilogue E, class C, class Where>
KernelRef i8_kernel(const Where& where) {
  if constexpr (E == I8Epilogue::int32_overlapped) return ahead_of_time<&kernels::wgmma_i8_kernel<C, E>>();
  else return jit_kernel(where, i8_kernel_for<E, C>());
}

template <I8Epilogue E, class C = Cfg>
int i8_resident(const Context& ctx) {
  return resident_clusters(ctx, i8_kernel<E, C>(ctx), i8_geometry<C>(kResidencyProbe));
}

// A grid-stride loop over `count` elements: blocks of 256 threads, at most 8192 of them.
Geometry grid_stride_geometry(std::int64_t count) {
  return {dim3(unsigned(std::clamp<std::int64_t>(ceil_div(count, 256), 1, 8192))), dim3(256)};
}

// One launch's operands: `count` matrices, K-major, rows on 16 bytes (stride 0: one matrix
// for all).
struct I8Operands {
  std::int64_t m, n, k, count;
  const std::int8_t* a;
  std::int64_t lda, stride_a;
  const std::int8_t* b;
  std::int64_t ldb, stride_b;
};

template <class C>
std::int64_t i8_cluster_tiles(std::int64_t m, std::int64_t n, std::int64_t count) {
  return ceil_div(ceil_div(m, C::BM), C::kClusterM) * ceil_div(n, C::BN) * count;
}

// Every epilogue's kernel has the same threads and shared memory, so one stands for all in
// the residency query that plans the launch.
WsPlan i8_plan(const Context& ctx, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t count) {
  return plan_ws_tiles<Cfg>(i8_cluster_tiles<Cfg>(m, n, count), ceil_div(k, Cfg::BK),
                            i8_resident<I8Epilogue::residues_direct>(ctx));
}

// The int32 product's plan (C by TMA stores): the wide schedule's, or the overlapped one's
// (whole tiles, as few clusters as give the same rounds) where i8_schedule.hpp expects it
// to be faster. `resident` and `overlap_resident`: the two kernels' resident clusters.
struct Int32Plan {
  bool overlapped = false;
  int spread = 0;
  WsPlan plan;
};
Int32Plan int32_plan(std::int64_t m, std::int64_t n, std::int64_t k, int resident, int overlap_resident) {
  const std::int64_t k_tiles = ceil_div(k, Cfg::BK);
  Int32Plan out;
  out.plan = plan_ws_tiles<Cfg>(i8_cluster_tiles<Cfg>(m, n, 1), k_tiles, resident);
  const std::int64_t tiles = i8_cluster_tiles<OverlapCfg>(m, n, 1);
  const I8Rounds wide{i8_cluster_tiles<Cfg>(m, n, 1), out.plan.clusters, out.plan.sk.sk_tiles > 0};
  const I8Rounds overlapped{tiles, std::min<std::int64_t>(tiles, overlap_resident), false};
  if (!prefer_i8_overlapped(wide, overlapped, m, n, k_tiles)) return out;
  out.overlapped = true;
  out.spread = i8_overlap_spread(k_tiles);
  out.plan = WsPlan{};
  out.plan.clusters = int(ceil_div(tiles, ceil_div(tiles, overlapped.clusters)));
  out.plan.sk.dp_tiles = int(tiles);
  return out;
}
Int32Plan int32_plan(const Context& ctx, const GemmProblem& p) {
  return int32_plan(p.m, p.n, p.k, i8_resident<I8Epilogue::int32_tma>(ctx),
                    i8_resident<I8Epilogue::int32_overlapped, OverlapCfg>(ctx));
}

// Queues one launch of epilogue E on tile configuration C with `plan`; `scratch` holds
// stream-K's partial sums and flags.
template <I8Epilogue E, class C = Cfg>
void launch_i8_planned(const Context& ctx, Stream stream, const I8Operands& o, const kernels::I8Output& out,
                       const CUtensorMap& map_c, const CUtensorMap& map_ct, WsPlan plan, Workspace scratch) {
  const CUtensorMap map_a = batch_map(o.a, kByteMap, 1, o.m, o.k, o.lda, o.count, o.stride_a, C::BM, C::BK);
  const CUtensorMap map_b = batch_map(o.b, kByteMap, 1, o.n, o.k, o.ldb, o.count, o.stride_b, C::kBPartRows, C::BK);
  if (plan.stream_k_bytes > 0) {
    if (scratch.bytes < plan.stream_k_bytes)
      fail(ErrorCategory::internal, "cuda_wgmma_i8: the workspace is smaller than declared");
    auto* base = static_cast<unsigned char*>(scratch.data);
    plan.sk.partials = reinterpret_cast<float*>(base);  // int32 sums in the same 4 bytes
    plan.sk.flags = reinterpret_cast<unsigned*>(base + plan.slots * 64 * C::BN * sizeof(int));
    plan.sk.launch = 1;
    GEMMKIT_CUDA_CHECK(cudaMemsetAsync(plan.sk.flags, 0, plan.slots * sizeof(unsigned), stream));
  }
  const kernels::WsBatch batch{int(o.count), o.stride_a == 0, o.stride_b == 0, 0};
  launch_kernel<kernels::WgmmaI8Parameters>(ctx, stream, i8_geometry<C>(plan.clusters),
                                            i8_kernel<E, C>(ctx), map_a, map_b, map_c, map_ct,
                                            int(o.m), int(o.n), int(o.k), plan.sk, batch, out);
}

// Plans and queues one launch of epilogue E on the wide tiles.
template <I8Epilogue E>
void launch_i8(const Context& ctx, Stream stream, const I8Operands& o, const kernels::I8Output& out,
               const CUtensorMap& map_c, const CUtensorMap& map_ct, Workspace scratch) {
  launch_i8_planned<E>(ctx, stream, o, out, map_c, map_ct, i8_plan(ctx, o.m, o.n, o.k, o.count), scratch);
}

// ---- the int8 GEMM entry (one product: the entry is not batched) -------------------------

// Which operands go through the workspace, and its layout: A's copy, B's copy, stream-K.
struct GemmCopies {
  bool copy_a = false, copy_b = false;
  std::int64_t ld = 0;  // the copies' rows: K rounded up to 16 bytes
  std::size_t b_at = 0, stream_k_at = 0;
};

GemmCopies gemm_copies(const GemmProblem& p) {
  GemmCopies c;
  c.copy_a = p.trans_a || !rows_on_16_bytes(p.a, p.lda, 1);
  c.copy_b = !p.trans_b || !rows_on_16_bytes(p.b, p.ldb, 1);
  c.ld = ceil_div(p.k, 16) * 16;
  c.b_at = c.copy_a ? workspace_aligned(std::size_t(p.m * c.ld)) : 0;
  c.stream_k_at = c.b_at + (c.copy_b ? workspace_aligned(std::size_t(p.n * c.ld)) : 0);
  return c;
}

// Whether C goes out by TMA stores: beta == 0, and C on 16 bytes. TMA stores clip at the
// matrix edge in whole 16 bytes (rung 19's note), so C's rows must be whole 16 bytes too.
bool int32_tma_stores(const GemmProblem& p) {
  return int(std::int64_t(p.beta)) == 0 && tma_compatible(p.c, p.ldc, 4) && (p.n * 4) % 16 == 0;
}

std::size_t wgmma_i8_workspace_bytes(const GemmProblem& p, const Context& ctx) {
  if (p.k == 0) return 0;  // C = beta C: no copies, no product
  const WsPlan plan = int32_tma_stores(p) ? int32_plan(ctx, p).plan : i8_plan(ctx, p.m, p.n, p.k, 1);
  return gemm_copies(p).stream_k_at + plan.stream_k_bytes;
}

// Copies stored (rows, cols) into K-major (dst_rows, k) rows of `ld` bytes at dst: a
// transpose when the operand is MN-major (stored k x mn), else a row copy.
void k_major_copy(const Context& ctx, const std::int8_t* src, std::int64_t rows, std::int64_t cols, std::int64_t ld_src,
                  bool transpose, std::int8_t* dst, std::int64_t ld, Stream stream) {
  if (transpose)
    launch_geometry<kernels::transpose<std::int8_t>>(ctx, stream, transpose_geometry(rows, cols), src, rows, cols, ld_src,
                                                     dst, ld);
  else
    launch_geometry<kernels::pack_rows<std::int8_t>>(ctx, stream, grid_stride_geometry(rows * ld), src, ld_src,
                                                     std::int64_t(0), rows, cols, std::int64_t(1), dst, ld);
}

void run_wgmma_i8(const GemmProblem& p, const KernelLaunch& l) {
  auto* c = static_cast<int*>(p.c);
  const int alpha = int(std::int64_t(p.alpha)), beta = int(std::int64_t(p.beta));  // mod 2^32
  if (p.k == 0) {
    launch_geometry<kernels::scale_c<int>>(l.context, l.stream, grid_stride_geometry(p.m * p.n), c, p.ldc, int(p.m),
                                           int(p.n), beta);
    return;
  }
  const GemmCopies copies = gemm_copies(p);
  auto* base = static_cast<unsigned char*>(l.workspace.data);
  I8Operands o{p.m, p.n, p.k, 1, static_cast<const std::int8_t*>(p.a), p.lda, 0,
               static_cast<const std::int8_t*>(p.b), p.ldb, 0};
  if (copies.copy_a) {  // A^T stored (k, m), or A unaligned (m, k)
    auto* a = reinterpret_cast<std::int8_t*>(base);
    k_major_copy(l.context, o.a, p.a_rows(), p.a_cols(), p.lda, p.trans_a, a, copies.ld, l.stream);
    o.a = a, o.lda = copies.ld;
  }
  if (copies.copy_b) {  // B stored (k, n), or B^T unaligned (n, k)
    auto* b = reinterpret_cast<std::int8_t*>(base + copies.b_at);
    k_major_copy(l.context, o.b, p.b_rows(), p.b_cols(), p.ldb, !p.trans_b, b, copies.ld, l.stream);
    o.b = b, o.ldb = copies.ld;
  }
  kernels::I8Output out;
  out.alpha = alpha, out.beta = beta;
  out.c = c, out.ldc = p.ldc;
  out.c_pairs = p.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % 8 == 0;
  const std::size_t sk_at = std::min(copies.stream_k_at, l.workspace.bytes);
  const Workspace scratch{base + sk_at, l.workspace.bytes - sk_at};
  if (int32_tma_stores(p)) {
    const Int32Plan plan = int32_plan(l.context, p);
    if (plan.overlapped) {  // boxes of 64 rows x 16 columns
      const CUtensorMap map_c = batch_map(p.c, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, p.m, p.n, p.ldc, 1, 0, 64, 16);
      out.spread = plan.spread;
      launch_i8_planned<I8Epilogue::int32_overlapped, OverlapCfg>(l.context, l.stream, o, out, map_c, CUtensorMap{},
                                                                  plan.plan, scratch);
      return;
    }
    const CUtensorMap map_c = batch_map(p.c, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, p.m, p.n, p.ldc, 1, 0, 64, 32);
    launch_i8_planned<I8Epilogue::int32_tma>(l.context, l.stream, o, out, map_c, CUtensorMap{}, plan.plan, scratch);
  } else {
    launch_i8<I8Epilogue::int32_direct>(l.context, l.stream, o, out, CUtensorMap{}, CUtensorMap{}, scratch);
  }
}

std::optional<std::string> wgmma_i8_precondition(const GemmProblem& p) {
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) return "a dimension exceeds 2^31-1, the kernel's index range";
  return std::nullopt;
}

}  // namespace

// ---- the fused modular GEMM ---------------------------------------------------------------


std::size_t fused_modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p) {
  // Launches of up to kI8MaxModuli moduli one after another on one stream share the
  // stream-K scratch. It is sized for any launch of at most this shape's tiles, not for this
  // shape's plans alone: callers run smaller products in a workspace declared for a larger
  // one (the walks' last batch and warm-up of fewer moduli, Ozaki's last pass of fewer rows,
  // the exact GEMM's plan of fewer moduli than its worst case), and those can plan stream-K
  // where the declared shape plans none (8192-vertex walks at k = 32 did, and failed).
  const std::int64_t largest = std::min<std::int64_t>(std::int64_t(p.moduli.size()), kernels::kI8MaxModuli);
  return plan_ws_stream_k_bound<Cfg>(i8_cluster_tiles<Cfg>(p.m, p.n, largest),
                                     i8_resident<I8Epilogue::residues_direct>(ctx));
}

void fused_modular_gemm(Context& ctx, const ModularOperands& o, Stream stream, Workspace workspace) {
  const ModularGemmProblem& p = o.problem;
  const std::int64_t nq = std::int64_t(p.moduli.size());
  auto vec16 = [](const void* ptr, std::int64_t ld, std::int64_t stride) {
    return ptr && reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 16 == 0 && stride % 16 == 0;
  };
  for (std::int64_t q0 = 0; q0 < nq; q0 += kernels::kI8MaxModuli) {
    const std::int64_t count = std::min<std::int64_t>(nq - q0, kernels::kI8MaxModuli);
    const I8Operands ops{p.m, p.n, o.k, count, o.a + q0 * o.stride_a, o.lda, o.stride_a,
                         o.b + q0 * o.stride_b, o.ldb, o.stride_b};
    kernels::I8Output out;
    if (p.c) out.r = p.c + q0 * p.stride_c, out.ldr = p.ldc, out.stride_r = p.stride_c;
    if (p.ct) out.rt = p.ct + q0 * p.stride_ct, out.ldrt = p.ldct, out.stride_rt = p.stride_ct;
    out.r_vec = vec16(out.r, out.ldr, out.stride_r);
    out.rt_vec = vec16(out.rt, out.ldrt, out.stride_rt);
    for (std::int64_t q = 0; q < count; ++q) out.moduli[q] = static_cast<unsigned char>(p.moduli[std::size_t(q0 + q)]);
    // TMA stores where every output allows them: 16-byte rows and matrices, and rows of
    // whole 16 bytes (the copy engine clips at the edge in 16 bytes).
    const bool c_tma = !out.r || (out.r_vec && p.n % 16 == 0);
    const bool ct_tma = !out.rt || (out.rt_vec && p.m % 16 == 0);
    if (!c_tma || !ct_tma) {
      launch_i8<I8Epilogue::residues_direct>(ctx, stream, ops, out, CUtensorMap{}, CUtensorMap{}, workspace);
      continue;
    }
    // C in boxes of 64 rows x 128 columns; C^T in boxes of the pass's columns (C^T's rows,
    // 128 when both are written, 256 for C^T alone) x 64 (C^T's columns).
    const CUtensorMap map_c =
        out.r ? batch_map(out.r, kByteMap, 1, p.m, p.n, out.ldr, count, out.stride_r, 64, 128) : CUtensorMap{};
    const int ct_rows = out.r ? 128 : 256;
    const CUtensorMap map_ct =
        out.rt ? batch_map(out.rt, kByteMap, 1, p.n, p.m, out.ldrt, count, out.stride_rt, ct_rows, 64) : CUtensorMap{};
    if (out.r && out.rt)
      launch_i8<I8Epilogue::residues_both>(ctx, stream, ops, out, map_c, map_ct, workspace);
    else if (out.r)
      launch_i8<I8Epilogue::residues_c>(ctx, stream, ops, out, map_c, map_ct, workspace);
    else
      launch_i8<I8Epilogue::residues_ct>(ctx, stream, ops, out, map_c, map_ct, workspace);
  }
}

// Every kernel rung 24 compiles on first use, for `gemmkit cache warm` and the test that
// compiles them all.
std::vector<const JitKernel*> i8_jit_kernels() {
  return {&i8_kernel_for<I8Epilogue::int32_tma>(),
          &i8_kernel_for<I8Epilogue::int32_direct>(),     &i8_kernel_for<I8Epilogue::residues_c>(),
          &i8_kernel_for<I8Epilogue::residues_ct>(),      &i8_kernel_for<I8Epilogue::residues_both>(),
          &i8_kernel_for<I8Epilogue::residues_direct>()};
}

void register_i8_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_wgmma_i8", .backend = Backend::cuda, .rung = 24,
                 .summary = "int8 tensor cores with int32 sums, and a modular epilogue", .dtypes = {DType::i8},
                 .min_compute_capability = 90, .auto_priority = 30},
                {.precondition = wgmma_i8_precondition, .workspace_bytes = wgmma_i8_workspace_bytes,
                 .run = run_wgmma_i8, .launches = wgmma_i8_plans}});
}

// ---- launch plans (gemmkit explain) ---------------------------------------------------------
// The launches run_wgmma_i8 makes: the K-major copies gemm_copies asks for, then
// wgmma_i8_kernel on the plan i8_plan makes, with the residency `q` reports.
std::vector<LaunchPlan> wgmma_i8_plans(const GemmProblem& p, const LaunchQueries& q) {
  std::vector<LaunchPlan> out;
  const GemmCopies copies = gemm_copies(p);
  const auto copy = [&](const char* what, std::int64_t rows, std::int64_t cols, bool transpose) {
    if (transpose)
      out.push_back(plan_of<kernels::transpose<std::int8_t>>(
          transpose_geometry(rows, cols), what,
          "writes no C: block (bx, by) moves the 32x32 tile at stored rows by * 32, columns bx * 32 through "
          "shared memory, thread (tx, ty) the elements at rows ty + 8i, column tx of it"));
    else
      out.push_back(plan_of<kernels::pack_rows<std::int8_t>>(
          grid_stride_geometry(rows * copies.ld), what,
          "writes no C: a grid-stride loop, thread i of the grid copying bytes i, i + gridDim.x * 256, ... of the "
          "padded rows"));
  };
  if (copies.copy_a) copy("A copied K-major, rows padded to 16 bytes", p.a_rows(), p.a_cols(), p.trans_a);
  if (copies.copy_b) copy("B copied K-major, rows padded to 16 bytes", p.b_rows(), p.b_cols(), !p.trans_b);
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  const auto product = [&]<I8Epilogue E, class C>(const WsPlan& plan, const std::string& stores) {
    out.push_back(plan_of(
        i8_kernel<E, C>(q), i8_geometry<C>(plan.clusters), "the product",
        "as rung 19 on int8: " + n(plan.clusters) + " persistent clusters of " + n(C::kClusterM) +
            " blocks loop over cluster tiles of " + n(C::kClusterM * C::BM) + "x" + n(C::BN) +
            " (round r, cluster c: tile r * clusters + c), block b of a cluster on its rows b * " + n(C::BM) +
            "; warpgroup 0's thread 0 issues the TMA copies, warpgroups 1 and 2 multiply rows 64 (c - 1) + 0..63 of "
            "the tile with wgmma s32.s8.s8 and write int32 C " +
            stores +
            (plan.sk.sk_tiles > 0 ? "; stream-K shares the last " + n(plan.sk.sk_tiles) + " tiles' K blocks over every cluster"
                                  : "")));
  };
  const auto resident = [&]<I8Epilogue E, class C>() {
    return q.active_clusters(plan_of(i8_kernel<E, C>(q), i8_geometry<C>(0), "", ""));
  };
  const std::int64_t k_tiles = ceil_div(p.k, Cfg::BK);
  if (int32_tma_stores(p)) {
    const Int32Plan plan =
        int32_plan(p.m, p.n, p.k, resident.template operator()<I8Epilogue::int32_tma, Cfg>(),
                   resident.template operator()<I8Epilogue::int32_overlapped, OverlapCfg>());
    if (plan.overlapped)
      product.template operator()<I8Epilogue::int32_overlapped, OverlapCfg>(
          plan.plan, "by TMA stores, overlapped: two sets of accumulators take turns, tile i's C going out in boxes of "
                     "64x16, one after every " + n(plan.spread) + " K-block(s) of tile i + 1, while its multiplies run");
    else
      product.template operator()<I8Epilogue::int32_tma, Cfg>(plan.plan, "by TMA stores");
  } else {
    const WsPlan plan = plan_ws_tiles<Cfg>(i8_cluster_tiles<Cfg>(p.m, p.n, 1), k_tiles,
                                           resident.template operator()<I8Epilogue::int32_direct, Cfg>());
    product.template operator()<I8Epilogue::int32_direct, Cfg>(plan, "straight from the fragments");
  }
  return out;
}

}  // namespace gemmkit::cuda

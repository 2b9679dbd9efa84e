// Launchers and registry entries for the rungs that compose earlier kernels: 22, a padded
// copy of the operands TMA cannot describe, then a Hopper rung; 23, split-K over rung 14's
// SIMT kernel with a deterministic reduction.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ops/gemm/cuda/hopper/22_pad_copy.cuh"
#include "ops/gemm/cuda/simt/23_split_k_reduce.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "launch/tensor_map.hpp"
#include "runtime/cuda/workspace_parts.hpp"

namespace gemmkit::cuda {
namespace {

// ---- rung 22: padded copies for the Hopper rungs ------------------------------------------

// The Hopper rung that multiplies the padded copies: the one place that names it.
constexpr const char* kInner = "cuda_wgmma_tuned";

int elem_bytes(const GemmProblem& p) { return p.dtype == DType::tf32 ? 4 : 2; }

// Operands the Hopper rungs read through TMA as stored. A tf32 operand in MN-major form (A
// transposed, B not) they first transpose into K-major form themselves, from any address.
bool tma_reads_a(const GemmProblem& p) { return !(p.dtype == DType::tf32 && p.trans_a); }
bool tma_reads_b(const GemmProblem& p) { return !(p.dtype == DType::tf32 && !p.trans_b); }

bool needs_copy_a(const GemmProblem& p) {
  return tma_reads_a(p) && !tma_compatible(p.a, p.lda, elem_bytes(p));
}
bool needs_copy_b(const GemmProblem& p) {
  return tma_reads_b(p) && !tma_compatible(p.b, p.ldb, elem_bytes(p));
}

// Elements of a padded row: `cols` rounded up to whole 16 bytes.
std::int64_t padded_ld(std::int64_t cols, int elem) {
  const std::int64_t per16 = 16 / elem;
  return ceil_div(cols, per16) * per16;
}

// Workspace for the copies: room for every operand TMA reads, whether it needs a copy or
// not. A batch runs matrix by matrix in a workspace sized from its first matrix, and a
// later one (its base a stride further on) may need a copy the first did not.
struct PadPlan {
  std::size_t a_bytes = 0, b_bytes = 0;  // each a whole number of kWorkspaceAlignment
  std::size_t bytes() const { return a_bytes + b_bytes; }
};

PadPlan plan_padding(const GemmProblem& p) {
  const int e = elem_bytes(p);
  PadPlan plan;
  if (tma_reads_a(p)) plan.a_bytes = workspace_aligned(std::size_t(p.a_rows() * padded_ld(p.a_cols(), e) * e));
  if (tma_reads_b(p)) plan.b_bytes = workspace_aligned(std::size_t(p.b_rows() * padded_ld(p.b_cols(), e) * e));
  return plan;
}

// The problem on the copies at `copies` (the workspace; any 256-byte aligned address when
// only asked about): the operands that need one read from their copy, the others as given.
GemmProblem padded_problem(const GemmProblem& p, std::uintptr_t copies, const PadPlan& plan) {
  const int e = elem_bytes(p);
  GemmProblem q = p;
  if (needs_copy_a(p)) {
    q.a = reinterpret_cast<const void*>(copies);
    q.lda = padded_ld(p.a_cols(), e);
  }
  if (needs_copy_b(p)) {
    q.b = reinterpret_cast<const void*>(copies + plan.a_bytes);
    q.ldb = padded_ld(p.b_cols(), e);
  }
  return q;
}

// The copy's launch for jobs of at most `rows` rows of `chunks` 16-byte stores: the grid
// covers the larger job, z picks the job.
Geometry pad_geometry(std::int64_t chunks, std::int64_t rows, int count) {
  int bx = 1;  // threads along a row: up to 128
  while (bx < chunks && bx < 128) bx *= 2;
  const int by = 256 / bx;
  return {dim3(unsigned(ceil_div(chunks, std::int64_t(bx) * kernels::kPadChunksPerThread)),
               unsigned(std::min<std::int64_t>(ceil_div(rows, by), 65535)), unsigned(count)),
          dim3(bx, by)};
}

// Copies the jobs (one or two operands) in one launch.
void pad_rows(const Context& ctx, const kernels::PadJob* jobs, int count, int elem, cudaStream_t stream) {
  std::int64_t chunks = 0, rows = 0;
  for (int i = 0; i < count; ++i) {
    chunks = std::max(chunks, jobs[i].ld_out * elem / 16);  // 16-byte stores per row
    rows = std::max(rows, jobs[i].rows);
  }
  const kernels::PadJob second = count > 1 ? jobs[1] : jobs[0];
  with_int<2, 4>(elem, [&](auto e) {
    launch_geometry<kernels::pad_rows_kernel<decltype(e)::value>>(ctx, stream, pad_geometry(chunks, rows, count), jobs[0],
                                                                  second);
  });
}

const KernelEntry& inner_entry() { return gemm_registry().get(kInner); }

bool needs_padding(const GemmProblem& p) { return needs_copy_a(p) || needs_copy_b(p); }

// Refuses problems that need no copy (the inner rung runs them as they are) and what the
// inner rung refuses even padded (K = 0, sizes beyond int range).
std::optional<std::string> padded_precondition(const GemmProblem& p) {
  // A batch runs matrix by matrix; the strides are fixed, so the first two matrices show
  // every alignment the batch has.
  const bool need = needs_padding(batch_item(p, 0)) || (p.batch > 1 && needs_padding(batch_item(p, 1)));
  if (!need)
    return std::string("operands already TMA-aligned (16-byte base and rows): ") + kInner +
           " runs them without a copy";
  const GemmProblem first = batch_item(p, 0);
  const GemmProblem q = padded_problem(first, kWorkspaceAlignment, plan_padding(first));
  if (auto why = inner_entry().rejects(q)) return std::string(kInner) + " refuses the padded problem: " + *why;
  return std::nullopt;
}

std::size_t padded_workspace_bytes(const GemmProblem& p, const Context& ctx) {
  const PadPlan plan = plan_padding(p);
  return plan.bytes() + inner_entry().workspace_for(padded_problem(p, kWorkspaceAlignment, plan), ctx);
}

// run_padded's launches: the copy of the operands that need one, then the inner rung's.
std::vector<LaunchPlan> padded_plans(const GemmProblem& p, const LaunchQueries& q) {
  const PadPlan plan = plan_padding(p);
  const GemmProblem padded = padded_problem(p, kWorkspaceAlignment, plan);
  std::vector<LaunchPlan> out;
  std::int64_t chunks = 0, rows = 0;
  int count = 0;
  if (padded.a != p.a) chunks = std::max(chunks, padded.lda * elem_bytes(p) / 16), rows = std::max(rows, p.a_rows()), ++count;
  if (padded.b != p.b) chunks = std::max(chunks, padded.ldb * elem_bytes(p) / 16), rows = std::max(rows, p.b_rows()), ++count;
  if (count > 0) {
    const Geometry geo = pad_geometry(chunks, rows, count);
    const std::string text = "writes no C: blockIdx.z picks the operand; thread (tx, ty) of block (bx, by) copies "
                             "row by * blockDim.y + ty (stepping by gridDim.y * blockDim.y), 16-byte chunks "
                             "(bx * blockDim.x + tx) * " + std::to_string(kernels::kPadChunksPerThread) +
                             " on, into rows padded to 16 bytes";
    with_int<2, 4>(elem_bytes(p), [&](auto e) {
      out.push_back(plan_of<kernels::pad_rows_kernel<decltype(e)::value>>(geo, "copy of the unaligned operands", text));
    });
  }
  for (LaunchPlan& inner : inner_entry().launches(padded, q)) out.push_back(std::move(inner));
  return out;
}

void run_padded(const GemmProblem& p, const KernelLaunch& l) {
  const KernelEntry& inner = inner_entry();
  const PadPlan plan = plan_padding(p);
  auto* base = static_cast<unsigned char*>(l.workspace.data);
  const GemmProblem q = padded_problem(p, reinterpret_cast<std::uintptr_t>(base), plan);
  const std::size_t inner_bytes = inner.workspace_for(q, l.context);
  if (l.workspace.bytes < plan.bytes() + inner_bytes)
    fail(ErrorCategory::internal, "cuda_wgmma_padded: the workspace is smaller than declared");
  kernels::PadJob jobs[2];
  int count = 0;
  if (q.a != p.a)
    jobs[count++] = {static_cast<const unsigned char*>(p.a), p.a_rows(), p.a_cols(), p.lda, base, q.lda};
  if (q.b != p.b)
    jobs[count++] = {static_cast<const unsigned char*>(p.b), p.b_rows(), p.b_cols(), p.ldb,
                     base + plan.a_bytes, q.ldb};
  if (count > 0) pad_rows(l.context, jobs, count, elem_bytes(p), l.stream);
  inner.run(q, KernelLaunch{l.context, l.stream, Workspace{base + plan.bytes(), l.workspace.bytes - plan.bytes()}});
}

// ---- rung 23: split-K over rung 14 -------------------------------------------------------

// K columns a slice gets at least: below that a block's pipeline prologue and the partial
// sums' traffic cost more than the extra blocks gain.
constexpr std::int64_t kMinSliceK = 256;
// The partial sums take at most this much workspace; fewer slices beyond.
constexpr std::size_t kMaxPartialBytes = std::size_t(256) << 20;

// Rung 14's configurations, largest first (ties go to the larger tile), with the rate one
// SM reaches running as many of its blocks as fit (flops per second): calibrated on the
// H200 from a run of the long-K suite and rung 14's rates at 8192^3
// (bench/results/2026-11-22_h200_5e2f756/).
struct TileShape {
  TunedConfig config;
  std::int64_t bm, bn;
  double sm_flops;
};
constexpr TileShape kTileShapes[] = {{TunedConfig::tile_128x256, 128, 256, 0.31e12},
                                     {TunedConfig::tile_64x128, 64, 128, 0.34e12},
                                     {TunedConfig::tile_64x64, 64, 64, 0.30e12}};

struct SplitPlan {
  TunedConfig config = TunedConfig::tile_64x64;
  std::int64_t slices = 1;  // 1: no split, rung 14 runs the problem as it is
  std::int64_t slice_k = 0;  // K columns of each slice; the K mod slices left go to the reduction
  std::int64_t ldw = 0;      // leading dimension of the partial sums
  std::size_t bytes = 0;     // workspace
};

// A rough cost model, only to compare plans with one another: the busiest SM runs
// ceil(blocks / SMs) blocks of a tile's work (edge tiles cost a whole tile); with fewer
// blocks resident than fit, it runs below its full rate, by the square root of the
// fraction resident (64x128 at 2 of 4 blocks: 0.23 measured, 0.24 modelled). The partial
// sums cost their bytes written and read once, and the reduction a launch.
constexpr double kPartialBandwidth = 3e12;  // bytes per second, mostly L2
constexpr double kReduceLaunch = 3e-6;      // seconds
constexpr std::int64_t kMostSlicesTried = 1024;

double plan_seconds(const GemmProblem& p, const TileShape& t, int per_sm, int sms,
                    std::int64_t slices, std::int64_t ldw) {
  const std::int64_t blocks = ceil_div(p.m, t.bm) * ceil_div(p.n, t.bn) * slices;
  const std::int64_t load = ceil_div(blocks, sms);  // blocks on the busiest SM
  const double resident = double(std::min<std::int64_t>(load, per_sm)) / double(per_sm);
  const double rate = t.sm_flops * std::sqrt(resident);
  const double seconds = double(load) * 2.0 * double(t.bm * t.bn) * double(ceil_div(p.k, slices)) / rate;
  if (slices == 1) return seconds;
  return seconds + double(slices) * double(p.m * ldw) * 8.0 / kPartialBandwidth + kReduceLaunch;
}

// The configuration and slice count the model finds fastest, against rung 14 unsplit. Slices get at least kMinSliceK columns and the partial sums
// at most kMaxPartialBytes.
// per_sm(config): blocks of a configuration one SM holds.
template <class PerSm>
SplitPlan plan_split_k(const GemmProblem& p, int sm_count, PerSm per_sm_of) {
  SplitPlan plan;
  if (p.m == 0 || p.n == 0 || p.k < 2 * kMinSliceK) return plan;
  // Long K only: at K = M = N the split lost to rung 14 unsplit on the H200 (1024^3 and
  // 640^3), the partial sums' traffic and the second launch weighing against products
  // that short.
  if (p.k < 2 * std::max(p.m, p.n)) return plan;
  const int sms = std::max(sm_count, 1);
  plan.ldw = ceil_div(p.n, 4) * 4;  // slices start on 16 bytes
  const std::size_t slice_bytes = std::size_t(p.m * plan.ldw) * sizeof(float);
  const std::int64_t most = std::min({p.k / kMinSliceK, std::int64_t(kMaxPartialBytes / slice_bytes),
                                      kMostSlicesTried});
  // Unsplit, any configuration: a split must win by splitting, not by a better tile (the
  // unsplit problem then runs rung 14's own choice, which measurements made).
  double best = std::numeric_limits<double>::infinity();
  for (const TileShape& t : kTileShapes)
    best = std::min(best, plan_seconds(p, t, per_sm_of(t.config), sms, 1, plan.ldw));
  for (const TileShape& t : kTileShapes) {
    const int per_sm = per_sm_of(t.config);
    for (std::int64_t s = 2; s <= most; ++s) {
      const double seconds = plan_seconds(p, t, per_sm, sms, s, plan.ldw);
      if (seconds < 0.97 * best) {  // a split must win clearly: the model is rough
        best = seconds;
        plan.config = t.config;
        plan.slices = s;
      }
    }
  }
  if (plan.slices == 1) return plan;
  plan.slice_k = p.k / plan.slices;
  plan.bytes = std::size_t(plan.slices) * slice_bytes;
  return plan;
}

SplitPlan plan_split_k(const GemmProblem& p, const Context& ctx) {
  return plan_split_k(p, ctx.device_info().sm_count,
                      [&](TunedConfig c) { return tuned_config_blocks_per_sm(c, ctx); });
}

std::size_t split_k_workspace_bytes(const GemmProblem& p, const Context& ctx) {
  return plan_split_k(p, ctx).bytes;
}

// Slice s: op(A)'s columns and op(B)'s rows [s slice_k, (s + 1) slice_k), as a strided
// batch into the partial sums. Row-major A steps along its rows (slices overlap in memory),
// A^T down them; B down its rows, B^T along them.
GemmProblem slices_problem(const GemmProblem& p, const SplitPlan& plan, float* partials) {
  GemmProblem q = p;
  q.k = plan.slice_k;
  q.alpha = 1.0, q.beta = 0.0;
  q.c = partials, q.ldc = plan.ldw;
  q.batch = plan.slices;
  q.stride_a = p.trans_a ? plan.slice_k * p.lda : plan.slice_k;
  q.stride_b = p.trans_b ? plan.slice_k : plan.slice_k * p.ldb;
  q.stride_c = p.m * plan.ldw;
  return q;
}

// The reduction: a block of 32 columns by `groups` slice groups per row of C.
Geometry reduce_geometry(const GemmProblem& p, const SplitPlan& plan) {
  const int groups = int(std::min<std::int64_t>(kernels::kReduceGroups, plan.slices));
  return {dim3(unsigned(ceil_div(p.n, 32)), unsigned(std::min<std::int64_t>(p.m, 65535))), dim3(32, unsigned(groups))};
}

void run_split_k(const GemmProblem& p, const KernelLaunch& l) {
  const SplitPlan plan = plan_split_k(p, l.context);
  if (plan.slices == 1) {  // nothing to split: rung 14 as it is
    run_tuned_config(choose_tuned_config(p), p, l);
    return;
  }
  if (l.workspace.bytes < plan.bytes)
    fail(ErrorCategory::internal, "cuda_split_k: the workspace is smaller than declared");
  auto* partials = static_cast<float*>(l.workspace.data);
  const GemmProblem q = slices_problem(p, plan, partials);
  run_tuned_config(plan.config, q, KernelLaunch{l.context, l.stream, Workspace{}});

  const kernels::GemmArgs<float> g = gemm_args<float>(p);
  with_transposes(p, [&](auto ta, auto tb) {
    launch_geometry<kernels::split_k_reduce_kernel<decltype(ta)::value, decltype(tb)::value>>(
        l.context, l.stream, reduce_geometry(p, plan), partials, int(plan.slices), q.stride_c, plan.ldw,
        int(plan.slices * plan.slice_k), g);
  });
}

// run_split_k's launches: rung 14 unsplit, or rung 14 over the slices then the reduction.
std::vector<LaunchPlan> split_k_plans(const GemmProblem& p, const LaunchQueries& q) {
  const SplitPlan plan = plan_split_k(p, q.sm_count, [&](TunedConfig c) { return tuned_config_blocks_per_sm(c, q); });
  if (plan.slices == 1) return tuned_config_plans(choose_tuned_config(p), p, q);
  std::vector<LaunchPlan> out = tuned_config_plans(plan.config, slices_problem(p, plan, nullptr), q);
  for (LaunchPlan& slice : out) {
    slice.purpose = std::to_string(plan.slices) + " K slices of " + std::to_string(plan.slice_k) +
                    " into f32 partial sums (blockIdx.z: the slice)";
    slice.elements = {};  // they write the partial sums, not C
  }
  with_transposes(p, [&](auto ta, auto tb) {
    out.push_back(plan_of<kernels::split_k_reduce_kernel<decltype(ta)::value, decltype(tb)::value>>(
        reduce_geometry(p, plan), "the reduction into C",
        "thread (tx, ty) of block (bx, by) sums the slices ty, ty + blockDim.y, ... of C's element at row by "
        "(stepping by gridDim.y), column bx * 32 + tx, plus the K columns left over; the block adds its " +
            std::to_string(reduce_geometry(p, plan).block.y) + " partial sums in a fixed order and thread ty = 0 writes C",
        [p](Dim3 b, Dim3 t) {
          std::vector<CElements> out;
          if (t.y == 0) add_clipped(out, p, b.y, ceil_div(p.m - b.y, 65535), 65535, b.x * 32 + t.x, 1, 1);
          return out;
        }));
  });
  return out;
}

std::optional<std::string> split_k_precondition(const GemmProblem& p) {
  // Rung 14's smallest tile makes the largest grid.
  return fits_grid(p, ceil_div(p.m, 64) * ceil_div(p.n, 64), 1);
}

}  // namespace

void register_composed_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_wgmma_padded", .backend = Backend::cuda, .rung = 22,
                 .summary = "Hopper for operands TMA cannot describe", .dtypes = {DType::bf16, DType::f16, DType::tf32},
                 .min_compute_capability = 90, .auto_priority = 0},  // the auto table decides, from measurements
                {.precondition = padded_precondition, .workspace_bytes = padded_workspace_bytes, .run = run_padded,
                 .launches = padded_plans},
                {.half_inputs_f32_output = true}});
  registry.add({{.name = "cuda_split_k", .backend = Backend::cuda, .rung = 23,
                 .summary = "split-K for the SIMT f32 track", .dtypes = {DType::f32}, .min_compute_capability = 80},
                {.precondition = split_k_precondition, .workspace_bytes = split_k_workspace_bytes, .run = run_split_k,
                 .launches = split_k_plans}});
}

}  // namespace gemmkit::cuda

// The Ozaki scheme II on the GPU (gemmkit/ozaki.hpp): FP64 and FP32 GEMM from
// int8 tensor-core GEMMs.
//   1. The scan, ozaki_row_exponents and ozaki_spread: the exponent of the
//      largest |entry| and the sum of |entries| of each row of op(A) and column
//      of op(B), the spread the default plan adds bits for, and the first row
//      or column holding Inf or NaN; one read of each operand. ozaki_shifts
//      turns the exponents into the powers of two that scale each row and
//      column to the plan's bits.
//   2. exact_to_int8_planes (exact_residues.cuh) scales, rounds and reduces
//      every entry modulo each prime, straight into the K-major int8 planes the
//      modular GEMMs read.
//   3. modular_gemm: one int8 GEMM per prime, residues out (the fused kernel on
//      sm_90).
//   4. ozaki_epilogue: per entry the Chinese remainder rebuild (OzakiRebuild:
//      only the words that hold C', no division), the integer rounded once to
//      a double, scaled back, alpha and beta.
// The workspace holds the scan, the planes and modular_gemm's scratch.
// ozaki_detail::ozaki_gemm_over_ranks runs the same steps with the moduli
// This file runs the steps (ozaki_steps.cu) in one process and registers the
// kernels; ozaki_ranks.cu runs them with the moduli split over ranks.
// split over the ranks of a job (ops/ozaki/ozaki_ranks.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arith/crt_math.hpp"
#include "ops/ozaki/ozaki_device.hpp"
#include "ops/ozaki/ozaki_ranks.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_problem.hpp"
#include "ops/exact/cuda/exact_planes.hpp"
#include "runtime/cuda/event.hpp"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/ozaki.hpp"
#include "ops/ozaki/cuda/ozaki_steps.hpp"

namespace gemmkit {

std::size_t ozaki_detail::workspace_bytes_on_device(const Context& ctx, const GemmProblem& problem, int moduli) {
  check_ozaki_problem(problem);
  const GemmProblem p = as_row_major(problem);
  return default_regions(ctx, p, largest_plan(p, moduli)).total;
}

namespace ozaki_detail {
namespace {

using cuda::padded16;

template <class T>
OzakiPlan run_ozaki(Context& ctx, const GemmProblem& problem, const GemmProblem& p, int moduli, const Regions& r,
                    Stream stream, Workspace workspace) {
  const cuda::DeviceScope scope(ctx.device());
  auto* base = static_cast<unsigned char*>(workspace.data);
  const ScanBuffers scan{reinterpret_cast<Scan*>(base), reinterpret_cast<int*>(base + r.shift_a),
                         reinterpret_cast<int*>(base + r.shift_b), reinterpret_cast<double*>(base + r.sum_a),
                         reinterpret_cast<double*>(base + r.sum_b)};
  auto* a_planes = reinterpret_cast<std::int8_t*>(base + r.a);
  auto* b_planes = reinterpret_cast<std::int8_t*>(base + r.b);
  auto* c_planes = reinterpret_cast<std::int8_t*>(base + r.c);
  if (p.k == 0 || p.alpha == 0) {  // no product: C = beta C0, no planes
    rebuild_rows<T>(OzakiRebuild{}, p, 0, p.m, nullptr, scan.shift_a, scan.shift_b, stream);
    return plan_ozaki(p.k, moduli, p.dtype);
  }
  const OzakiPlan plan = scan_operands<T>(problem, p, moduli, scan, stream);
  make_b_planes<T>(p, 0, plan.moduli, scan.shift_b, b_planes, stream);
  const OzakiRebuild rebuild = make_rebuild(plan.moduli);
  // Then per pass of rows r0 .. r0 + rows - 1 of C: its residues, its rebuild.
  const Workspace gemm{base + r.gemm, r.total - r.gemm};
  for (std::int64_t r0 = 0; r0 < p.m; r0 += r.block) {
    const std::int64_t rows = std::min(r.block, p.m - r0);
    pass_residues<T>(ctx, p, 0, plan.moduli, r0, rows, scan.shift_a, a_planes, b_planes, c_planes, gemm, stream);
    rebuild_rows<T>(rebuild, p, r0, rows, c_planes, scan.shift_a, scan.shift_b, stream);
  }
  return plan;
}


}  // namespace
}  // namespace ozaki_detail

OzakiPlan ozaki_detail::gemm_on_device(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace,
                                        int moduli) {
  if (ctx.backend() != Backend::cuda)
    fail(ErrorCategory::usage, "Ozaki emulation runs on the CUDA backend, not in a CPU context");
  check_ozaki_problem(problem);
  const GemmProblem p = as_row_major(problem);
  // As many rows of C per pass as the workspace holds.
  const OzakiPlan largest = largest_plan(p, moduli);
  const std::optional<Regions> r = regions_within(ctx, p, largest, workspace.bytes);
  if (!r)
    fail(ErrorCategory::usage,
         "Ozaki emulation of " + problem.shape_string() + " needs at least " +
             std::to_string(regions(ctx, p, largest, std::min(p.m, kMinBlock)).total) + " bytes of workspace (" +
             std::to_string(default_regions(ctx, p, largest).total) + " by ozaki_gemm_workspace_bytes), " +
             std::to_string(workspace.bytes) + " were given");
  if (reinterpret_cast<std::uintptr_t>(workspace.data) % kWorkspaceAlignment != 0)
    fail(ErrorCategory::usage,
         "the workspace must start on a " + std::to_string(kWorkspaceAlignment) + "-byte boundary");
  if (p.m == 0 || p.n == 0) return plan_ozaki(p.k, moduli, p.dtype);
  return p.dtype == DType::f64 ? run_ozaki<double>(ctx, problem, p, moduli, *r, stream, workspace)
                               : run_ozaki<float>(ctx, problem, p, moduli, *r, stream, workspace);
}

OzakiPlan ozaki_detail::run_host_on_device(const GemmProblem& host, int moduli, Context* context) {
  std::optional<Context> own;
  Context& ctx = context && context->backend() == Backend::cuda ? *context : own.emplace(Backend::cuda);
  check_ozaki_problem(host);
  const cuda::DeviceScope scope(ctx.device());
  const cuda::DeviceProblem device(host);
  const GemmProblem& d = device.get();
  const Workspace ws = ctx.workspace(nullptr, ozaki_gemm_workspace_bytes(ctx, d, moduli));
  const OzakiPlan plan = ozaki_gemm(ctx, d, nullptr, ws, moduli);
  device.copy_c_back();
  return plan;
}

namespace cuda {

void register_ozaki_kernels(Registry<GemmProblem>& registry) {
  for (const DType dtype : {DType::f64, DType::f32}) {
    const std::string bits = dtype == DType::f64 ? "FP64" : "FP32";
    registry.add(
        {{.name = "cuda_ozaki_" + std::string(dtype_name(dtype)), .backend = Backend::cuda,
          .summary = bits + " emulated on int8 tensor cores (Ozaki "
                            "scheme II): rows and columns scaled to "
                            "integers, modular int8 GEMMs, CRT rebuild "
                            "on the GPU; Inf and NaN refused",
          .dtypes = {dtype}, .min_compute_capability = 75},  // int8 tensor cores
         {.precondition = ozaki_detail::ozaki_rejects,
          .workspace_bytes = [](const GemmProblem& p, const Context& ctx) { return ozaki_gemm_workspace_bytes(ctx, p); },
          .run = [](const GemmProblem& p, const KernelLaunch& l) { ozaki_gemm(l.context, p, l.stream, l.workspace); }},
         {.takes_moduli = true,
          .workspace_with_options = [](const GemmProblem& p, const Context& ctx,
                                       const GemmOptions& o) { return ozaki_gemm_workspace_bytes(ctx, p, o.moduli); },
          .run_with_options = [](const GemmProblem& p, const KernelLaunch& l, const GemmOptions& o) {
            return ozaki_gemm(l.context, p, l.stream, l.workspace, o.moduli).report();
          }}});
  }
}

}  // namespace cuda
}  // namespace gemmkit

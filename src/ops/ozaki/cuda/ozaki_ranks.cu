// The Ozaki scheme II with its moduli split over the ranks of a job
// (ops/ozaki/ozaki_ranks.hpp): every rank scans, makes its moduli's planes and
// runs their modular GEMMs (the steps of ozaki_steps.cu); rank 0 gathers the
// residues of C and rebuilds it.
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

namespace ozaki_detail {
namespace {

using cuda::padded16;

// One rank's device memory for its share, beyond the shifts (sized on every
// rank from rank 0's row-major problem p, its plan and the rows of a pass):
// copies of op(A) and op(B) (ranks other than 0), the planes of its moduli of
// op(B) and of a pass of op(A), two buffers of a pass's residues of C (rank 0:
// of every modulus, gathered there; the others: of their own), and
// modular_gemm's workspace.
struct RankParts {
  std::size_t a = 0, b = 0, a_planes = 0, b_planes = 0, c_planes[2] = {}, gemm = 0, total = 0;
};

RankParts rank_parts(const Context& ctx, const GemmProblem& p, int moduli, int first, int count, bool rank0,
                     std::int64_t block) {
  const std::size_t kp = std::size_t(padded16(p.k)), np = std::size_t(padded16(p.n)), size = dtype_size(p.dtype);
  RankParts r;
  std::size_t at = 0;
  const auto part = [&](std::size_t bytes) { return std::exchange(at, at + workspace_aligned(bytes)); };
  r.a = part(rank0 ? 0 : std::size_t(p.a_span()) * size);
  r.b = part(rank0 ? 0 : std::size_t(p.b_span()) * size);
  r.a_planes = part(std::size_t(count) * std::size_t(block) * kp);
  r.b_planes = part(std::size_t(count) * std::size_t(p.n) * kp);
  for (std::size_t& c : r.c_planes) c = part(std::size_t(rank0 ? moduli : count) * std::size_t(block) * np);
  r.gemm = part(count > 0 ? modular_gemm_workspace_bytes(
                                ctx, cuda::planes_problem(block, p.n, p.k, count, nullptr, nullptr, nullptr, first))
                          : 0);
  r.total = at;
  return r;
}

// Rows of C per pass: rank 0's planes of op(A) (`own` moduli) and its two
// buffers of every modulus's residues of C, within the budget of a single
// process's passes for the largest share's planes of op(B).
std::int64_t rows_per_pass(const GemmProblem& p, int moduli, int own, int largest_share) {
  const double kp = double(padded16(p.k)), np = double(padded16(p.n));
  return pass_rows_within(p, largest_share, own * kp + 2 * moduli * np);
}

template <class T>
OzakiPlan run_over_ranks(Context& ctx, const GemmProblem& problem, GemmProblem p, int moduli, OzakiExchange& ex,
                         Stream compute, Stream comm, std::int64_t pass_rows) {
  const int rank = ex.rank(), size = ex.size();
  const bool rank0 = rank == 0;
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.alpha == 0) {  // no product: rank 0 scales C0, alone
    ex.agree([&] {
      if (rank0 && p.m > 0 && p.n > 0) {
        rebuild_rows<T>(OzakiRebuild{}, p, 0, p.m, nullptr, nullptr, nullptr, compute);
        GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(compute));
      }
    });
    return plan_ozaki(p.k, moduli, p.dtype);
  }
  // 1. Rank 0 scans the operands on `comm`: the plan, and the shifts of every
  //    row of op(A) and column of op(B), which go from there to every rank (m + n
  //    ints). Memory from ctx's pool (kept for the next call): the shifts and
  //    the scan's buffers for `comm`, the rest (RankParts) for `compute`.
  const std::size_t shifts_bytes = workspace_aligned(std::size_t(p.m + p.n) * sizeof(int));
  const std::size_t sum_a = shifts_bytes + workspace_aligned(sizeof(Scan));
  const std::size_t sum_b = sum_a + workspace_aligned(std::size_t(p.m) * sizeof(double));
  Workspace small;
  OzakiPlan plan;
  std::int64_t shared[3] = {};  // the plan's moduli and bits, the rows of a pass
  ex.agree([&] {
    small = ctx.workspace(comm, rank0 ? sum_b + std::size_t(p.n) * sizeof(double) : shifts_bytes);
    if (!rank0) return;
    auto* at = static_cast<unsigned char*>(small.data);
    plan = scan_operands<T>(problem, p, moduli,
                            {reinterpret_cast<Scan*>(at + shifts_bytes), reinterpret_cast<int*>(at),
                             reinterpret_cast<int*>(at) + p.m, reinterpret_cast<double*>(at + sum_a),
                             reinterpret_cast<double*>(at + sum_b)},
                            comm);
    const std::vector<int> first = ozaki_moduli_by_rank(plan.moduli, size);
    int largest = 0;
    for (int q = 0; q < size; ++q) largest = std::max(largest, first[q + 1] - first[q]);
    shared[0] = plan.moduli, shared[1] = plan.bits;
    shared[2] = pass_rows > 0 ? std::min(pass_rows, p.m) : rows_per_pass(p, plan.moduli, first[1], largest);
  });
  ex.share(shared, 3);
  plan.moduli = int(shared[0]), plan.bits = int(shared[1]);
  const std::int64_t block = shared[2];
  const std::vector<int> first = ozaki_moduli_by_rank(plan.moduli, size);
  const int mine = first[std::size_t(rank)], own = first[std::size_t(rank) + 1] - mine;
  const RankParts r = rank_parts(ctx, p, plan.moduli, mine, own, rank0, block);
  Workspace memory;
  ex.agree([&] { memory = ctx.workspace(compute, r.total); });
  auto* base = static_cast<unsigned char*>(memory.data);
  if (!rank0) p.a = base + r.a, p.b = base + r.b;
  int* shift_a = static_cast<int*>(small.data);
  const int* shift_b = shift_a + p.m;
  auto* a_planes = reinterpret_cast<std::int8_t*>(base + r.a_planes);
  auto* b_planes = reinterpret_cast<std::int8_t*>(base + r.b_planes);
  std::int8_t* c_planes[2] = {reinterpret_cast<std::int8_t*>(base + r.c_planes[0]),
                              reinterpret_cast<std::int8_t*>(base + r.c_planes[1])};
  const Workspace gemm{base + r.gemm, r.total - r.gemm};
  const std::size_t element = dtype_size(p.dtype);
  const auto plane_bytes = [&](std::int64_t rows) { return std::size_t(rows) * std::size_t(padded16(p.n)); };
  const OzakiRebuild rebuild = rank0 ? make_rebuild(plan.moduli) : OzakiRebuild{};

  // 2. The shifts, op(B) and op(A) from rank 0 on `comm`, op(B)'s planes as
  //    soon as it has come; 3. per pass, this rank's residues on `compute`,
  //    gathered into rank 0's buffer on `comm` while the next pass's are
  //    computed, and rebuilt there. Two buffers: a pass's residues wait for the
  //    gather of the pass before last (computed[], gathered[]).
  cuda::Event b_here, a_here, computed[2], gathered[2];
  ex.must_succeed([&] {
    // Rank 0's operands are only read.
    ex.broadcast(shift_a, std::size_t(p.m + p.n) * sizeof(int), comm);
    ex.broadcast(const_cast<void*>(p.b), std::size_t(p.b_span()) * element, comm);
    GEMMKIT_CUDA_CHECK(cudaEventRecord(b_here.get(), comm));
    ex.broadcast(const_cast<void*>(p.a), std::size_t(p.a_span()) * element, comm);
    GEMMKIT_CUDA_CHECK(cudaEventRecord(a_here.get(), comm));
    GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(compute, b_here.get()));
    if (own > 0) make_b_planes<T>(p, mine, own, shift_b, b_planes, compute);
    GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(compute, a_here.get()));
    const std::int64_t passes = ceil_div(p.m, block);
    std::vector<std::size_t> offset(static_cast<std::size_t>(size)), bytes(offset.size());
    for (std::int64_t i = 0; i <= passes; ++i) {
      if (i < passes) {
        const std::int64_t r0 = i * block, rows = std::min(block, p.m - r0);
        const int buffer = int(i % 2);
        if (i >= 2) GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(compute, gathered[buffer].get()));
        if (own > 0)
          pass_residues<T>(ctx, p, mine, own, r0, rows, shift_a, a_planes, b_planes, c_planes[buffer], gemm,
                           compute);
        GEMMKIT_CUDA_CHECK(cudaEventRecord(computed[buffer].get(), compute));
        GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(comm, computed[buffer].get()));
        for (std::size_t q = 0; q < offset.size(); ++q) {  // rank q's planes: planes first[q] .. of the pass
          offset[q] = std::size_t(first[q]) * plane_bytes(rows);
          bytes[q] = std::size_t(first[q + 1] - first[q]) * plane_bytes(rows);
        }
        ex.gather(c_planes[buffer], c_planes[buffer], offset, bytes, comm);
        GEMMKIT_CUDA_CHECK(cudaEventRecord(gathered[buffer].get(), comm));
      }
      if (rank0 && i >= 1) {  // the pass before, once gathered, after this pass's GEMMs are queued
        const std::int64_t r0 = (i - 1) * block, rows = std::min(block, p.m - r0);
        const int buffer = int((i - 1) % 2);
        GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(compute, gathered[buffer].get()));
        rebuild_rows<T>(rebuild, p, r0, rows, c_planes[buffer], shift_a, shift_b, compute);
      }
    }
  });
  ex.agree([&] {
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(compute));
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(comm));
  });
  return plan;
}

}  // namespace

OzakiPlan over_ranks_on_device(Context& ctx, const GemmProblem& problem, int moduli, OzakiExchange& ex,
                               Stream compute, Stream comm, std::int64_t pass_rows) {
  // Rank 0's problem, checked there, in its row-major form; its shape and
  // scalars to every rank (their matrices are their copies, later).
  GemmProblem p;
  ex.agree([&] {
    if (ctx.backend() != Backend::cuda)
      fail(ErrorCategory::usage, "Ozaki emulation runs on the CUDA backend, not in a CPU context");
    if (ex.rank() != 0) return;
    check_ozaki_problem(problem);
    if (moduli != 0) plan_ozaki(problem.k, moduli, problem.dtype);  // the count's own error, early
    p = as_row_major(problem);
  });
  std::int64_t shape[11] = {std::int64_t(p.dtype), p.m,       p.n,
                            p.k,                   p.lda,     p.ldb,
                            p.ldc,                 p.trans_a, p.trans_b,
                            std::bit_cast<std::int64_t>(p.alpha), std::bit_cast<std::int64_t>(p.beta)};
  ex.share(shape, 11);
  if (ex.rank() != 0) {
    p.dtype = DType(shape[0]), p.m = shape[1], p.n = shape[2], p.k = shape[3];
    p.lda = shape[4], p.ldb = shape[5], p.ldc = shape[6], p.trans_a = shape[7] != 0, p.trans_b = shape[8] != 0;
    p.alpha = std::bit_cast<double>(shape[9]), p.beta = std::bit_cast<double>(shape[10]);
  }
  const cuda::DeviceScope scope(ctx.device());
  return p.dtype == DType::f64 ? run_over_ranks<double>(ctx, problem, p, moduli, ex, compute, comm, pass_rows)
                               : run_over_ranks<float>(ctx, problem, p, moduli, ex, compute, comm, pass_rows);
}

}  // namespace ozaki_detail

}  // namespace gemmkit

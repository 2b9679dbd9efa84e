// Exact integer GEMM on the GPU (include/gemmkit/exact.hpp): the bound, residues of the
// operands modulo enough int8 primes, one modular int8 GEMM per prime (modular_gemm), the
// Chinese remainder rebuild (crt_rebuild) and an epilogue in multi-word integers. Why each
// step is exact: docs/exact.md.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>

#include "ops/exact/exact_device.hpp"
#include "ops/exact/exact_text.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_problem.hpp"
#include "ops/exact/cuda/exact_planes.hpp"
#include "ops/exact/cuda/exact_residues.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit {
namespace {

using cuda::ceil_div;
using cuda::launch_planes;
using cuda::moduli_table;
using cuda::padded16;
using cuda::kernels::ModuliTable;
using cuda::kernels::PlaneKind;

// The conversion's grid (and the epilogue's) puts row tiles on y: kMaxPlaneRows at most.
using cuda::kMaxPlaneRows;

// The first 256 bytes of the workspace: the report's key (the first overflowing entry's
// index in the caller's row-major order; all ones: none), max |A|, max |B|, and the words
// per entry of the rebuilt product (the epilogue's `limbs`).
struct ReportWords {
  unsigned long long key, max_a, max_b, limbs;
};

// The modular GEMM of the first `moduli` primes on the planes of a workspace (pointers null
// when only sizing).
ModularGemmProblem modular_problem(const GemmProblem& p, int moduli, const std::int8_t* a,
                                   const std::int8_t* b, std::int8_t* c) {
  return cuda::planes_problem(p.m, p.n, p.k, moduli, a, b, c);
}

// Byte offsets of the workspace's parts for a row-major problem, sized for the worst plan of
// its dtype and k.
struct Regions {
  int moduli = 0, limbs = 0;  // of the worst plan
  std::size_t a = 0, b = 0, c = 0, words = 0, gemm = 0, total = 0;
};

// Without a context, everything but the modular GEMM's part (and the total).
Regions regions(const Context* ctx, const GemmProblem& p) {
  const ExactPlan worst = worst_case_exact_plan(p.dtype, p.k);
  Regions r;
  r.moduli = worst.moduli;
  r.limbs = worst.limbs;
  const std::size_t q = std::size_t(worst.moduli), kp = std::size_t(padded16(p.k)), np = std::size_t(padded16(p.n));
  std::size_t at = workspace_aligned(sizeof(ReportWords));
  r.a = at, at += workspace_aligned(q * std::size_t(p.m) * kp);
  r.b = at, at += workspace_aligned(q * std::size_t(p.n) * kp);
  r.c = at, at += workspace_aligned(q * std::size_t(p.m) * np);
  r.words = at, at += workspace_aligned(std::size_t(p.m) * std::size_t(p.n) * std::size_t(worst.limbs) * 8);
  r.gemm = at;
  // The int8 GEMMs' scratch: modular_gemm's, or cuBLAS's for the digit slices' plain GEMMs.
  if (worst.moduli > 0 && ctx)
    at += workspace_aligned(std::max(modular_gemm_workspace_bytes(*ctx, modular_problem(p, worst.moduli, nullptr, nullptr, nullptr)),
                           cuda::cublas_workspace_bytes(*ctx)));
  r.total = at;
  return r;
}

// Why the exact GEMM cannot run a (row-major) problem, or nullopt.
std::optional<std::string> exact_rejects(const GemmProblem& p) {
  if (p.dtype != DType::i32 && p.dtype != DType::i64)
    return "dtype " + std::string(dtype_name(p.dtype)) + " is not supported (i32 and i64 are)";
  if (p.c_dtype() != p.dtype && !(p.dtype == DType::i32 && p.c_dtype() == DType::i64))
    return "C in " + std::string(dtype_name(p.c_dtype())) + " is not supported";
  if (p.m > kMaxPlaneRows || p.n > kMaxPlaneRows)
    return "more than " + std::to_string(kMaxPlaneRows) + " rows or columns";
  return std::nullopt;
}

template <class T>
void launch_max_abs(const void* x, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                    unsigned long long* out, Stream stream) {
  if (rows == 0 || cols == 0) return;
  const std::int64_t y = std::min<std::int64_t>(rows, 4096);
  const std::int64_t xb = std::min<std::int64_t>(ceil_div(cols, 256), std::max<std::int64_t>(1, 4096 / y));
  cuda::kernels::exact_max_abs<T><<<dim3(unsigned(xb), unsigned(y)), 256, 0, stream>>>(
      static_cast<const T*>(x), rows, cols, ld, out);
  cuda::check_launch("exact_max_abs");
}

template <class CT>
void launch_epilogue(const GemmProblem& p, const std::uint64_t* x, int limbs, const ExactLimbsOut* to,
                     bool key_transposed, unsigned long long* report, Stream stream) {
  const dim3 grid(unsigned(ceil_div(p.n, 256)), unsigned(std::min<std::int64_t>(p.m, 65535)));
  const auto alpha = static_cast<long long>(p.alpha), beta = static_cast<long long>(p.beta);
  auto* c = static_cast<CT*>(p.c);
  if (to)
    cuda::kernels::exact_epilogue<CT, true><<<grid, 256, 0, stream>>>(x, limbs, p.m, p.n, alpha, beta, c, p.ldc,
                                                                      to->words, to->ld, to->limbs,
                                                                      key_transposed, report);
  else
    cuda::kernels::exact_epilogue<CT, false><<<grid, 256, 0, stream>>>(x, limbs, p.m, p.n, alpha, beta, c, p.ldc,
                                                                       nullptr, 0, 0, key_transposed, report);
  cuda::check_launch("exact_epilogue");
}

void check_exact_problem(const Context& ctx, const GemmProblem& problem, const ExactLimbsOut* to) {
  GemmProblem checked = problem;
  static std::int64_t unread;  // limbs out and beta == 0: C is neither read nor written
  if (to && problem.beta == 0 && !checked.c) checked.c = &unread;
  validate(checked);
  const GemmProblem p = as_row_major(problem);
  if (auto why = exact_rejects(p)) fail(ErrorCategory::usage, "exact integer GEMM of " + problem.shape_string() + ": " + *why);
  if (problem.batch != 1)
    fail(ErrorCategory::usage, "exact integer GEMM takes one product at a time, not a batch of " +
                                   std::to_string(problem.batch) + " (gemm() runs a batch product by product)");
  if (to) {
    const int needed = exact_output_limbs(p);
    if (to->limbs < needed || to->ld < std::max<std::int64_t>(1, p.n) || (p.m > 0 && p.n > 0 && !to->words))
      fail(ErrorCategory::usage, "exact integer GEMM of " + problem.shape_string() + ": the limbs output needs " +
                                     std::to_string(needed) + " words per entry and ld >= " +
                                     std::to_string(p.n) + " (has " + std::to_string(to->limbs) + " and " +
                                     std::to_string(to->ld) + ")");
  }
  (void)ctx;
}

[[noreturn]] void throw_overflow(const GemmProblem& problem, const ExactGemmReport& report) {
  throw OverflowError(report.overflow_row, report.overflow_col, report.value, std::string(dtype_name(problem.c_dtype())));
}

}  // namespace

namespace exact_detail {

std::size_t workspace_bytes_on_device(const Context& ctx, const GemmProblem& problem) {
  const GemmProblem p = as_row_major(problem);
  if (auto why = exact_rejects(p)) fail(ErrorCategory::usage, "exact integer GEMM of " + problem.shape_string() + ": " + *why);
  return regions(&ctx, p).total;
}

ExactPlan gemm_on_device(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace,
                         const ExactLimbsOut* limbs_out) {
  if (ctx.backend() != Backend::cuda)
    fail(ErrorCategory::usage, "exact integer GEMM runs on the CUDA backend, not in a CPU context");
  check_exact_problem(ctx, problem, limbs_out);
  const GemmProblem p = as_row_major(problem);
  const Regions r = regions(&ctx, p);
  if (workspace.bytes < r.total)
    fail(ErrorCategory::usage, "exact integer GEMM of " + problem.shape_string() + " needs " +
                                   std::to_string(r.total) + " bytes of workspace, " +
                                   std::to_string(workspace.bytes) + " were given");
  if (reinterpret_cast<std::uintptr_t>(workspace.data) % kWorkspaceAlignment != 0)
    fail(ErrorCategory::usage, "the workspace must start on a " + std::to_string(kWorkspaceAlignment) + "-byte boundary");
  const cuda::DeviceScope scope(ctx.device());
  auto* base = static_cast<unsigned char*>(workspace.data);
  auto* words = reinterpret_cast<ReportWords*>(base);
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(&words->key, 0xff, sizeof words->key, stream));
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(&words->max_a, 0, 2 * sizeof words->max_a, stream));
  ExactPlan plan;
  if (p.m == 0 || p.n == 0) return plan;
  const bool i64 = p.dtype == DType::i64;

  // 1. The bound: max |op(A)|, max |op(B)| (any order of storage: the maxima of the stored
  //    matrices). alpha == 0 or k == 0: the product is zero and A and B are not read.
  if (p.alpha != 0 && p.k > 0) {
    if (i64) {
      launch_max_abs<std::int64_t>(p.a, p.a_rows(), p.a_cols(), p.lda, &words->max_a, stream);
      launch_max_abs<std::int64_t>(p.b, p.b_rows(), p.b_cols(), p.ldb, &words->max_b, stream);
    } else {
      launch_max_abs<std::int32_t>(p.a, p.a_rows(), p.a_cols(), p.lda, &words->max_a, stream);
      launch_max_abs<std::int32_t>(p.b, p.b_rows(), p.b_cols(), p.ldb, &words->max_b, stream);
    }
    unsigned long long maxima[2] = {0, 0};
    GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(maxima, &words->max_a, sizeof maxima, cudaMemcpyDeviceToHost, stream));
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    plan = plan_exact_gemm(maxima[0], maxima[1], p.k);
    // Digit slices keep their int32 products in the residue planes' room (sized for the
    // worst plan's moduli): 4 bytes an entry per pair of digits.
    if (plan.method == ExactPlan::Method::digits && 4 * plan.gemms > r.moduli)
      plan = plan_exact_gemm(maxima[0], maxima[1], p.k, /*digits_allowed=*/false);
  }

  // 2-4. Residues, one modular GEMM per prime, the CRT rebuild into `limbs` words an entry.
  const auto* x = reinterpret_cast<const std::uint64_t*>(base + r.words);
  int limbs = 0;  // 0: the product is zero
  if (plan.method == ExactPlan::Method::residues) {
    if (plan.moduli > r.moduli || plan.limbs > r.limbs)
      fail(ErrorCategory::internal, "exact GEMM plan beyond its dtype's worst case");
    auto* a_planes = reinterpret_cast<std::int8_t*>(base + r.a);
    auto* b_planes = reinterpret_cast<std::int8_t*>(base + r.b);
    auto* c_planes = reinterpret_cast<std::int8_t*>(base + r.c);
    const ModuliTable table = moduli_table(plan.moduli);
    // A_q = op(A) (m x k): stored k x m when transposed. B_q^T (n x k) = op(B)^T: B stored
    // n x k when transposed reads directly, k x n otherwise through the tile transpose.
    if (i64) {
      launch_planes<std::int64_t, PlaneKind::residues>(p.a, p.trans_a, p.lda, p.m, p.k, a_planes, plan.moduli, table, stream);
      launch_planes<std::int64_t, PlaneKind::residues>(p.b, !p.trans_b, p.ldb, p.n, p.k, b_planes, plan.moduli, table, stream);
    } else {
      launch_planes<std::int32_t, PlaneKind::residues>(p.a, p.trans_a, p.lda, p.m, p.k, a_planes, plan.moduli, table, stream);
      launch_planes<std::int32_t, PlaneKind::residues>(p.b, !p.trans_b, p.ldb, p.n, p.k, b_planes, plan.moduli, table, stream);
    }
    const ModularGemmProblem g = modular_problem(p, plan.moduli, a_planes, b_planes, c_planes);
    const std::size_t gemm_bytes = modular_gemm_workspace_bytes(ctx, g);
    if (gemm_bytes > r.total - r.gemm)
      fail(ErrorCategory::internal, "modular_gemm asks for more workspace than the worst plan's");
    modular_gemm(ctx, g, stream, Workspace{gemm_bytes ? base + r.gemm : nullptr, gemm_bytes});
    CrtProblem crt;
    crt.rows = p.m, crt.cols = p.n;
    crt.moduli = g.moduli;
    crt.residues = c_planes;
    crt.ld = g.ldc, crt.plane_stride = g.stride_c;
    crt.out = reinterpret_cast<std::uint64_t*>(base + r.words);
    crt.ld_out = p.n;
    crt.limbs = plan.limbs;
    // Limbs out of AB itself: the rebuild writes them there (sign-extended to the caller's
    // words), and no epilogue runs.
    const bool direct = limbs_out && p.alpha == 1 && p.beta == 0;
    if (direct) crt.out = limbs_out->words, crt.ld_out = limbs_out->ld, crt.limbs = limbs_out->limbs;
    crt_rebuild(ctx, crt, stream);
    if (direct) return plan;
    limbs = plan.limbs;
  }

  // 2-4 for digit slices: digits of the operands, one plain int8 GEMM per pair of digits
  // (int32 sums, exact for k <= 131071), the pairs summed with their weights.
  if (plan.method == ExactPlan::Method::digits) {
    if (plan.limbs > r.limbs) fail(ErrorCategory::internal, "exact GEMM digit plan beyond its dtype's worst case");
    auto* a_planes = reinterpret_cast<std::int8_t*>(base + r.a);
    auto* b_planes = reinterpret_cast<std::int8_t*>(base + r.b);
    auto* products = reinterpret_cast<int*>(base + r.c);
    const ModuliTable none{};
    if (i64) {
      launch_planes<std::int64_t, PlaneKind::digits>(p.a, p.trans_a, p.lda, p.m, p.k, a_planes, plan.digits_a, none, stream);
      launch_planes<std::int64_t, PlaneKind::digits>(p.b, !p.trans_b, p.ldb, p.n, p.k, b_planes, plan.digits_b, none, stream);
    } else {
      launch_planes<std::int32_t, PlaneKind::digits>(p.a, p.trans_a, p.lda, p.m, p.k, a_planes, plan.digits_a, none, stream);
      launch_planes<std::int32_t, PlaneKind::digits>(p.b, !p.trans_b, p.ldb, p.n, p.k, b_planes, plan.digits_b, none, stream);
    }
    const std::int64_t kp = padded16(p.k), np = padded16(p.n);
    {
      // D_ab (m x n row-major, ld np) = A_a B_b: column-major to cuBLAS, D^T = B_b^T^T A_a^T,
      // B_b^T and A_a stored K-major: "TN", the layout of its int8 tensor-core kernels.
      const cuda::CublasCall call(ctx, stream, Workspace{base + r.gemm, r.total - r.gemm});
      const int one = 1, zero = 0;
      for (int da = 0; da < plan.digits_a; ++da)
        for (int db = 0; db < plan.digits_b; ++db)
          GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmEx_64)(call.get(), CUBLAS_OP_T, CUBLAS_OP_N, int(p.n), int(p.m), int(kp), &one,
                                            b_planes + std::int64_t(db) * p.n * kp, CUDA_R_8I, int(kp),
                                            a_planes + std::int64_t(da) * p.m * kp, CUDA_R_8I, int(kp), &zero,
                                            products + std::int64_t(da * plan.digits_b + db) * p.m * np, CUDA_R_32I,
                                            int(np), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    }
    const bool direct = limbs_out && p.alpha == 1 && p.beta == 0;
    std::uint64_t* out = direct ? limbs_out->words : reinterpret_cast<std::uint64_t*>(base + r.words);
    const dim3 grid(unsigned(ceil_div(p.n, 256)), unsigned(std::min<std::int64_t>(p.m, 65535)));
    cuda::kernels::exact_digits_combine<<<grid, 256, 0, stream>>>(products, plan.digits_a, plan.digits_b, p.m * np, np,
                                                                  p.m, p.n, out, direct ? limbs_out->ld : p.n,
                                                                  direct ? limbs_out->limbs : plan.limbs);
    cuda::check_launch("exact_digits_combine");
    if (direct) return plan;
    limbs = plan.limbs;
  }

  // 5. C = alpha X + beta C0, exact; an entry that does not fit C is reported.
  const bool key_transposed = problem.layout == Layout::col_major;
  if (p.c_dtype() == DType::i64)
    launch_epilogue<std::int64_t>(p, x, limbs, limbs_out, key_transposed, &words->key, stream);
  else
    launch_epilogue<std::int32_t>(p, x, limbs, limbs_out, key_transposed, &words->key, stream);
  return plan;
}

ExactGemmReport report_on_device(const GemmProblem& problem, Stream stream, Workspace workspace) {
  ExactGemmReport report;
  if (problem.m == 0 || problem.n == 0) return report;
  if (!workspace.data || workspace.bytes < sizeof(ReportWords))
    fail(ErrorCategory::usage, "exact_gemm_report: the workspace holds no report");
  ReportWords words{};
  GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(&words, workspace.data, sizeof words, cudaMemcpyDeviceToHost, stream));
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (words.key == ~0ull) return report;
  // The key is the entry's index in the caller's C, row-major: i * N + j.
  report.overflow_row = std::int64_t(words.key / std::uint64_t(problem.n));
  report.overflow_col = std::int64_t(words.key % std::uint64_t(problem.n));
  // Its value: alpha X + beta C0 from the rebuilt X (row-major form: C^T's entry (col, row)
  // for a column-major C) and C0, which the epilogue did not overwrite there.
  const GemmProblem p = as_row_major(problem);
  const bool col = problem.layout == Layout::col_major;
  const std::int64_t i = col ? report.overflow_col : report.overflow_row, j = col ? report.overflow_row : report.overflow_col;
  const int limbs = int(words.limbs);
  std::uint64_t x[cuda::kernels::kExactWords] = {};
  if (limbs > 0 && limbs <= cuda::kernels::kExactWords)
    GEMMKIT_CUDA_CHECK(cudaMemcpy(x, static_cast<const unsigned char*>(workspace.data) + regions(nullptr, p).words +
                                         std::size_t((i * p.n + j) * limbs) * 8,
                                  std::size_t(limbs) * 8, cudaMemcpyDeviceToHost));
  std::int64_t c0 = 0;
  if (p.beta != 0) {
    const std::size_t size = dtype_size(p.c_dtype());
    unsigned char bytes[8] = {};
    GEMMKIT_CUDA_CHECK(cudaMemcpy(bytes, static_cast<const unsigned char*>(p.c) + std::size_t(i * p.ldc + j) * size,
                                  size, cudaMemcpyDeviceToHost));
    if (size == 4) {
      std::int32_t v;
      std::memcpy(&v, bytes, 4);
      c0 = v;
    } else {
      std::memcpy(&c0, bytes, 8);
    }
  }
  report.value = detail::exact_value_text(x, limbs <= cuda::kernels::kExactWords ? limbs : 0,
                                          std::int64_t(p.alpha), std::int64_t(p.beta), c0);
  return report;
}

ExactPlan run_host_on_device(const GemmProblem& host, const ExactLimbsOut* limbs_out, Context* context) {
  std::optional<Context> own;
  Context& ctx = context && context->backend() == Backend::cuda ? *context : own.emplace(Backend::cuda);
  check_exact_problem(ctx, host, limbs_out);
  if (host.m == 0 || host.n == 0) return {};
  const cuda::DeviceScope scope(ctx.device());
  const GemmProblem rm = as_row_major(host);
  // C as it is (C0 when beta != 0), unless only limbs are written.
  const cuda::DeviceProblem device(host, !limbs_out || host.beta != 0);
  const GemmProblem& d = device.get();
  // Limbs on the device, tightly packed (rows x cols of the row-major form).
  std::optional<cuda::DeviceBuffer<std::uint64_t>> words;
  ExactLimbsOut device_limbs;
  if (limbs_out) {
    words.emplace(std::size_t(rm.m * rm.n) * std::size_t(limbs_out->limbs));
    device_limbs = {words->data(), rm.n, limbs_out->limbs};
  }
  const Workspace ws = ctx.workspace(nullptr, exact_integer_gemm_workspace_bytes(ctx, d));
  const ExactPlan plan = exact_integer_gemm(ctx, d, nullptr, ws, limbs_out ? &device_limbs : nullptr);
  const ExactGemmReport report = exact_gemm_report(d, nullptr, ws);
  if (report.overflow()) throw_overflow(host, report);
  if (limbs_out) {
    const std::size_t row_bytes = std::size_t(rm.n * limbs_out->limbs) * 8;
    GEMMKIT_CUDA_CHECK(cudaMemcpy2D(limbs_out->words, std::size_t(limbs_out->ld * limbs_out->limbs) * 8, words->data(),
                                    row_bytes, row_bytes, std::size_t(rm.m), cudaMemcpyDeviceToHost));
  } else {
    device.copy_c_back();
  }
  return plan;
}

}  // namespace exact_detail

namespace {

// The registry's launch: C (or the limbs) exact, an entry that does not fit C an OverflowError
// (it waits for the stream to read the report), and how it ran.
GemmRunReport run_exact(const GemmProblem& p, const KernelLaunch& l, const GemmOptions& o) {
  const ExactPlan plan = exact_integer_gemm(l.context, p, l.stream, l.workspace, o.limbs.words ? &o.limbs : nullptr);
  const ExactGemmReport report = exact_gemm_report(p, l.stream, l.workspace);
  if (report.overflow()) throw_overflow(p, report);
  GemmRunReport ran = plan.report();
  if (o.limbs.words) ran.facts.push_back({"limbs", o.limbs.limbs});
  return ran;
}

}  // namespace

namespace cuda {

void register_exact_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_exact_residues", .backend = Backend::cuda,
                 .summary = "exact i32/i64 GEMM: residues mod int8 primes, modular int8 tensor-core GEMMs, CRT on "
                            "the GPU; an entry that does not fit C is an error, never wrapped",
                 .dtypes = {DType::i32, DType::i64}, .min_compute_capability = 75,  // int8 tensor cores
                 .auto_priority = 1},  // the only CUDA kernel of integer dtypes
                {.precondition = exact_rejects,
                 .workspace_bytes = [](const GemmProblem& p, const Context& ctx) { return exact_integer_gemm_workspace_bytes(ctx, p); },
                 .run = [](const GemmProblem& p, const KernelLaunch& l) { run_exact(p, l, GemmOptions{}); }},
                {.wider_integer_output = true, .exact_integers = true, .writes_limbs = true,
                 .run_with_options = run_exact}});
}

}  // namespace cuda
}  // namespace gemmkit

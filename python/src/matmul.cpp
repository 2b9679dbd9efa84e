// GEMM for the Python package: gemmkit._gemmkit.gemm (one call of the device API, or of the
// host API for host memory on the CUDA backend), GemmPlan (a plan of the device API, run
// many times: gemmkit.Plan), gemm_verify (the library's verification of a
// finished product in host memory) and gemm_time (the same gemm() call timed in a C++ loop,
// for the benchmark). Problems arrive as plain numbers: pointers as ints, sizes, leading
// dimensions and batch strides in elements (python/gemmkit/_matmul.py plans them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/plan.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::python {

namespace {

// The problem's numbers, in the order every function of this file takes them.
struct ProblemArgs {
  std::string_view dtype, out_dtype;
  bool trans_a, trans_b;
  std::int64_t m, n, k;
  double alpha;
  std::uintptr_t a;
  std::int64_t lda;
  std::uintptr_t b;
  std::int64_t ldb;
  double beta;
  std::uintptr_t c;
  std::int64_t ldc;
  std::int64_t batch, stride_a, stride_b, stride_c;
  bool col_major = false;

  GemmProblem problem() const {
    GemmProblem p;
    p.layout = col_major ? Layout::col_major : Layout::row_major;
    p.dtype = dtype_from_name(dtype);
    if (!out_dtype.empty()) p.out_dtype = dtype_from_name(out_dtype);
    p.trans_a = trans_a;
    p.trans_b = trans_b;
    p.m = m, p.n = n, p.k = k;
    p.alpha = alpha, p.beta = beta;
    p.a = reinterpret_cast<const void*>(a), p.lda = lda;
    p.b = reinterpret_cast<const void*>(b), p.ldb = ldb;
    p.c = reinterpret_cast<void*>(c), p.ldc = ldc;
    p.batch = batch;
    p.stride_a = stride_a, p.stride_b = stride_b, p.stride_c = stride_c;
    return p;
  }
};

GemmOptions options_for(Context& ctx, std::string_view kernel) {
  GemmOptions options;
  options.backend = ctx.backend();
  options.kernel = std::string(kernel);  // the library's lookup: "auto" or a name
  return options;
}

// Runs the problem in ctx: the device API (host pointers for the CPU context, device
// pointers of its device for a CUDA one, queued on `stream`), or, for host memory on a CUDA
// context, the host API (copies to the device and back, waiting for it). moduli != 0: the
// kernel option of the kernels that take it (the Ozaki emulation); the library refuses it to
// others.
std::string run(Context& ctx, const GemmProblem& p, std::string_view kernel, Stream stream, bool host,
                int moduli) {
  GemmOptions options = options_for(ctx, kernel);
  options.moduli = moduli;
  if (host && ctx.backend() == Backend::cuda) {
    options.context = &ctx;
    return gemm(p, options);
  }
  return gemm(ctx, p, stream, options).name;
}

// The arguments every function shares, as nanobind names them (defaults: one product).
#define GEMMKIT_PROBLEM_ARGS                                                                       \
  nb::arg("dtype"), nb::arg("out_dtype"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("m"),   \
      nb::arg("n"), nb::arg("k"), nb::arg("alpha"), nb::arg("a"), nb::arg("lda"), nb::arg("b"),   \
      nb::arg("ldb"), nb::arg("beta"), nb::arg("c"), nb::arg("ldc"), nb::arg("batch") = 1,         \
      nb::arg("stride_a") = 0, nb::arg("stride_b") = 0, nb::arg("stride_c") = 0

}  // namespace

void bind_matmul(nb::module_& m) {
  m.def(
      "gemm_output_dtypes",
      [](std::string_view dtype, std::string_view c_dtype) {
        const DType in = dtype_from_name(dtype);
        if (!c_dtype.empty())
          if (const std::string why = output_dtype_refusal(in, dtype_from_name(c_dtype)); !why.empty())
            fail(ErrorCategory::usage, why);
        std::vector<std::string> names;
        for (const DType d : output_dtypes(in)) names.emplace_back(dtype_name(d));
        return names;
      },
      nb::arg("dtype"), nb::arg("c_dtype") = "",
      "The dtypes C may have for inputs of `dtype`, the default first (the library's rule: "
      "f32 too for f16 and bf16, i32 for i8, i64 too for i32). With c_dtype: a UsageError "
      "with the library's reason when C cannot be that.");

  m.def(
      "gemm",
      [](Context& ctx, std::string_view dtype, std::string_view out_dtype, bool trans_a, bool trans_b,
         std::int64_t m_, std::int64_t n, std::int64_t k, double alpha, std::uintptr_t a, std::int64_t lda,
         std::uintptr_t b, std::int64_t ldb, double beta, std::uintptr_t c, std::int64_t ldc,
         std::int64_t batch, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
         std::string_view kernel, std::uintptr_t stream, bool host, int moduli, bool col_major) {
        const ProblemArgs args{dtype, out_dtype, trans_a, trans_b, m_, n, k, alpha, a, lda, b,
                               ldb, beta, c, ldc, batch, stride_a, stride_b, stride_c, col_major};
        return run(ctx, args.problem(), kernel, stream_from_int(stream), host, moduli);
      },
      nb::arg("context"), GEMMKIT_PROBLEM_ARGS, nb::arg("kernel") = "auto", nb::arg("stream") = 0,
      nb::arg("host") = false, nb::arg("moduli") = 0, nb::arg("col_major") = false,
      nb::call_guard<nb::gil_scoped_release>(),
      "C = alpha op(A) op(B) + beta C, row-major, on pointers (ints). dtype: 'f64', 'f32', "
      "'tf32' (f32 storage), 'f16', 'bf16', 'i8', 'i32', 'i64'; out_dtype: '' (C of the input "
      "dtype) or one of gemm_output_dtypes(dtype) (i32 for i8). Integer results in host memory "
      "are exact or a NumericError naming the entry. Sizes, leading dimensions and batch strides in "
      "elements. The CPU context: host pointers, run now. A CUDA context: device pointers of "
      "its device, queued on `stream` (a cudaStream_t as an int; 0 the legacy default stream) "
      "without waiting; with host=True host pointers, copied to the device and back (the host "
      "API, which waits). kernel: a catalogue name or 'auto'. moduli: the kernel option of the "
      "kernels that take it (the Ozaki emulation's int8 moduli; 0: its default plan). "
      "col_major: every matrix stored by columns (the arguments as BLAS takes them), "
      "else by rows. Returns the kernel that ran.");

  nb::class_<GemmPlan>(m, "GemmPlan",
                       "A GEMM plan of the device API (gemmkit/plan.hpp) on pointers (ints): the "
                       "kernel and workspace chosen once for a problem, run on operands of that "
                       "problem. gemmkit.Plan is the array-level class.")
      .def(
          "__init__",
          [](GemmPlan* self, Context& ctx, std::string_view dtype, std::string_view out_dtype, bool trans_a,
             bool trans_b, std::int64_t m_, std::int64_t n, std::int64_t k, std::uintptr_t a, std::int64_t lda,
             std::uintptr_t b, std::int64_t ldb, std::uintptr_t c, std::int64_t ldc, std::int64_t batch,
             std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c, std::string_view kernel,
             bool col_major, int moduli) {
            const ProblemArgs args{dtype, out_dtype, trans_a, trans_b, m_, n, k, 1.0, a, lda, b,
                                   ldb, 0.0, c, ldc, batch, stride_a, stride_b, stride_c, col_major};
            GemmOptions options = options_for(ctx, kernel);
            options.moduli = moduli;
            new (self) GemmPlan(ctx, args.problem(), options);
          },
          nb::arg("context"), nb::arg("dtype"), nb::arg("out_dtype"), nb::arg("trans_a"), nb::arg("trans_b"),
          nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a"), nb::arg("lda"), nb::arg("b"), nb::arg("ldb"),
          nb::arg("c"), nb::arg("ldc"), nb::arg("batch") = 1, nb::arg("stride_a") = 0, nb::arg("stride_b") = 0,
          nb::arg("stride_c") = 0, nb::arg("kernel") = "auto", nb::arg("col_major") = false, nb::arg("moduli") = 0,
          nb::keep_alive<1, 2>(),  // the plan refers to its context
          "Plans the problem gemm() takes, without alpha and beta; the pointers stand for the "
          "operands' alignment (0: as aligned as any kernel asks). moduli: the kernel option of "
          "the kernels that take it (the Ozaki emulation). UsageError for an invalid problem, an "
          "unknown kernel or an option the kernel does not take; a problem no kernel takes gives "
          "can_run False.")
      .def_prop_ro("can_run", &GemmPlan::can_run)
      .def_prop_ro("why_not", &GemmPlan::why_not, "Why it cannot run; '' when it can.")
      .def_prop_ro("kernel", [](const GemmPlan& plan) { return plan.kernel().name; },
                   "The kernel it runs (UsageError with why_not when it cannot run).")
      .def_prop_ro("workspace_bytes", &GemmPlan::workspace_bytes)
      .def(
          "run",
          [](const GemmPlan& plan, std::string_view dtype, std::string_view out_dtype, bool trans_a, bool trans_b,
             std::int64_t m_, std::int64_t n, std::int64_t k, double alpha, std::uintptr_t a, std::int64_t lda,
             std::uintptr_t b, std::int64_t ldb, double beta, std::uintptr_t c, std::int64_t ldc,
             std::int64_t batch, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
             std::uintptr_t stream, bool col_major) {
            const ProblemArgs args{dtype, out_dtype, trans_a, trans_b, m_, n, k, alpha, a, lda, b,
                                   ldb, beta, c, ldc, batch, stride_a, stride_b, stride_c, col_major};
            plan.run(args.problem(), stream_from_int(stream));
          },
          GEMMKIT_PROBLEM_ARGS, nb::arg("stream") = 0, nb::arg("col_major") = false,
          nb::call_guard<nb::gil_scoped_release>(),
          "Runs the plan on these operands (the plan's problem but for pointers, alpha and "
          "beta; UsageError naming the first field that differs), as gemm() with the "
          "context's workspace pool: the CPU context runs it now, a CUDA one queues it on "
          "`stream`.");

  m.def(
      "gemm_verify",
      [](std::string_view dtype, std::string_view out_dtype, bool trans_a, bool trans_b, std::int64_t m_,
         std::int64_t n, std::int64_t k, double alpha, std::uintptr_t a, std::int64_t lda, std::uintptr_t b,
         std::int64_t ldb, double beta, std::uintptr_t c, std::int64_t ldc, std::int64_t batch,
         std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c, std::uintptr_t c_before,
         std::string_view mode, std::string_view kernel) {
        const ProblemArgs args{dtype, out_dtype, trans_a, trans_b, m_, n, k, alpha, a, lda, b,
                               ldb, beta, c, ldc, batch, stride_a, stride_b, stride_c};
        const GemmProblem p = args.problem();
        validate(p);
        const VerifyMode verify_mode = parse_verify_mode(mode);
        const KernelEntry* entry = gemm_registry().find(kernel);
        const std::optional<DType> accuracy = entry ? entry->accuracy : std::nullopt;
        const auto* before = reinterpret_cast<const unsigned char*>(c_before);
        const std::size_t c_bytes = dtype_size(p.c_dtype());
        VerifyResult result;
        for (std::int64_t i = 0; i < p.batch; ++i) {
          const GemmProblem item = batch_item(p, i);
          const void* item_before = before ? before + std::size_t(i * p.stride_c) * c_bytes : nullptr;
          result = verify(item, item_before, verify_mode, 0x5eed + std::uint64_t(i), accuracy);
          if (!result.passed) {
            const std::string where = p.batch > 1 ? " (batch item " + std::to_string(i) + ")" : "";
            fail(ErrorCategory::numeric,
                 (result.method == VerifyMode::none
                      ? "kernel " + std::string(kernel) + ": "
                      : "verification (" + result.check + ") failed for kernel " + std::string(kernel) + ": ") +
                     result.detail + where);
          }
        }
        nb::gil_scoped_acquire gil;
        nb::dict out;
        out["method"] = std::string(verify_mode_name(result.method));
        out["passed"] = result.passed;
        out["check"] = result.check;
        out["guarantee"] = result.guarantee;
        out["error"] = result.error;
        out["tolerance"] = result.tolerance;
        out["backward_error"] = std::isnan(result.backward_error) ? nb::none() : nb::cast(result.backward_error);
        return out;
      },
      GEMMKIT_PROBLEM_ARGS, nb::arg("c_before") = 0, nb::arg("mode") = "auto", nb::arg("kernel") = "",
      nb::call_guard<nb::gil_scoped_release>(),
      "Verifies a finished product in host memory with the library's checks (mode: 'auto', "
      "'full', 'freivalds', 'exact', 'none'), every batch item. c_before: C as it was before "
      "(0 when beta == 0). kernel: the kernel that ran (its accuracy sets the tolerance). "
      "Raises NumericError with the library's detail when a check fails; returns the last "
      "item's result (method, check, guarantee, error, tolerance, backward_error).");

  m.def(
      "gemm_time",
      [](Context& ctx, std::string_view dtype, std::string_view out_dtype, bool trans_a, bool trans_b,
         std::int64_t m_, std::int64_t n, std::int64_t k, double alpha, std::uintptr_t a, std::int64_t lda,
         std::uintptr_t b, std::int64_t ldb, double beta, std::uintptr_t c, std::int64_t ldc,
         std::int64_t batch, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
         std::string_view kernel, std::uintptr_t stream, int warmup, int reps, bool each) {
        const ProblemArgs args{dtype, out_dtype, trans_a, trans_b, m_, n, k, alpha, a, lda, b,
                               ldb, beta, c, ldc, batch, stride_a, stride_b, stride_c};
        const GemmProblem p = args.problem();
        const GemmOptions options = options_for(ctx, kernel);
        const Stream s = stream_from_int(stream);
        const KernelEntry* ran = nullptr;
        const StreamTimes times =
            time_on_stream(ctx, s, warmup, reps, each, [&] { ran = &gemm(ctx, p, s, options); });
        nb::gil_scoped_acquire gil;
        return nb::make_tuple(times.seconds, times.host_seconds, ran->name);
      },
      nb::arg("context"), GEMMKIT_PROBLEM_ARGS, nb::arg("kernel") = "auto", nb::arg("stream") = 0,
      nb::arg("warmup") = 3, nb::arg("reps") = 20, nb::arg("each") = true,
      nb::call_guard<nb::gil_scoped_release>(),
      "The benchmark's reference: the same gemm() call (device API, operands in the context's "
      "memory) `reps` times in a C++ loop after `warmup` untimed calls, on `stream`. each=True: "
      "CUDA events around every call; False: one pair around the loop. Returns (seconds of each "
      "call or of the whole loop, host seconds of the loop before waiting for the stream, the "
      "kernel that ran).");
}

}  // namespace gemmkit::python

#include "gemmkit/gemm.hpp"
#include "gemmkit/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "ops/gemm/dispatch.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {

std::string GemmProblem::shape_string() const {
  std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (batch != 1) s = std::to_string(batch) + " x " + s;
  std::string notes;
  if (trans_a) notes += "A^T";
  if (trans_b) notes += notes.empty() ? "B^T" : ", B^T";
  if (layout == Layout::col_major) notes += notes.empty() ? "column-major" : ", column-major";
  return notes.empty() ? s : s + " (" + notes + ")";
}

namespace {
// Elements a stored rows x cols matrix with leading dimension ld spans: the last row is only
// as wide as the stored width. Row-major; a column-major problem is mapped first.
std::int64_t matrix_span(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}
std::int64_t batch_span(std::int64_t one, std::int64_t batch, std::int64_t stride) {
  return one == 0 || batch == 0 ? 0 : (batch - 1) * stride + one;
}
}  // namespace

// A stored rows x cols matrix spans (rows - 1) ld + cols elements row-major and
// (cols - 1) ld + rows column-major; then the batch, `stride` apart.
std::int64_t GemmProblem::a_span() const {
  const bool row = layout == Layout::row_major;
  return batch_span(row ? matrix_span(a_rows(), a_cols(), lda) : matrix_span(a_cols(), a_rows(), lda), batch, stride_a);
}
std::int64_t GemmProblem::b_span() const {
  const bool row = layout == Layout::row_major;
  return batch_span(row ? matrix_span(b_rows(), b_cols(), ldb) : matrix_span(b_cols(), b_rows(), ldb), batch, stride_b);
}
std::int64_t GemmProblem::c_span() const {
  const bool row = layout == Layout::row_major;
  return batch_span(row ? matrix_span(m, n, ldc) : matrix_span(n, m, ldc), batch, stride_c);
}

// Column-major C (M x N) read row-major is the N x M matrix C^T, and C^T = op(B)^T op(A)^T.
// A column-major matrix read row-major is its transpose, so each operand's storage, read
// row-major, is already op()^T of itself when its flag is clear, and op() when it is set:
// the row-major problem is N x M x K with A and B swapped and each keeping its own flag.
std::string_view layout_name(Layout layout) { return layout == Layout::col_major ? "col" : "row"; }

std::optional<Layout> parse_layout(std::string_view name) {
  if (name == "row") return Layout::row_major;
  if (name == "col") return Layout::col_major;
  return std::nullopt;
}

GemmProblem as_row_major(const GemmProblem& p) {
  if (p.layout == Layout::row_major) return p;
  GemmProblem q = p;
  q.layout = Layout::row_major;
  q.m = p.n;
  q.n = p.m;
  q.a = p.b, q.lda = p.ldb, q.trans_a = p.trans_b, q.stride_a = p.stride_b;
  q.b = p.a, q.ldb = p.lda, q.trans_b = p.trans_a, q.stride_b = p.stride_a;
  return q;
}

GemmProblem batch_item(const GemmProblem& p, std::int64_t i) {
  GemmProblem q = p;
  q.batch = 1;
  const std::size_t in = dtype_size(p.dtype), out = dtype_size(p.c_dtype());
  if (p.a) q.a = static_cast<const unsigned char*>(p.a) + std::size_t(i * p.stride_a) * in;
  if (p.b) q.b = static_cast<const unsigned char*>(p.b) + std::size_t(i * p.stride_b) * in;
  if (p.c) q.c = static_cast<unsigned char*>(p.c) + std::size_t(i * p.stride_c) * out;
  return q;
}

std::vector<DType> output_dtypes(DType dtype) {
  switch (dtype) {
    case DType::f16: return {DType::f16, DType::f32};
    case DType::bf16: return {DType::bf16, DType::f32};
    case DType::i8: return {DType::i32};  // int8 sums need 32 bits
    case DType::i32: return {DType::i32, DType::i64};
    default: return {dtype};
  }
}

std::string output_dtype_refusal(DType dtype, DType c_dtype) {
  const std::vector<DType> offered = output_dtypes(dtype);
  if (std::find(offered.begin(), offered.end(), c_dtype) != offered.end()) return "";
  std::string list;
  for (std::size_t i = 0; i < offered.size(); ++i)
    list += (i == 0 ? "" : i + 1 == offered.size() ? " or " : ", ") + std::string(dtype_name(offered[i]));
  return "C in " + std::string(dtype_name(c_dtype)) + " for " + std::string(dtype_name(dtype)) +
         " inputs: C is " + list + (dtype == DType::i8 ? " (int8 sums overflow int8)" : "");
}

void validate(const GemmProblem& problem) {
  auto bad = [&](const std::string& what) {
    fail(ErrorCategory::usage, "invalid GEMM " + problem.shape_string() + ": " + what);
  };
  if (problem.batch < 0) bad("negative batch count");
  if (problem.stride_a < 0 || problem.stride_b < 0 || problem.stride_c < 0) bad("negative stride");
  const GemmProblem p = as_row_major(problem);
  if (p.m < 0 || p.n < 0 || p.k < 0) bad("negative size");
  // A stored a_rows x a_cols needs lda >= a_cols (and >= 1), likewise B and C; column-major:
  // lda >= a_rows. Checked in the caller's layout, so that the message names the caller's
  // lda (the row-major form swaps A and B).
  const bool row = problem.layout == Layout::row_major;
  auto check_ld = [&](const char* ld_name, std::int64_t ld, const char* stored, const char* matrix,
                      std::int64_t rows, std::int64_t cols) {
    const std::int64_t needed = row ? cols : rows;
    if (ld < std::max<std::int64_t>(1, needed))
      bad(std::string(ld_name) + " " + std::to_string(ld) + " < " + stored +
          (row ? "width of " : "height of ") + matrix + " " + std::to_string(needed));
  };
  check_ld("lda", problem.lda, "stored ", "A", problem.a_rows(), problem.a_cols());
  check_ld("ldb", problem.ldb, "stored ", "B", problem.b_rows(), problem.b_cols());
  check_ld("ldc", problem.ldc, "", "C", problem.m, problem.n);
  // What each operand spans, in bytes, must be a number: kernels and copies index with it.
  auto check_span = [&](const char* matrix, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                        std::int64_t stride, DType dtype) {
    if (rows == 0 || cols == 0 || p.batch == 0) return;
    std::int64_t span = 0, batch_extent = 0, bytes = 0;
    if (__builtin_mul_overflow(rows - 1, ld, &span) || __builtin_add_overflow(span, cols, &span) ||
        __builtin_mul_overflow(p.batch - 1, stride, &batch_extent) ||
        __builtin_add_overflow(span, batch_extent, &span) ||
        __builtin_mul_overflow(span, std::int64_t(dtype_size(dtype)), &bytes))
      bad(std::string(matrix) + " would span more than 2^63 bytes (" + std::to_string(row ? rows : cols) + " x " +
          std::to_string(row ? cols : rows) + " stored with leading dimension " + std::to_string(ld) +
          (p.batch > 1 ? ", " + std::to_string(p.batch) + " of them " + std::to_string(stride) + " apart" : "") +
          ")");
  };
  // In the row-major form A and B of a column-major problem trade places.
  check_span(row ? "A" : "B", p.a_rows(), p.a_cols(), p.lda, p.stride_a, p.dtype);
  check_span(row ? "B" : "A", p.b_rows(), p.b_cols(), p.ldb, p.stride_b, p.dtype);
  check_span("C", p.m, p.n, p.ldc, p.stride_c, p.c_dtype());
  if (p.batch > 1 && p.m > 0 && p.n > 0 && p.stride_c < matrix_span(p.m, p.n, p.ldc))
    bad("stride_c " + std::to_string(p.stride_c) + " < the " +
        std::to_string(matrix_span(p.m, p.n, p.ldc)) +
        " elements one C spans: the batch's outputs would overlap");
  if (p.m > 0 && p.n > 0 && p.c == nullptr) bad("C is null");
  if (p.m > 0 && p.n > 0 && p.k > 0 && (p.a == nullptr || p.b == nullptr)) bad("A or B is null");
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta)) bad("alpha and beta must be finite");
  if (const std::string why = output_dtype_refusal(p.dtype, p.c_dtype()); !why.empty()) bad(why);
  if (is_integer(p.dtype)) {
    // Integer kernels convert alpha/beta to the element type; they must be exact integers.
    for (double x : {p.alpha, p.beta})
      if (x != std::trunc(x) || std::fabs(x) > 9007199254740992.0)
        bad("alpha and beta must be integers for " + std::string(dtype_name(p.dtype)));
  }
}

GemmProblem make_problem(const AnyMatrix& a, bool trans_a, const AnyMatrix& b, bool trans_b,
                         AnyMatrix& c, double alpha, double beta) {
  const DType dtype = dtype_of_any(a);
  if (dtype_of_any(b) != dtype)
    fail(ErrorCategory::usage, "A is " + std::string(dtype_name(dtype)) + " but B is " +
                                   std::string(dtype_name(dtype_of_any(b))) +
                                   ": convert both to one dtype first");
  GemmProblem p = std::visit(
      [&](const auto& am) {
        using T = typename std::decay_t<decltype(am)>::value_type;
        // A view of C's shape only, for make_problem's checks; C's storage goes in below.
        MatrixView<T> c_shape(nullptr, rows_of(c), cols_of(c), std::max<std::int64_t>(cols_of(c), 1));
        return make_problem<T>(am.view(), trans_a, std::get<Matrix<T>>(b).view(), trans_b, c_shape,
                               alpha, beta);
      },
      a);
  std::visit(
      [&](auto& cm) {
        p.c = cm.data();
        p.ldc = cm.ld();
      },
      c);
  if (dtype_of_any(c) != dtype) p.out_dtype = dtype_of_any(c);
  return p;
}

namespace {

// A usage error when the kernel named (auto: every kernel it may choose on `backend`) does not
// take the kernel options `options` sets: bad input, not a problem the plan cannot run.
void refuse_kernel_options(Backend backend, const GemmProblem& problem, const GemmOptions& options) {
  if (!has_kernel_options(options)) return;
  const KernelEntry* named = gemm_registry().find(options.kernel);
  const auto why = named ? kernel_options_refusal(*named, options, problem)
                         : options.kernel == "auto" ? auto_options_refusal(backend, options) : std::nullopt;
  if (why) fail(ErrorCategory::usage, *why);
}

}  // namespace

const KernelEntry& choose_gemm_kernel(const Context& ctx, const GemmProblem& problem,
                                      const GemmOptions& options) {
  if (options.backend && *options.backend != ctx.backend())
    fail(ErrorCategory::usage, "the " + std::string(backend_name(*options.backend)) +
                                   " backend was asked of a " +
                                   std::string(backend_name(ctx.backend())) + " context");
  if (!has_kernel_options(options)) return gemm_registry().choose(ctx, problem, options.kernel);
  refuse_kernel_options(ctx.backend(), problem, options);
  return gemm_registry().choose(ctx, problem, options.kernel,
                                [&](const KernelEntry& e) { return kernel_options_refusal(e, options, problem); });
}

AutoChoice explain_auto_choice(Backend backend, std::optional<int> compute_capability,
                               const GemmProblem& problem) {
  return gemm_registry().explain_auto(backend, compute_capability, problem);
}

std::size_t gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem,
                                 const GemmOptions& options) {
  validate(problem);
  const GemmProblem p = as_row_major(problem);
  return workspace_with(choose_gemm_kernel(ctx, p, options), p, ctx, options);
}

namespace {

// Runs f, which computes the row-major form of the caller's `problem`: an overflow it reports
// names the caller's entry (a column-major C is computed as the row-major C^T).
template <class F>
void in_caller_layout(const GemmProblem& problem, F&& f) {
  try {
    f();
  } catch (const OverflowError& e) {
    if (problem.layout == Layout::col_major) throw e.transposed();
    throw;
  }
}

// Runs `run`, which computes the host-memory `problem` (any layout, any batch) on `entry`, under
// the integer rule (gemm.hpp): the bound first; for the products it cannot prove safe, C0 is
// kept (when beta != 0) and the modular check follows the run. An entry whose integers are
// exact or an error needs none of it.
template <class F>
void with_integer_rule(const KernelEntry& entry, const GemmProblem& problem, F&& run) {
  if (!is_integer(problem.dtype) || writes_nothing(problem) || entry.exact_integers) return run();
  struct Unproven {
    std::int64_t item;
    std::vector<unsigned char> c0;  // C before the run (beta != 0)
  };
  std::vector<Unproven> unproven;
  const std::size_t c_bytes = dtype_size(problem.c_dtype());
  for (std::int64_t i = 0; i < problem.batch; ++i) {
    const GemmProblem item = batch_item(problem, i);
    if (integer_result_bounded(item, item.c)) continue;  // C holds C0 until the run
    Unproven u{i, {}};
    if (problem.beta != 0) {
      const auto* c = static_cast<const unsigned char*>(item.c);
      u.c0.assign(c, c + std::size_t(item.c_span()) * c_bytes);
    }
    unproven.push_back(std::move(u));
  }
  run();
  for (const Unproven& u : unproven) {
    try {
      check_integer_result(batch_item(problem, u.item), u.c0.empty() ? nullptr : u.c0.data());
    } catch (const Error& e) {
      if (problem.batch == 1) throw;
      fail(e.category(), std::string(e.what()) + " (product " + std::to_string(u.item) + " of the batch)");
    }
  }
}

}  // namespace

namespace detail {

GemmRunReport launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& p, Stream stream,
                          Workspace workspace, const GemmOptions& options) {
  if (writes_nothing(p)) return {};
  if (entry.backend == Backend::cuda) return cuda_launch_gemm(ctx, entry, p, stream, workspace, options);
  return run_batch(entry, p, KernelLaunch{ctx, stream, workspace}, options);
}

}  // namespace detail

namespace {

// The problem a plan chooses for: null operands stand in as addresses aligned to 2^32 (never
// dereferenced), so that alignment preconditions hold and validation passes.
GemmProblem with_stand_in_operands(GemmProblem p) {
  if (!p.a) p.a = reinterpret_cast<const void*>(std::uintptr_t(1) << 32);
  if (!p.b) p.b = reinterpret_cast<const void*>(std::uintptr_t(2) << 32);
  if (!p.c) p.c = reinterpret_cast<void*>(std::uintptr_t(3) << 32);
  return p;
}

}  // namespace

GemmPlan::GemmPlan(Context& ctx, const GemmProblem& problem, const GemmOptions& options)
    : ctx_(&ctx), problem_(problem), options_(options) {
  options_.context = nullptr;  // the plan's context is ctx
  const GemmProblem planned = with_stand_in_operands(problem);
  validate(planned);
  const GemmProblem p = as_row_major(planned);
  refuse_kernel_options(ctx.backend(), p, options);  // bad input, before the choice
  try {
    entry_ = &choose_gemm_kernel(ctx, p, options);
  } catch (const Error& e) {
    // Bad input stays an error: another backend than the context's, or an unknown name.
    const bool bad_input = (options.backend && *options.backend != ctx.backend()) ||
                           (options.kernel != "auto" && !gemm_registry().find(options.kernel));
    if (e.category() != ErrorCategory::usage || bad_input) throw;
    why_not_ = e.what();  // refused by the kernel named, or by every kernel: the plan cannot run
    return;
  }
  workspace_bytes_ = workspace_with(*entry_, p, ctx, options_);
}

const KernelEntry& GemmPlan::kernel() const {
  if (!entry_) fail(ErrorCategory::usage, why_not_);
  return *entry_;
}

std::optional<std::string> GemmPlan::mismatch(const GemmProblem& operands) const {
  const GemmProblem& planned = problem_;
  const auto differs = [](const std::string& what, const auto& given, const auto& plan) -> std::optional<std::string> {
    if (given == plan) return std::nullopt;
    const auto text = [](const auto& v) {
      using V = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<V, DType>) return std::string(dtype_name(v));
      else if constexpr (std::is_same_v<V, Layout>) return std::string(layout_name(v));
      else if constexpr (std::is_same_v<V, bool>) return std::string(v ? "yes" : "no");
      else return std::to_string(v);
    };
    return what + " " + text(given) + ", the plan's " + text(plan);
  };
  for (const auto& why :
       {differs("dtype", operands.dtype, planned.dtype), differs("C dtype", operands.c_dtype(), planned.c_dtype()),
        differs("layout", operands.layout, planned.layout), differs("transposed A", operands.trans_a, planned.trans_a),
        differs("transposed B", operands.trans_b, planned.trans_b), differs("M", operands.m, planned.m),
        differs("N", operands.n, planned.n), differs("K", operands.k, planned.k),
        differs("lda", operands.lda, planned.lda), differs("ldb", operands.ldb, planned.ldb),
        differs("ldc", operands.ldc, planned.ldc), differs("batch", operands.batch, planned.batch),
        differs("stride_a", operands.stride_a, planned.stride_a), differs("stride_b", operands.stride_b, planned.stride_b),
        differs("stride_c", operands.stride_c, planned.stride_c)})
    if (why) return "operands of another problem than the plan's: " + *why;
  return std::nullopt;
}

const KernelEntry& GemmPlan::check(const GemmProblem& operands) const {
  validate(operands);
  const KernelEntry& entry = kernel();
  if (auto why = mismatch(operands)) fail(ErrorCategory::usage, *why);
  // Planning checked the planned operands; others may be less aligned, or alpha and beta refused.
  const bool as_planned = operands.a == problem_.a && operands.b == problem_.b && operands.c == problem_.c &&
                          operands.alpha == problem_.alpha && operands.beta == problem_.beta;
  if (!as_planned)
    if (auto why = entry.rejects(as_row_major(operands)))
      fail(ErrorCategory::usage, "the plan's kernel '" + entry.name + "' cannot run these operands: " + *why +
                                     " (make a plan for them)");
  return entry;
}

GemmRunReport GemmPlan::launch(const KernelEntry& entry, const GemmProblem& operands, Stream stream,
                               Workspace workspace) const {
  if (workspace.bytes < workspace_bytes_)
    fail(ErrorCategory::usage, "kernel '" + entry.name + "' needs " + std::to_string(workspace_bytes_) +
                                   " bytes of workspace for " + operands.shape_string() + ", " +
                                   std::to_string(workspace.bytes) + " were given");
  if (workspace_bytes_ > 0 && reinterpret_cast<std::uintptr_t>(workspace.data) % kWorkspaceAlignment != 0)
    fail(ErrorCategory::usage, "the workspace must start on a " +
                                   std::to_string(kWorkspaceAlignment) + "-byte boundary");
  const GemmProblem p = as_row_major(operands);
  GemmRunReport report;
  const auto run = [&] {
    in_caller_layout(operands, [&] { report = detail::launch_gemm(*ctx_, entry, p, stream, workspace, options_); });
  };
  if (ctx_->backend() == Backend::cpu) with_integer_rule(entry, operands, run);  // host memory
  else run();
  return report;
}

GemmRunReport GemmPlan::run(const GemmProblem& operands, Stream stream, Workspace workspace) const {
  return launch(check(operands), operands, stream, workspace);
}

GemmRunReport GemmPlan::run(const GemmProblem& operands, Stream stream) const {
  const KernelEntry& entry = check(operands);  // before the pool is asked for anything
  return launch(entry, operands, stream,
                workspace_bytes_ > 0 ? ctx_->workspace(stream, workspace_bytes_) : Workspace{});
}

const KernelEntry& gemm(Context& ctx, const GemmProblem& problem, Stream stream,
                        Workspace workspace, const GemmOptions& options) {
  const GemmPlan plan(ctx, problem, options);
  plan.run(problem, stream, workspace);
  return plan.kernel();
}

const KernelEntry& gemm(Context& ctx, const GemmProblem& problem, Stream stream,
                        const GemmOptions& options) {
  const GemmPlan plan(ctx, problem, options);
  plan.run(problem, stream);
  return plan.kernel();
}

std::string gemm(const GemmProblem& problem, const GemmOptions& options) {
  return gemm_with_report(problem, options).kernel;
}

GemmRun gemm_with_report(const GemmProblem& problem, const GemmOptions& options) {
  validate(problem);
  const GemmProblem p = as_row_major(problem);
  const bool explicit_kernel = options.kernel != "auto";  // "" too: the registry refuses it
  // The backend: the kernel's, the one asked for, or CUDA when a device takes the problem.
  Backend backend = Backend::cpu;
  std::optional<Context> own;  // the call's context when the caller lends none
  if (explicit_kernel) {
    backend = gemm_registry().get(options.kernel).backend;
  } else if (options.backend) {
    backend = *options.backend;
  } else if (options.context) {
    backend = options.context->backend();
  } else if (has_kernel_options(options)) {
    // The backend whose kernels auto may choose for them (else the CPU's refusal says why).
    if (!auto_options_refusal(Backend::cpu, options)) backend = Backend::cpu;
    else if (!auto_options_refusal(Backend::cuda, options)) backend = Backend::cuda;
    if (backend == Backend::cuda && !cuda_device_available())
      fail(ErrorCategory::device, kernel_options_text(options) + " is computed on the CUDA backend, and this machine has "
                                                                 "none: " + no_device_message());
  } else if (cuda_device_available()) {
    if (gemm_registry().choose_auto(own.emplace(Backend::cuda), p)) backend = Backend::cuda;
  }
  if (options.backend && *options.backend != backend)
    fail(ErrorCategory::usage, "kernel '" + options.kernel + "' belongs to the " +
                                   std::string(backend_name(backend)) + " backend, not " +
                                   std::string(backend_name(*options.backend)));
  // Without a device no CUDA kernel accepts anything: say that, not "no kernel accepts".
  if (backend == Backend::cuda) require_cuda_device();
  Context* ctx = options.context;
  if (!ctx || ctx->backend() != backend)
    ctx = own && own->backend() == backend ? &*own : &own.emplace(backend);
  GemmOptions chosen = options;
  chosen.backend.reset();
  const KernelEntry& entry = choose_gemm_kernel(*ctx, p, chosen);
  GemmRun ran{entry.name, {}};
  if (entry.backend == Backend::cuda) {
    // The device copies of A, B and C (DeviceProblem in src/runtime/cuda/device.cu).
    require_device_memory(estimate_gemm_memory(p, VerifyMode::none).device,
                          "kernel '" + entry.name + "' on " + problem.shape_string());
    with_integer_rule(entry, problem, [&] {
      in_caller_layout(problem, [&] { ran.report = detail::run_on_device(*ctx, entry, p, chosen); });
    });
  } else {
    if (workspace_with(entry, p, *ctx, chosen) > 0)
      fail(ErrorCategory::internal, "CPU kernel '" + entry.name + "' asks for device workspace");
    with_integer_rule(entry, problem, [&] {
      in_caller_layout(problem, [&] { ran.report = detail::launch_gemm(*ctx, entry, p, nullptr, {}, chosen); });
    });
  }
  return ran;
}

}  // namespace gemmkit

// The one GEMM contract: C = alpha * op(A) * op(B) + beta * C, any M, N, K >= 0, any leading
// dimensions, row-major (C's rows contiguous) or column-major (as BLAS and cuBLAS store).
// op(A) is M x K, op(B) is K x N, C is M x N. A transposed operand is stored as its
// transpose (A^T stored K x M). beta == 0 means C is write-only: NaNs already in C do not
// propagate. A strided batch runs `batch` such products, matrix i of each operand at
// pointer + i * stride (elements).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/kernel.hpp"
#include "gemmkit/matrix.hpp"

namespace gemmkit {

// How the matrices are stored. Column-major problems are run as the row-major problem
// C^T = op(B)^T op(A)^T on the same memory (no copies): see as_row_major().
enum class Layout { row_major, col_major };
std::string_view layout_name(Layout layout);              // "row" or "col"
std::optional<Layout> parse_layout(std::string_view name);  // "row", "col"; nullopt otherwise

// A type-erased problem, as kernels and the registry see it. Pointers refer to memory of
// the backend that runs it (host memory for CPU kernels, device memory for CUDA kernels).
// alpha and beta are doubles; for integer dtypes they must be integers (checked by validate).
struct GemmProblem {
  DType dtype = DType::f32;
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  const void* a = nullptr;
  std::int64_t lda = 1;
  const void* b = nullptr;
  std::int64_t ldb = 1;
  void* c = nullptr;
  std::int64_t ldc = 1;
  // C's element type when it differs from the inputs': f32 for f16/bf16 inputs (the tensor
  // cores sum in FP32 anyway), i32 for i8 inputs (required: int8 sums need it), and i64 for
  // i32 inputs (the exact product, wider; only kernels with KernelTraits::wider_integer_output).
  // nullopt: C has the input dtype.
  std::optional<DType> out_dtype;
  Layout layout = Layout::row_major;
  // Strided batch: `batch` products; operand i starts `stride_*` elements after operand
  // i - 1. A stride of 0 reuses one A (or B) for every product; C's stride must keep the
  // outputs apart (at least C's span) when batch > 1.
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;

  DType c_dtype() const { return out_dtype.value_or(dtype); }

  double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
  // Stored shape of A and B: rows x cols as laid out in memory.
  std::int64_t a_rows() const { return trans_a ? k : m; }
  std::int64_t a_cols() const { return trans_a ? m : k; }
  std::int64_t b_rows() const { return trans_b ? n : k; }
  std::int64_t b_cols() const { return trans_b ? k : n; }
  // "MxNxK" with transposes, layout and batch, e.g. "300x100x200 (A^T)", "64 x 512x512x512"
  std::string shape_string() const;
  // Elements of memory each of the caller's stored operands spans, in its layout (one
  // matrix, then the whole batch).
  std::int64_t a_span() const;
  std::int64_t b_span() const;
  std::int64_t c_span() const;
};

// The same problem as kernels see it: row-major. A column-major problem becomes the
// row-major product C^T (N x M) = op(B)^T op(A)^T with A and B swapped; row-major problems
// come back unchanged.
GemmProblem as_row_major(const GemmProblem& problem);

// Matrix i of a strided batch as a problem of its own (batch 1).
GemmProblem batch_item(const GemmProblem& problem, std::int64_t i);

// The exact integer GEMM's result as limbs instead of C (GemmOptions::limbs): entry (r, c) of
// alpha op(A) op(B) + beta C0 as `limbs` 64-bit two's-complement words (least significant
// first) at words + (r * ld + c) * limbs, in the caller's layout's row order (row-major: r a
// row of C; column-major: entries of C^T, r a column of C). C0 is read from the problem's C
// when beta != 0; C is not written.
struct ExactLimbsOut {
  std::uint64_t* words = nullptr;
  std::int64_t ld = 0;  // in entries
  int limbs = 0;        // at least exact_output_limbs(problem) (gemmkit/exact.hpp)
};

// How a kernel that plans at run time ran (the Ozaki emulation's moduli, the exact GEMM's
// method and bound): `gemmkit multiply` prints "<section>: <method>", and its JSON carries
// the method and the facts under `section`.
struct GemmRunReport {
  std::string section;  // e.g. "ozaki", "exact"; empty: the kernel has nothing to add
  std::string method;   // in words
  struct Fact {
    std::string name;
    std::variant<std::int64_t, std::string> value;
  };
  std::vector<Fact> facts;
};

struct GemmOptions;

// ---- GEMM's kernels (the registry: gemmkit/registry.hpp) ---------------------------------
// What a GEMM kernel says besides what every kernel says.
template <>
struct KernelTraits<GemmProblem> {
  std::optional<DType> accuracy;  // the precision it computes in when lower than the dtype (e.g. tf32); tolerances follow it
  // Accepts f16/bf16 inputs with C in f32 (GemmProblem::out_dtype).
  bool half_inputs_f32_output = false;
  // Accepts i32 inputs with C in i64 (GemmProblem::out_dtype): exact results wider than the inputs.
  bool wider_integer_output = false;
  // Runs a strided batch (GemmProblem::batch) itself, in one launch; otherwise the library
  // runs the batch's products one after another (run_batch, registry.hpp).
  bool batched = false;
  // Compiles its kernel for each problem shape on first use (cuda_wgmma_fixed), seconds a
  // shape: the GPU suites that sweep every entry over many shapes leave it to its own test.
  bool compiles_per_shape = false;
  // Integer results are exact or an OverflowError naming the entry, never wrapped, so the host
  // API needs no integer rule of its own around it (gemm() below).
  bool exact_integers = false;
  // The kernel options it takes (GemmOptions): a plan that sets one its kernel does not take
  // is refused, and "auto" with an option chooses among the kernels that take it.
  bool takes_moduli = false;  // GemmOptions::moduli
  bool writes_limbs = false;  // GemmOptions::limbs
  // Kernels that take options, or say how they ran, size and run with the plan's options
  // here; KernelCode's workspace_bytes and run are then these with the default options.
  std::function<std::size_t(const GemmProblem&, const Context&, const GemmOptions&)> workspace_with_options;
  std::function<GemmRunReport(const GemmProblem&, const KernelLaunch&, const GemmOptions&)> run_with_options;
};
using KernelEntry = Kernel<GemmProblem>;

inline GemmProblem kernel_form(const GemmProblem& problem) { return as_row_major(problem); }
// Besides the dtype, C's dtype must be one the kernel writes, and when it does not batch,
// every product of a batch must meet the precondition.
template <>
std::optional<std::string> Kernel<GemmProblem>::rejects(const GemmProblem& problem) const;
// An entry that does not batch runs the products one after another on one stream, so one
// product's workspace serves them all; an empty C needs none.
template <>
std::size_t Kernel<GemmProblem>::workspace_for(const GemmProblem& problem, const Context& ctx) const;
template <>
std::optional<DType> Kernel<GemmProblem>::computes_in(const GemmProblem& problem) const;

// The dtypes C may have for inputs of `dtype`, the one a caller gets by default first: the
// input dtype, f32 too for f16 and bf16 (their FP32 sums), i32 alone for i8, i64 too for i32
// (the exact product, wider). tf32 is f32 storage, so C is "tf32" (f32) too.
std::vector<DType> output_dtypes(DType dtype);
// Why C cannot be c_dtype for inputs of `dtype` (what validate says), or "" when it can.
std::string output_dtype_refusal(DType dtype, DType c_dtype);

// Throws a usage error if the problem is inconsistent (negative sizes, leading dimension
// smaller than a stored width, spans beyond 2^63 bytes, null pointer for a non-empty operand,
// non-integer alpha/beta for an integer dtype, a C dtype that output_dtypes does not offer).
void validate(const GemmProblem& problem);

// Build a problem from typed views. a is op(A)'s storage (M x K, or K x M if trans_a).
template <class T>
GemmProblem make_problem(MatrixView<const T> a, bool trans_a, MatrixView<const T> b,
                         bool trans_b, MatrixView<T> c, double alpha = 1.0, double beta = 0.0) {
  GemmProblem p;
  p.dtype = dtype_of<T>;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.m = trans_a ? a.cols() : a.rows();
  p.k = trans_a ? a.rows() : a.cols();
  p.n = trans_b ? b.rows() : b.cols();
  const std::int64_t kb = trans_b ? b.cols() : b.rows();
  if (kb != p.k || c.rows() != p.m || c.cols() != p.n)
    fail(ErrorCategory::usage,
         "shape mismatch: op(A) is " + std::to_string(p.m) + "x" + std::to_string(p.k) +
             ", op(B) is " + std::to_string(kb) + "x" + std::to_string(p.n) + ", C is " +
             std::to_string(c.rows()) + "x" + std::to_string(c.cols()));
  p.alpha = alpha;
  p.beta = beta;
  p.a = a.data();
  p.lda = a.ld();
  p.b = b.data();
  p.ldb = b.ld();
  p.c = c.data();
  p.ldc = c.ld();
  return p;
}

// The same from host matrices of any dtype: A and B of one dtype (f32 storage for tf32:
// set dtype afterwards), C of that dtype or, for f16/bf16 inputs, f32 (out_dtype). Usage
// errors for mismatched dtypes or shapes.
GemmProblem make_problem(const AnyMatrix& a, bool trans_a, const AnyMatrix& b, bool trans_b,
                         AnyMatrix& c, double alpha = 1.0, double beta = 0.0);

// What the high-level entry point should use.
struct GemmOptions {
  // Host API: nullopt is CUDA when a device is present, else CPU. Device API: must be the
  // context's backend or nullopt.
  std::optional<Backend> backend{};
  // A kernel name (Registry), or "auto": the fastest kernel of the backend that accepts the
  // problem. Any other name, the empty one included, is a usage error.
  std::string kernel = "auto";
  // Host API only: the context to run in (nullptr: one made for the call, which costs a
  // cuBLAS handle; pass one to reuse its handles and workspaces across calls).
  Context* context = nullptr;
  // Options of the kernels that declare them (KernelTraits<GemmProblem>); the plan hands
  // them to its kernel. A kernel named with an option it does not take is a usage error.
  // The Ozaki emulation's int8 primes, 2 to 53: more are more accurate, fewer faster (0:
  // the default plan for the operands, as accurate as native GEMM; gemmkit/ozaki.hpp).
  int moduli = 0;
  // The exact integer GEMM's result as limbs instead of C (words null: C as usual), in the
  // call's memory (host memory for the host API), one product (batch 1).
  ExactLimbsOut limbs{};
};

// Whether `options` sets a kernel option; "moduli 16", "exact output (limbs)": those it sets,
// in words ("" if none).
bool has_kernel_options(const GemmOptions& options);
std::string kernel_options_text(const GemmOptions& options);

// ---- device API: operands in the context's memory, nothing copied ----------------------
// Pointers are device memory of ctx's device (host memory for the CPU context). The call
// validates the problem, checks the kernel's dtype, preconditions and the device's compute
// capability, and queues the work on `stream` without waiting for it (CPU: runs it). Usage
// errors (exit 2) for an invalid problem or a kernel that refuses it; nothing is queued then.
// Integer results: on the CPU context (host memory) exact or a numeric error naming the entry,
// as the host API's (below). On a CUDA context, i32/i64 (cuda_exact_residues) are exact or an
// OverflowError; i8 with C in i32 (cuda_wgmma_i8, cuda_cublas_i8) is computed modulo 2^32:
// exact whenever the exact result fits int32 (always when alpha = 1, beta = 0 and k <=
// 131071), wrapped where it does not. The library reads no device memory to screen that;
// the host API does, and so does check_integer_result (verify.hpp) on host copies.

// Each call below is a GemmPlan (gemmkit/plan.hpp) made and run once: a caller that runs one
// problem many times makes the plan itself.

// The kernel a call with these options runs: options.kernel, or the auto choice.
const KernelEntry& choose_gemm_kernel(const Context& ctx, const GemmProblem& problem,
                                      const GemmOptions& options = {});
// Device bytes of workspace a call needs (0 for most kernels).
std::size_t gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem,
                                 const GemmOptions& options = {});
// Workspace from the context's pool (per stream). Returns the kernel that ran.
const KernelEntry& gemm(Context& ctx, const GemmProblem& problem, Stream stream = nullptr,
                        const GemmOptions& options = {});
// Workspace from the caller (at least gemm_workspace_bytes()).
const KernelEntry& gemm(Context& ctx, const GemmProblem& problem, Stream stream,
                        Workspace workspace, const GemmOptions& options = {});

// How `auto` decides for GEMM (AutoChoice, kernel.hpp; `gemmkit list --auto` prints it;
// choose_gemm_kernel makes the same decision). The measured table is the tuning run's
// (src/ops/gemm/auto_table.inc, from bench/tune/make_auto_table.py), on the CUDA backend.
// The auto decision for a problem (any layout; decided on its row-major form) on `backend`
// with a device of `compute_capability` (e.g. 90; ignored for the CPU). nullopt: no device
// to ask, and the candidates' min_compute_capability is reported instead of checked. The
// problem's pointers may be null (alignment preconditions then hold); it is not validated.
AutoChoice explain_auto_choice(Backend backend, std::optional<int> compute_capability,
                               const GemmProblem& problem);

// ---- host API: operands in host memory --------------------------------------------------
// Runs a host-memory problem on the chosen backend and kernel (copying to and from the
// device for CUDA kernels, and waiting for it). Returns the name of the kernel that ran.
// Integer dtypes (i8 with C in i32, i32, i64): every entry of C is the exact result, or the
// call fails with a numeric error naming the entry (an OverflowError where the exact value
// does not fit C), whatever the kernel: a bound on each row first (O(mk + kn + mn)), and only
// where it cannot prove that nothing overflows, the modular check of verify.hpp's `exact`
// after the product (C0 is kept for it when beta != 0). C then holds what the kernel wrote.
std::string gemm(const GemmProblem& host_problem, const GemmOptions& options = {});
// The same, saying how it ran: the kernel and its report (GemmRunReport).
struct GemmRun {
  std::string kernel;
  GemmRunReport report;
};
GemmRun gemm_with_report(const GemmProblem& host_problem, const GemmOptions& options = {});

}  // namespace gemmkit

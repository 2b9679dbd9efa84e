// gemmkit multiply A B -o C: C = alpha op(A) op(B) + beta C0, verified, written atomically.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::cli {
namespace {

struct MultiplyOptions {
  std::string a_path, b_path, c_path, c0_path, json_path;
  std::string backend = "auto", kernel = "auto", dtype, out_dtype, verify = "auto";
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
};

DType parse_dtype_option(const std::string& text, const char* option) {
  const auto dtype = parse_dtype(text);
  if (!dtype) fail(ErrorCategory::usage, std::string("unknown dtype '") + text + "' for " + option);
  return *dtype;
}

std::int64_t count_infinite(const AnyMatrix& m) {
  return std::visit(
      [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        std::int64_t count = 0;
        if constexpr (is_float_storage_v<T>)
          for (std::int64_t i = 0; i < x.rows(); ++i)
            for (std::int64_t j = 0; j < x.cols(); ++j)
              count += std::isinf(static_cast<double>(x(i, j)));
        return count;
      },
      m);
}

// Converts a matrix read from `path` to `dtype`, warning when finite values overflow it (f16
// ends at 65504) and become infinite.
AnyMatrix convert_input(const AnyMatrix& m, DType dtype, const std::string& path) {
  AnyMatrix converted = convert(m, dtype);
  if (dtype == DType::f16 || dtype == DType::bf16) {
    const std::int64_t overflowed = count_infinite(converted) - count_infinite(m);
    if (overflowed > 0)
      std::fprintf(stderr, "gemmkit: warning: %lld entries of %s are too large for %s and "
                           "became infinite\n",
                   static_cast<long long>(overflowed), quoted_path(path).c_str(),
                   std::string(dtype_name(dtype)).c_str());
  }
  return converted;
}

std::string shape(const AnyMatrix& m) {
  return std::to_string(rows_of(m)) + "x" + std::to_string(cols_of(m));
}

void run_multiply(const MultiplyOptions& o) {
  // Cheap checks first, so a typo costs no computation.
  format_from_path(o.c_path);
  const std::optional<Backend> backend = parse_backend(o.backend);
  const VerifyMode verify_mode = parse_verify_mode(o.verify);
  if (o.beta != 0.0 && o.c0_path.empty())
    fail(ErrorCategory::usage, "--beta needs --c FILE, the matrix C0 in alpha*A*B + beta*C0");

  AnyMatrix a = read_matrix(o.a_path), b = read_matrix(o.b_path);
  std::optional<AnyMatrix> c0;
  if (!o.c0_path.empty()) c0 = read_matrix(o.c0_path);

  // op(A) is M x K, op(B) is K x N.
  const std::int64_t m = o.trans_a ? cols_of(a) : rows_of(a);
  const std::int64_t k = o.trans_a ? rows_of(a) : cols_of(a);
  const std::int64_t kb = o.trans_b ? cols_of(b) : rows_of(b);
  const std::int64_t n = o.trans_b ? rows_of(b) : cols_of(b);
  if (k != kb)
    fail(ErrorCategory::usage,
         "shape mismatch: " + quoted_path(o.a_path) + " is " + shape(a) + (o.trans_a ? " (transposed)" : "") +
             " and " + quoted_path(o.b_path) + " is " + shape(b) + (o.trans_b ? " (transposed)" : "") +
             ": op(A) has " + std::to_string(k) + " columns but op(B) has " +
             std::to_string(kb) + " rows");
  if (c0 && (rows_of(*c0) != m || cols_of(*c0) != n))
    fail(ErrorCategory::usage, "shape mismatch: " + quoted_path(o.c0_path) + " is " + shape(*c0) +
                                   " but the product is " + std::to_string(m) + "x" +
                                   std::to_string(n));

  DType dtype = common_dtype(dtype_of_any(a), dtype_of_any(b));
  if (c0) dtype = common_dtype(dtype, dtype_of_any(*c0));
  if (!o.dtype.empty()) dtype = parse_dtype_option(o.dtype, "--dtype");
  if (dtype == DType::i8)
    fail(ErrorCategory::usage, "--dtype i8 is not offered for matrix files (use i32 or i64)");
  // C holds the inputs' dtype (tf32: f32), or f32 for f16/bf16 inputs when asked.
  const DType storage = dtype == DType::tf32 ? DType::f32 : dtype;
  DType out = storage;
  if (!o.out_dtype.empty()) {
    out = parse_dtype_option(o.out_dtype, "--out-dtype");
    const bool half_in = dtype == DType::f16 || dtype == DType::bf16;
    if (out != storage && !(half_in && out == DType::f32))
      fail(ErrorCategory::usage, "--out-dtype " + o.out_dtype + " with " +
                                     std::string(dtype_name(dtype)) +
                                     " inputs: C is " + std::string(dtype_name(storage)) +
                                     (half_in ? " or f32" : "") + " (the kernels write no other)");
  }
  a = convert_input(a, storage, o.a_path);
  b = convert_input(b, storage, o.b_path);
  AnyMatrix c = c0 ? convert_input(*c0, out, o.c0_path)
                   : convert(AnyMatrix(Matrix<std::int64_t>(m, n)), out);
  const AnyMatrix c_before = c;  // kept for verification when beta != 0

  GemmProblem p = make_problem(a, o.trans_a, b, o.trans_b, c, o.alpha, o.beta);
  p.dtype = dtype;  // tf32: f32 storage that the tensor cores read as tf32

  GemmOptions options;
  options.backend = backend;
  options.kernel = o.kernel;
  const auto start = std::chrono::steady_clock::now();
  const std::string kernel = gemm(p, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const void* c_before_data = std::visit([](const auto& x) -> const void* { return x.data(); }, c_before);
  // A kernel that computes in a lower precision than the dtype (cuda_cublas_tf32: tf32 on f32
  // data) is held to the tolerance of the precision it computes in.
  const KernelEntry* entry = Registry::instance().find(kernel);
  const std::optional<DType> accuracy = entry ? entry->accuracy : std::nullopt;
  const VerifyResult check = verify(p, c_before_data, verify_mode, 0x5eed, accuracy);

  nlohmann::json report = {
      {"a", o.a_path}, {"b", o.b_path}, {"output", o.c_path},
      {"m", m}, {"n", n}, {"k", k}, {"dtype", dtype_name(dtype)}, {"out_dtype", dtype_name(out)},
      {"trans_a", o.trans_a}, {"trans_b", o.trans_b}, {"alpha", o.alpha}, {"beta", o.beta},
      {"kernel", kernel}, {"seconds", seconds},
      {"gflops", seconds > 0 ? p.flops() / seconds / 1e9 : 0.0},
      {"verify", {{"method", verify_mode_name(check.method)}, {"passed", check.passed},
                  {"error", check.error}, {"tolerance", check.tolerance},
                  {"tolerance_dtype", dtype_name(tolerance_dtype(dtype, accuracy))},
                  {"detail", check.detail}}},
  };
  if (!check.passed) {
    if (!o.json_path.empty()) write_json(o.json_path, report);
    fail(ErrorCategory::numeric, "verification (" + std::string(verify_mode_name(check.method)) +
                                     ") failed for kernel " + kernel + ": " +
                                     (check.detail.empty() ? "relative error " +
                                      std::to_string(check.error) + " exceeds " +
                                      std::to_string(check.tolerance) : check.detail) +
                                     "; " + quoted_path(o.c_path) + " was not written");
  }
  write_matrix(o.c_path, c);
  if (!o.json_path.empty()) write_json(o.json_path, report);

  const std::string dtypes = std::string(dtype_name(dtype)) +
                             (out != storage ? " -> " + std::string(dtype_name(out)) : "");
  std::printf("%s = %s%s x %s%s: %s %s on %s, %.3f ms, %.2f GFLOP/s\n", quoted_path(o.c_path).c_str(),
              quoted_path(o.a_path).c_str(), o.trans_a ? "^T" : "", quoted_path(o.b_path).c_str(), o.trans_b ? "^T" : "",
              p.shape_string().c_str(), dtypes.c_str(), kernel.c_str(), seconds * 1e3,
              report["gflops"].get<double>());
  if (check.method == VerifyMode::none)
    std::printf("not verified (--verify none)\n");
  else if (is_integer(dtype))
    std::printf("verified exactly against a 128-bit integer reference\n");
  else
    std::printf("verified (%s): relative error %.2e <= %s tolerance %.2e\n",
                std::string(verify_mode_name(check.method)).c_str(), check.error,
                std::string(dtype_name(tolerance_dtype(dtype, accuracy))).c_str(), check.tolerance);
}

}  // namespace

void add_multiply(CLI::App& app) {
  auto o = std::make_shared<MultiplyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "multiply", "C = alpha * op(A) * op(B) + beta * C0, verified against a double reference");
  cmd->add_option("A", o->a_path, "Left operand (.npy, .mtx, .csv, .txt)")->required();
  cmd->add_option("B", o->b_path, "Right operand")->required();
  cmd->add_option("-o,--output", o->c_path, "Result file; written only if the run succeeds")
      ->required();
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernel", o->kernel, "Kernel name (see 'gemmkit list') or auto")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "Compute dtype: f64, f32, tf32, f16, bf16, i32, i64 (default: the inputs' "
                  "common dtype); inputs are converted to it, rounding to nearest");
  cmd->add_option("--out-dtype", o->out_dtype,
                  "dtype of C: the compute dtype (default; tf32 writes f32), or f32 for f16 and "
                  "bf16 (their FP32 sums unrounded)");
  cmd->add_flag("--transpose-a", o->trans_a, "Use A^T");
  cmd->add_flag("--transpose-b", o->trans_b, "Use B^T");
  cmd->add_option("--alpha", o->alpha, "Scale of the product")->capture_default_str();
  cmd->add_option("--beta", o->beta, "Scale of C0 (needs --c)")->capture_default_str();
  cmd->add_option("--c", o->c0_path, "C0, the matrix added as beta * C0");
  cmd->add_option("--verify", o->verify,
                  "auto (full up to 2e9 multiply-adds, else freivalds), full, freivalds or none")
      ->capture_default_str();
  cmd->add_option("--json", o->json_path, "Also write the run's details as JSON");
  cmd->callback([o] { run_multiply(*o); });
}

}  // namespace gemmkit::cli

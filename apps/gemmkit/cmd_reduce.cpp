// gemmkit reduce X --op sum|min|max|norm2: one number from every element of a matrix file
// (row-major order), on the CPU reference or a GPU kernel; --bench times the GPU ladder
// beside CUB and the device-to-device copy.
#include <cinttypes>
#include <cstdio>
#include <variant>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/reduce.hpp"

namespace gemmkit::cli {
namespace {

struct ReduceOptions {
  std::string input, op = "sum", backend = "auto", kernel = "auto", dtype, json_path, output, format;
  bool bench = false, list = false;
  std::uint64_t n = std::uint64_t(1) << 28, seed = 1;
  int reps = 20, warmup = 3;
};

void print_kernel_list() {
  std::printf("%-20s %-5s %4s  %s\n", "kernel", "back", "rung", "what it does");
  for (const auto& k : reduce_registry().entries())
    std::printf("%-20s %-5s %4s  %s\n", k.name.c_str(), std::string(backend_name(k.backend)).c_str(),
                k.role == KernelRole::reference ? "ref" : std::to_string(k.rung).c_str(), k.summary.c_str());
  std::printf("auto = %s on the GPU, cpu_reference on the CPU (--backend cpu)\n",
              std::string(kReduceAutoKernel).c_str());
}

std::string format_value(double value, DType dtype) {
  char buf[64];
  std::snprintf(buf, sizeof buf, dtype == DType::f32 ? "%.9g" : "%.17g", value);
  return buf;
}

template <class T>
void reduce_file(const ReduceOptions& o, ReduceOp op, const Matrix<T>& m, const ReduceChoice& choice) {
  // Matrices from the readers are dense (ld == cols), so the storage is the row-major order.
  const std::size_t n = static_cast<std::size_t>(m.size());
  const T value = reduce(m.data(), n, op, choice);
  const DType dtype = dtype_of<T>;
  const std::string text = format_value(value, dtype);
  const std::string backend(backend_name(choice.backend));
  std::printf("%s = %s\n", std::string(reduce_op_name(op)).c_str(), text.c_str());
  std::printf("(%s, %zu values of %s, %s kernel %s)\n", std::string(dtype_name(dtype)).c_str(), n,
              quoted_path(o.input).c_str(), backend.c_str(), choice.kernel.c_str());
  if (!o.output.empty()) {
    Matrix<T> out(1, 1);
    out(0, 0) = value;
    write_matrix(o.output, AnyMatrix(std::move(out)), parse_output_format(o.format));
  }
  if (!o.json_path.empty())
    write_json(o.json_path, json_document("reduce", {{"op", reduce_op_name(op)},
                             {"dtype", dtype_name(dtype)},
                             {"input", o.input},
                             {"n", n},
                             {"value", static_cast<double>(value)},
                             {"value_text", text},
                             {"backend", backend},
                             {"kernel", choice.kernel}}));
}

void run_bench(const ReduceOptions& o, ReduceOp op, DType dtype) {
  require_cuda_device();
  // The input and the copy's output, on the device.
  check_fits_device("reduce --bench --n " + std::to_string(o.n), 2.0 * double(o.n) * double(dtype_size(dtype)));
  const BenchReport r = reduce_bench(static_cast<std::size_t>(o.n), dtype, op, o.warmup, o.reps, o.seed);
  const BenchRow& copy = r.copy.value();
  const double copy_read_gbs = copy.rate;           // the copy reads `bytes` once
  const double copy_total_gbs = 2 * copy_read_gbs;  // ... and writes them once
  std::printf("reduce %s of %llu %s values (%.3f GB read), median of %d runs after %d warm-up\n",
              std::string(reduce_op_name(op)).c_str(), static_cast<unsigned long long>(o.n),
              std::string(dtype_name(dtype)).c_str(), r.bytes / 1e9, o.reps, o.warmup);
  std::printf("D2D copy of the same bytes: %.3f ms, %.1f GB/s read (%.1f GB/s read + write)\n",
              copy.timing.median_s * 1e3, copy_read_gbs, copy_total_gbs);
  std::printf("%-20s %4s %10s %9s %8s %11s %11s %9s %7s  %s\n", "kernel", "rung", "median ms", "GB/s",
              "% of CUB", "% copy read", "% copy r+w", "same bits", "spread", "value");
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchRow& row : r.rows) {
    const ReduceBenchFacts& facts = row.reduce.value();
    const double pct_read = row.percent_of_copy, pct_total = pct_read / 2;
    const std::string value = format_value(facts.value, dtype);
    std::printf("%-20s %4s %10.4f %9.1f %7.1f%% %10.1f%% %10.1f%% %9s %7s  %s\n", row.kernel.c_str(),
                row.reference ? "ref" : std::to_string(row.rung).c_str(), row.timing.median_s * 1e3, row.rate,
                row.percent_of_reference, pct_read, pct_total, facts.bit_identical ? "yes" : "NO",
                spread_text(row.timing).c_str(), value.c_str());
    rows.push_back({{"kernel", row.kernel},
                    {"rung", row.reference ? -1 : row.rung},
                    {"median_s", row.timing.median_s},
                    {"min_s", row.timing.min_s},
                    {"max_s", row.timing.max_s},
                    {"reps", row.timing.reps},
                    {"noisy", row.timing.noisy},
                    {"timing", timing_json(row.timing)},
                    {"gbs", row.rate},
                    {"pct_of_cub", row.percent_of_reference},
                    {"pct_of_copy_read", pct_read},
                    {"pct_of_copy_read_plus_write", pct_total},
                    {"bit_identical_runs", facts.bit_identical},
                    {"value", facts.value},
                    {"value_text", value}});
  }
  std::printf("%s\n", noisy_legend().c_str());
  if (!o.json_path.empty())
    write_json(o.json_path,
               json_document("reduce", {{"benchmark", "reduce"},
                {"op", reduce_op_name(op)},
                {"dtype", dtype_name(dtype)},
                {"n", o.n},
                {"bytes_read", static_cast<std::uint64_t>(r.bytes)},
                {"warmup", o.warmup},
                {"reps", o.reps},
                {"seed", o.seed},
                {"gbs_definition", "bytes read / median time (1 GB = 1e9 bytes)"},
                {"copy", {{"median_s", copy.timing.median_s},
                          {"min_s", copy.timing.min_s},
                          {"read_gbs", copy_read_gbs},
                          {"read_plus_write_gbs", copy_total_gbs},
                          {"note", "cudaMemcpy D2D of bytes_read: read_gbs = bytes/time, "
                                   "read_plus_write_gbs = 2*bytes/time"}}},
                {"kernels", rows}}));
}

}  // namespace

void add_reduce(CLI::App& app) {
  auto o = std::make_shared<ReduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reduce", "Sum, min, max or 2-norm of every element of a matrix file (row-major order); "
                "--bench times the GPU kernels beside CUB and the D2D copy; --list names the kernels");
  cmd->add_option("X", o->input, "Matrix file (.npy, .mtx, .csv, .txt)");
  cmd->add_option("--op", o->op, "sum, min, max or norm2 (min/max: any NaN gives NaN)")->capture_default_str();
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernel", o->kernel, "auto (our fastest), cpu_reference or a GPU kernel from --list")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "f32 or f64 (default: the file's, f64 for integer files; "
                                       "--bench: f32)");
  cmd->add_option("-o,--output", o->output, "Also write the result as a 1x1 matrix file");
  add_json_option(cmd, o->json_path, "Write the result (or the benchmark) as JSON");
  add_output_format_option(cmd, o->format);
  cmd->add_flag("--list", o->list, "List the kernels and exit");
  cmd->add_flag("--bench", o->bench, "Time every GPU kernel, CUB and the D2D copy on random data (needs a GPU)");
  cmd->add_option("--n", o->n, "--bench: number of values (default 2^28)")->check(non_negative_integer());
  cmd->add_option("--reps", o->reps, "--bench: timed runs per kernel")->capture_default_str()->check(at_least(1));
  cmd->add_option("--warmup", o->warmup, "--bench: untimed runs first")->capture_default_str()->check(at_least(0));
  cmd->add_option("--seed", o->seed, "--bench: seed of the random values")->capture_default_str()->check(non_negative_integer());
  cmd->callback([o] {
    if (o->list) {
      print_kernel_list();
      return;
    }
    const auto op = parse_reduce_op(o->op);
    if (!op) fail(ErrorCategory::usage, "reduce: unknown --op '" + o->op + "' (expected sum, min, max or norm2)");
    std::optional<DType> dtype;
    if (!o->dtype.empty()) {
      dtype = parse_dtype(o->dtype);
      if (!dtype || (*dtype != DType::f32 && *dtype != DType::f64))
        fail(ErrorCategory::usage, "reduce: --dtype must be f32 or f64, not '" + o->dtype + "'");
    }
    if (!o->output.empty()) output_format(o->output, parse_output_format(o->format));  // a bad extension: before any work
    check_outputs({{"-o", o->output}, {"--json", o->json_path}}, {{"input X", o->input}});
    if (o->bench) {
      if (!o->input.empty()) fail(ErrorCategory::usage, "reduce --bench takes no input file (it makes random data)");
      run_bench(*o, *op, dtype.value_or(DType::f32));
      return;
    }
    if (o->input.empty()) fail(ErrorCategory::usage, "reduce: an input file X is required (or --bench, --list)");
    const ReduceChoice choice = choose_reduce(parse_backend(o->backend), o->kernel);
    const AnyMatrix m = read_matrix(o->input);
    if (!dtype) {
      const DType from = dtype_of_any(m);
      dtype = (from == DType::f64 || from == DType::i32 || from == DType::i64) ? DType::f64 : DType::f32;
    }
    const AnyMatrix converted = dtype_of_any(m) == *dtype ? m : convert_input(m, *dtype, o->input);
    if (*dtype == DType::f32)
      reduce_file(*o, *op, std::get<Matrix<float>>(converted), choice);
    else
      reduce_file(*o, *op, std::get<Matrix<double>>(converted), choice);
  });
}

}  // namespace gemmkit::cli

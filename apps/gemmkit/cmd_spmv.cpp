// gemmkit spmv MATRIX.mtx X -o Y: the CSR sparse matrix-vector product y = A x, on the CPU
// reference or one of the GPU kernels; and gemmkit spmv --bench: every GPU rung beside
// cuSPARSE and the device copy on generated matrices, in one run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit::cli {
namespace {

struct SpmvOptions {
  std::string matrix_path, x_path, output, json_path;
  std::string backend = "auto", kernel = "auto", dtype, format;
  bool bench = false, list = false, tune = false;
  std::int64_t rows = 1 << 22;
  std::string matrices = "uniform,banded,powerlaw";
  int reps = 20, warmup = 5;
  std::uint64_t seed = 1;
};

const char* kKernelHelp =
    "auto (chosen from the mean and longest row length), scalar (one thread per row, the "
    "the teaching texts' kernel), vector (a warp per row), vector_groups (2-32 threads per row), merge_path "
    "(load-balanced over rows + nonzeros), cusparse, cusparse_alg2";

// The vector X, whose length must be the columns of A.
template <class T>
std::vector<T> read_x(const std::string& path, std::int64_t expected, const std::string& matrix_path,
                      std::int64_t matrix_rows) {
  const VectorFile v = read_vector_file(path, "x");
  if (v.size() != expected)
    fail(ErrorCategory::usage, "size mismatch: " + quoted_path(path) + " has " + std::to_string(v.size()) +
                                   " entries but " + quoted_path(matrix_path) + " is " + std::to_string(matrix_rows) +
                                   " x " + std::to_string(expected) + ", so x needs " + std::to_string(expected));
  return vector_values<T>(v);
}

template <class T>
void run_file(const SpmvOptions& o, const std::optional<Backend>& backend) {
  const CsrMatrix<T> a = read_csr<T>(o.matrix_path);
  const std::vector<T> x = read_x<T>(o.x_path, a.cols, o.matrix_path, a.rows);
  const auto start = std::chrono::steady_clock::now();
  SpmvRunOptions run;
  run.kernel = o.kernel;
  const SpmvHostResult<T> result = spmv_host(a, x, backend, run);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<T>& y = result.y;
  const std::string& kernel = result.kernel;
  const bool gpu = result.backend == Backend::cuda;

  if (!o.output.empty()) {
    Matrix<T> out(a.rows, 1);
    std::copy(y.begin(), y.end(), out.data());
    write_matrix(o.output, AnyMatrix(std::move(out)), parse_output_format(o.format));
    std::printf("y = A x: %s is %lld x %lld with %lld nonzeros; %s (%s, %s), %.3f ms; wrote %s\n",
                quoted_path(o.matrix_path).c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                static_cast<long long>(a.nnz()), kernel.c_str(), gpu ? "cuda" : "cpu",
                std::string(dtype_name(dtype_of<T>)).c_str(), seconds * 1e3, quoted_path(o.output).c_str());
  } else {
    for (const T v : y) std::printf("%.*g\n", sizeof(T) == 8 ? 17 : 9, static_cast<double>(v));
  }
  if (!o.json_path.empty())
    write_json(o.json_path, json_document("spmv", {{"matrix", o.matrix_path}, {"x", o.x_path}, {"output", o.output},
                             {"rows", a.rows}, {"cols", a.cols}, {"nnz", a.nnz()},
                             {"backend", gpu ? "cuda" : "cpu"}, {"kernel", kernel},
                             {"dtype", std::string(dtype_name(dtype_of<T>))}, {"seconds", seconds}}));
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

template <class T>
void run_bench(const SpmvOptions& o) {
  std::vector<SparsePattern> patterns;
  for (const auto& name : split_list(o.matrices)) patterns.push_back(parse_sparse_pattern(name));
  if (patterns.empty()) fail(ErrorCategory::usage, "--matrices names no matrix");
  if (o.rows < 1) fail(ErrorCategory::usage, "--rows must be at least 1");
  require_cuda_device();
  const std::string dtype(dtype_name(dtype_of<T>));
  nlohmann::json report = json_document("spmv", {{"benchmark", "spmv"}, {"dtype", dtype}, {"rows", o.rows},
                                                 {"reps", o.reps}, {"warmup", o.warmup}, {"seed", o.seed}});
  std::printf("gemmkit spmv --bench: %s, %lld rows, median of %d runs after %d warm-up\n", dtype.c_str(),
              static_cast<long long>(o.rows), o.reps, o.warmup);
  double log_best = 0, log_auto = 0, min_best = 1e300, min_auto = 1e300;
  bool all_correct = true;
  for (const SparsePattern pattern : patterns) {
    SparseGenOptions gen;
    gen.rows = o.rows;
    gen.seed = o.seed;
    const CsrMatrix<T> a = generate_csr<T>(pattern, gen);
    std::vector<T> x(static_cast<std::size_t>(a.cols));
    for (std::size_t i = 0; i < x.size(); ++i)  // seeded, in [-1, 1), no zeros
      x[i] = static_cast<T>(std::ldexp(double((i * 2654435761u + o.seed) % 2000001) - 1000000.5, -20));
    const std::vector<T> ref = spmv_reference(a, x);
    const CsrStats s = csr_stats(a);
    const BenchReport r = spmv_bench_cuda(a, x, ref, o.warmup, o.reps, o.tune);
    const SpmvBenchFacts& facts = r.spmv.value();

    const double bytes = r.bytes, copy_gbps = r.copy.value().rate;
    const BenchRow* reference = nullptr;
    const BenchRow* best = nullptr;
    const BenchRow* chosen = nullptr;
    for (const BenchRow& e : r.rows) {
      if (e.skipped) continue;
      if (e.kernel == r.percent_of) reference = &e;
      if (!e.reference && (!best || e.timing.median_s < best->timing.median_s)) best = &e;
      if (e.kernel == facts.auto_kernel) chosen = &e;
    }
    if (!reference || !best || !chosen) fail(ErrorCategory::device, "spmv --bench: no cuSPARSE timing or no kernel of ours ran");
    std::printf("\n%s: %lld x %lld, %lld nonzeros (mean %.1f, longest row %lld, %lld empty), %s offsets; "
                "%.1f MB per SpMV; copy %.0f GB/s; reference %s\n",
                sparse_pattern_name(pattern), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                static_cast<long long>(a.nnz()), s.mean_row_length, static_cast<long long>(s.max_row_length),
                static_cast<long long>(s.empty_rows), facts.offsets_64bit ? "64-bit" : "32-bit", bytes / 1e6,
                copy_gbps, reference->kernel.c_str());
    std::printf("  %-22s %10s %9s %8s %11s %9s %7s  %s\n", "kernel", "median ms", "GB/s", "% copy", "% cuSPARSE",
                "error", "spread", "note");
    nlohmann::json entries = nlohmann::json::array();
    for (const BenchRow& e : r.rows) {
      const bool bad = !e.skipped && !e.reference && !e.check.passed;
      all_correct = all_correct && !bad;
      if (e.skipped) {
        std::printf("  %-22s %10s %9s %8s %11s %9s %7s  skipped: %s\n", e.kernel.c_str(), "-", "-", "-", "-", "-", "-",
                    e.note.c_str());
      } else {
        std::printf("  %-22s %10.4f %9.0f %7.1f%% %10.1f%% %9.2g %7s  %s%s%s\n", e.kernel.c_str(),
                    e.timing.median_s * 1e3, e.rate, e.percent_of_copy, e.percent_of_reference, e.check.error,
                    spread_text(e.timing).c_str(), bad ? "OUT OF BOUND " : "",
                    e.kernel == facts.auto_kernel ? "(auto) " : "", e.note.c_str());
      }
      entries.push_back({{"kernel", e.kernel}, {"skipped", e.skipped}, {"note", e.note},
                         {"median_s", e.timing.median_s}, {"min_s", e.timing.min_s}, {"reps", e.timing.reps},
                         {"max_s", e.timing.max_s}, {"noisy", !e.skipped && e.timing.noisy},
                         {"timing", e.skipped ? nlohmann::json(nullptr) : timing_json(e.timing)},
                         {"gbps", e.skipped ? 0.0 : e.rate},
                         {"percent_of_copy", e.skipped ? 0.0 : e.percent_of_copy},
                         {"percent_of_cusparse", e.skipped ? 0.0 : e.percent_of_reference},
                         {"max_scaled_error", e.check.error}});
    }
    const double best_pct = best->percent_of_reference, auto_pct = chosen->percent_of_reference;
    std::printf("  best of ours: %s at %.1f%% of %s; auto (%s): %.1f%%\n", best->kernel.c_str(), best_pct,
                reference->kernel.c_str(), facts.auto_kernel.c_str(), auto_pct);
    log_best += std::log(best_pct);
    log_auto += std::log(auto_pct);
    min_best = std::min(min_best, best_pct);
    min_auto = std::min(min_auto, auto_pct);
    report["matrices"].push_back({{"pattern", sparse_pattern_name(pattern)}, {"rows", a.rows}, {"cols", a.cols},
                                  {"nnz", a.nnz()}, {"mean_row_length", s.mean_row_length},
                                  {"max_row_length", s.max_row_length}, {"empty_rows", s.empty_rows},
                                  {"offsets_64bit", facts.offsets_64bit}, {"bytes_per_spmv", std::int64_t(r.bytes)},
                                  {"copy_median_s", r.copy->timing.median_s}, {"copy_gbps", copy_gbps},
                                  {"reference", reference->kernel}, {"best", best->kernel},
                                  {"best_percent_of_cusparse", best_pct}, {"auto", facts.auto_kernel},
                                  {"auto_percent_of_cusparse", auto_pct}, {"entries", entries}});
  }
  const double n = double(patterns.size());
  const double geo_best = std::exp(log_best / n), geo_auto = std::exp(log_auto / n);
  std::printf("\ngeometric mean of %% of cuSPARSE over %zu matrices: best of ours %.1f%% (lowest %.1f%%), "
              "auto %.1f%% (lowest %.1f%%)\n",
              patterns.size(), geo_best, min_best, geo_auto, min_auto);
  std::printf("%s\n", noisy_legend().c_str());
  std::printf("GB/s: CSR arrays + x + y once over the median time; %% copy: against cudaMemcpy D2D moving as "
              "many bytes; error: max over rows of |y - ref| / ((len + 1) eps sum|a x|), in bound when <= 1\n");
  report["geomean_best_percent_of_cusparse"] = geo_best;
  report["geomean_auto_percent_of_cusparse"] = geo_auto;
  report["lowest_best_percent_of_cusparse"] = min_best;
  report["lowest_auto_percent_of_cusparse"] = min_auto;
  report["all_within_error_bound"] = all_correct;
  if (!o.json_path.empty()) write_json(o.json_path, report);
  if (!all_correct) fail(ErrorCategory::numeric, "spmv --bench: a kernel's result is outside the error bound (see the table)");
}

void run_spmv(const SpmvOptions& o) {
  if (o.list) {
    for (const auto& k : spmv_registry().entries())
      if (k.backend == Backend::cuda) std::printf("%s\n", k.name.c_str());
    return;
  }
  const std::string dtype = !o.dtype.empty() ? o.dtype : o.bench ? "f32" : "f64";
  if (dtype != "f32" && dtype != "f64")
    fail(ErrorCategory::usage, "unknown dtype '" + dtype + "' for spmv (expected f32 or f64)");
  if (o.kernel != "auto") {
    const SpmvKernel& k = spmv_registry().get(o.kernel);  // a usage error naming the kernels
    if (k.backend != Backend::cuda)
      fail(ErrorCategory::usage, "--kernel " + o.kernel + " is the CPU backend's kernel: use --backend cpu "
                                 "and leave --kernel auto");
  }
  const std::optional<Backend> backend = parse_backend(o.backend);
  if (!o.output.empty()) output_format(o.output, parse_output_format(o.format));  // fails before any work
  check_outputs({{"-o", o.output}, {"--json", o.json_path}}, {{"input MATRIX", o.matrix_path}, {"input X", o.x_path}});
  // --backend cuda, or a GPU kernel by name, needs the device.
  if (backend == Backend::cuda || (o.kernel != "auto" && backend != Backend::cpu)) require_cuda_device();
  if (o.bench) {
    if (!o.matrix_path.empty()) fail(ErrorCategory::usage, "--bench generates its matrices: give no MATRIX or X");
    if (dtype == "f32") run_bench<float>(o);
    else run_bench<double>(o);
    return;
  }
  if (o.matrix_path.empty() || o.x_path.empty())
    fail(ErrorCategory::usage, "spmv needs MATRIX.mtx and X (or --bench, or --list)");
  if (format_from_path(o.matrix_path) != FileFormat::mtx)
    fail(ErrorCategory::usage, quoted_path(o.matrix_path) + ": the sparse matrix must be a Matrix Market .mtx file");
  if (dtype == "f32") run_file<float>(o, backend);
  else run_file<double>(o, backend);
}

}  // namespace

void add_spmv(CLI::App& app) {
  auto opt = std::make_shared<SpmvOptions>();
  CLI::App* cmd = app.add_subcommand(
      "spmv", "Sparse matrix-vector product y = A x (CSR), or --bench of the GPU kernels beside cuSPARSE");
  cmd->add_option("matrix", opt->matrix_path, "Sparse matrix A (.mtx)");
  cmd->add_option("x", opt->x_path, "Vector x (.npy 1-D or n x 1, .csv, .mtx); length = columns of A");
  cmd->add_option("-o,--output", opt->output, "Write y here (.npy, .mtx, .csv); without it y goes to stdout");
  cmd->add_option("--backend", opt->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernel", opt->kernel, kKernelHelp)->capture_default_str();
  cmd->add_option("--dtype", opt->dtype, "f32 or f64 (default f64; f32 with --bench)");
  add_json_option(cmd, opt->json_path, "Write the results as JSON");
  add_output_format_option(cmd, opt->format);
  cmd->add_flag("--list", opt->list, "List the kernels and exit");
  cmd->add_flag("--bench", opt->bench,
                "Generate the benchmark matrices and time every GPU kernel, cuSPARSE and the copy (needs a GPU)");
  cmd->add_option("--rows", opt->rows, "--bench: rows (and columns) of each matrix")->capture_default_str();
  cmd->add_option("--matrices", opt->matrices, "--bench: uniform, banded, powerlaw (comma-separated)")
      ->capture_default_str();
  cmd->add_option("--reps", opt->reps, "--bench: timed runs per kernel (median reported)")
      ->capture_default_str()->check(at_least(1));
  cmd->add_option("--warmup", opt->warmup, "--bench: untimed runs first")->capture_default_str()->check(at_least(0));
  cmd->add_option("--seed", opt->seed, "--bench: seed of the generated matrices")->capture_default_str()->check(non_negative_integer());
  cmd->add_flag("--tune", opt->tune, "--bench: also time every group size and merge-path tile variant");
  cmd->callback([opt] { run_spmv(*opt); });
}

}  // namespace gemmkit::cli

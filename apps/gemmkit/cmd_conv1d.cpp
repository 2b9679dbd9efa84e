// gemmkit conv1d X MASK -o Y: one-dimensional convolution ("same" size, zero padding);
// gemmkit conv1d --bench: every GPU rung and the device-to-device copy timed in one run.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"

namespace gemmkit::cli {
namespace {

struct Conv1dCliOptions {
  std::string x_path, mask_path, output, backend = "auto", kernel = "auto", dtype, json_path, format;
  bool bench = false, list = false;
  std::int64_t n = std::int64_t(1) << 28, width = 7;
  int reps = 20, warmup = 3;
  std::uint64_t seed = 1;
};

// f32 when both files hold f32 (or narrower floats), else f64 (f64 or integer data).
DType compute_dtype(const Conv1dCliOptions& o, DType x, DType mask) {
  if (!o.dtype.empty()) {
    const auto d = parse_dtype(o.dtype);
    if (!d || (*d != DType::f32 && *d != DType::f64))
      fail(ErrorCategory::usage, "conv1d --dtype must be f32 or f64, not '" + o.dtype + "'");
    return *d;
  }
  const auto narrow_float = [](DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16; };
  return narrow_float(x) && narrow_float(mask) ? DType::f32 : DType::f64;
}

template <class T>
void convolve_files(const Conv1dCliOptions& o, const VectorFile& x_file, const VectorFile& mask_file,
                    const Conv1dOptions& options) {
  const std::vector<T> x = vector_values<T>(x_file), mask = vector_values<T>(mask_file);
  if (mask.empty()) fail(ErrorCategory::input, quoted_path(o.mask_path) + ": the mask is empty (it needs at least one tap)");
  const std::int64_t n = std::int64_t(x.size()), width = std::int64_t(mask.size());
  std::vector<T> y(x.size());
  const auto start = std::chrono::steady_clock::now();
  const Conv1dRun ran = conv1d(x.data(), n, mask.data(), width, y.data(), options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!o.output.empty()) {
    Matrix<T> out(x_file.row ? 1 : n, x_file.row ? n : 1);
    for (std::int64_t i = 0; i < n; ++i) out.data()[i] = y[std::size_t(i)];
    write_matrix(o.output, AnyMatrix(std::move(out)), parse_output_format(o.format));
    std::printf("%s: %lld values, %s, mask width %lld (%s, %s)\n", quoted_path(o.output).c_str(),
                static_cast<long long>(n), std::string(dtype_name(dtype_of<T>)).c_str(),
                static_cast<long long>(width), std::string(backend_name(ran.backend)).c_str(),
                ran.kernel.c_str());
  } else {
    for (const T v : y) std::printf(sizeof(T) == 4 ? "%.9g\n" : "%.17g\n", double(v));
  }
  if (!o.json_path.empty())
    write_json(o.json_path, json_document("conv1d", {{"x", o.x_path}, {"mask", o.mask_path}, {"n", n}, {"width", width},
                             {"dtype", dtype_name(dtype_of<T>)},
                             {"backend", backend_name(ran.backend)}, {"kernel", ran.kernel},
                             {"seconds", seconds}}));
}

void list_kernels() {
  std::printf("%-14s %4s  %s\n", "kernel", "rung", "what it adds");
  for (const auto& k : conv1d_registry().entries())
    if (k.backend == Backend::cuda) std::printf("%-14s %4d  %s\n", k.name.c_str(), k.rung, k.summary.c_str());
  std::printf("constant-memory rungs (constant_mask, tiled) hold masks of up to %lld taps; "
              "auto runs streaming, or basic for masks whose halo overflows its shared memory\n",
              static_cast<long long>(kConv1dConstantMaskTaps));
}

void run_bench(const Conv1dCliOptions& o) {
  const auto dtype = parse_dtype(o.dtype.empty() ? "f32" : o.dtype);
  if (!dtype || (*dtype != DType::f32 && *dtype != DType::f64))
    fail(ErrorCategory::usage, "conv1d --dtype must be f32 or f64, not '" + o.dtype + "'");
  if (o.n < 1) fail(ErrorCategory::usage, "conv1d --bench: --n must be at least 1");
  if (o.width < 1) fail(ErrorCategory::usage, "conv1d --bench: --width must be at least 1");
  require_cuda_device();
  // The input, the output and the mask, on the device.
  check_fits_device("conv1d --bench --n " + std::to_string(o.n) + " --width " + std::to_string(o.width),
                    (2.0 * double(o.n) + double(o.width)) * double(dtype_size(*dtype)));
  const BenchReport b = conv1d_bench(*dtype, o.n, o.width, o.warmup, o.reps, o.seed);
  const DeviceQuery q = query_devices();
  std::printf("conv1d: %s, n = %lld, mask width %lld, median of %d runs after %d warm-up, %s\n",
              std::string(dtype_name(b.dtype)).c_str(), static_cast<long long>(o.n),
              static_cast<long long>(o.width), o.reps, o.warmup,
              q.devices.empty() ? "?" : q.devices.front().name.c_str());
  std::printf("GB/s counts n values read + n written once; the device copy counts read + write too\n");
  std::printf("%-14s %10s %10s %9s %10s %7s  %s\n", "kernel", "median ms", "GB/s", "% of copy",
              "err/bound", "spread", "checked");
  nlohmann::json rows = nlohmann::json::array();
  const BenchRow& copy = b.copy.value();
  std::vector<const BenchRow*> listed;  // the rungs, then the copy
  for (const BenchRow& r : b.rows) listed.push_back(&r);
  listed.push_back(&copy);
  for (const BenchRow* row : listed) {
    const BenchRow& r = *row;
    if (r.skipped) {
      std::printf("%-14s skipped: %s\n", r.kernel.c_str(), r.note.c_str());
      rows.push_back({{"kernel", r.kernel}, {"skipped", r.note}, {"noisy", false}, {"timing", nullptr}});
      continue;
    }
    const bool is_copy = row == &copy;
    const double percent_of_copy = is_copy ? 100.0 : r.percent_of_copy;
    std::printf("%-14s %10.4f %10.1f %8.1f%% %10s %7s  %s\n", r.kernel.c_str(), r.timing.median_s * 1e3, r.rate,
                percent_of_copy, is_copy ? "-" : (std::to_string(r.check.error).substr(0, 8)).c_str(),
                spread_text(r.timing).c_str(), is_copy ? "(reference)" : std::to_string(r.conv1d->checked).c_str());
    nlohmann::json j = {{"kernel", r.kernel}, {"median_s", r.timing.median_s}, {"min_s", r.timing.min_s},
                        {"max_s", r.timing.max_s}, {"reps", r.timing.reps}, {"noisy", r.timing.noisy},
                        {"timing", timing_json(r.timing)}, {"bytes", b.bytes}, {"gb_per_s", r.rate},
                        {"percent_of_copy", percent_of_copy}};
    if (!is_copy) {
      j["max_error_over_bound"] = r.check.error;
      j["outputs_checked"] = r.conv1d->checked;
    }
    rows.push_back(j);
  }
  std::printf("%s\n", noisy_legend().c_str());
  const bool accurate = b.all_passed();
  if (!o.json_path.empty())
    write_json(o.json_path, json_document("conv1d", {{"benchmark", "conv1d"}, {"dtype", dtype_name(b.dtype)}, {"n", o.n},
                             {"width", o.width}, {"warmup", o.warmup}, {"reps", o.reps},
                             {"seed", o.seed}, {"bytes_counted", "n read + n written"},
                             {"error_bound", "(width + 1) * eps * sum_j |mask[j] x[i+j-width/2]|"},
                             {"all_within_bound", accurate}, {"rows", rows}}));
  if (!accurate)
    fail(ErrorCategory::numeric, "conv1d --bench: a kernel's output exceeds the error bound "
                                 "(err/bound > 1 above)");
}

void run_conv1d(const Conv1dCliOptions& o) {
  if (o.list) {
    list_kernels();
    return;
  }
  if (!o.output.empty()) output_format(o.output, parse_output_format(o.format));  // a bad extension: before any work
  check_outputs({{"-o", o.output}, {"--json", o.json_path}}, {{"input X", o.x_path}, {"input MASK", o.mask_path}});
  if (o.bench) {
    if (!o.x_path.empty() || !o.output.empty())
      fail(ErrorCategory::usage, "conv1d --bench makes its own random data: give no X, MASK or -o");
    run_bench(o);
    return;
  }
  if (o.x_path.empty() || o.mask_path.empty())
    fail(ErrorCategory::usage, "conv1d needs X and MASK (or --bench, or --list)");
  Conv1dOptions options;
  options.backend = parse_backend(o.backend);
  options.kernel = o.kernel;
  // Cheap checks first, so a typo costs no reading or computing.
  if (o.kernel != "auto" && !o.kernel.empty()) {
    if (auto why = conv1d_kernel_rejection(o.kernel, DType::f32, 1); why && why->rfind("unknown", 0) == 0)
      fail(ErrorCategory::usage, *why);
  }
  // A rung by name is checked against the mask first (in conv1d()), then needs the device too.
  if (options.backend == Backend::cuda) require_cuda_device();
  const VectorFile x = read_vector_file(o.x_path, "X");
  const VectorFile mask = read_vector_file(o.mask_path, "MASK");
  if (rows_of(mask.values) * cols_of(mask.values) == 0)
    fail(ErrorCategory::input, quoted_path(o.mask_path) + ": the mask is empty (it needs at least one tap)");
  if (compute_dtype(o, dtype_of_any(x.values), dtype_of_any(mask.values)) == DType::f32)
    convolve_files<float>(o, x, mask, options);
  else
    convolve_files<double>(o, x, mask, options);
}

}  // namespace

void add_conv1d(CLI::App& app) {
  auto o = std::make_shared<Conv1dCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "conv1d",
      "1D convolution, y[i] = sum_j MASK[j] X[i + j - w/2] with zeros outside X (same length as "
      "X); --bench times every GPU rung beside the device copy");
  cmd->add_option("X", o->x_path, "Input vector: 1-D .npy, or n x 1 / 1 x n in .npy, .csv, .mtx");
  cmd->add_option("MASK", o->mask_path, "Mask vector (any width >= 1; even widths reach w/2 back, "
                                        "w/2 - 1 forward)");
  cmd->add_option("-o,--output", o->output, "Write Y (.npy, .csv, .mtx), in X's orientation; "
                                            "without it the values print one per line");
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernel", o->kernel,
                  "auto (the fastest rung that takes the mask), basic, constant_mask, tiled or "
                  "streaming (see --list)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "f32 or f64 (default: f32 when both files hold f32, else f64; --bench: f32)");
  add_json_option(cmd, o->json_path, "Write the run (or the benchmark table) as JSON");
  add_output_format_option(cmd, o->format);
  cmd->add_flag("--list", o->list, "List the GPU kernels and exit");
  cmd->add_flag("--bench", o->bench,
                "Time every GPU rung and the device-to-device copy on random data (needs a GPU)");
  cmd->add_option("--n", o->n, "--bench: input length")->capture_default_str();
  cmd->add_option("--width", o->width, "--bench: mask width")->capture_default_str();
  cmd->add_option("--reps", o->reps, "--bench: timed runs per kernel (the median is reported)")
      ->capture_default_str()->check(at_least(1));
  cmd->add_option("--warmup", o->warmup, "--bench: untimed runs first")->capture_default_str()->check(at_least(0));
  cmd->add_option("--seed", o->seed, "--bench: random seed")->capture_default_str()->check(non_negative_integer());
  cmd->callback([o] { run_conv1d(*o); });
}

}  // namespace gemmkit::cli

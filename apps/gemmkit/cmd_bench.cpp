// gemmkit bench: every kernel of a backend beside the reference library, in one run.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "share_path.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::cli {
namespace {

struct BenchOptions {
  std::string backend = "auto", kernels = "all", sizes, shapes, dtype = "f32";
  std::int64_t m = 0, n = 0, k = 0;
  int warmup = 1, reps = 5;
  double max_seconds = 3.0;
  double max_run_seconds = 2.0;
  std::uint64_t seed = 1;
  bool trans_a = false, trans_b = false;  // every shape with A and/or B stored transposed
  std::string json_path, csv_path, plot_path;
};

struct Shape {
  std::int64_t m, n, k;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  std::string text() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

// Default square sizes when neither --sizes, --shapes nor --m/--n/--k is given.
constexpr const char* kDefaultCpuSizes = "256,512,1024";
constexpr const char* kDefaultCudaSizes = "256,512,1024,2048,4096,8192";

struct Row {
  std::string kernel;
  int rung = 0;
  bool reference = false;
  std::optional<DType> accuracy;  // the entry's KernelEntry::accuracy
  DType tolerance_dtype = DType::f32;
  Shape shape{};
  bool skipped = false;
  bool failed = false;  // it threw: the note says what (and the run exits non-zero)
  std::string note;     // why it was skipped or failed
  int reps = 0;
  double median_s = 0, min_s = 0, gflops = 0;
  double percent_of_reference = -1;  // -1: no reference for this dtype (or not run)
  // The reference's median in runs alternating with this kernel's (0: not timed in pairs,
  // e.g. the reference itself); the ratio is taken against it.
  double paired_reference_median_s = 0;
  VerifyResult check;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Parses a positive integer, or throws a usage error naming the option and the item.
std::int64_t positive_integer(const std::string& item, const char* option, const char* expected) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(item, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (item.empty() || used != item.size() || v < 1 || !std::isdigit(static_cast<unsigned char>(item[0])))
    fail(ErrorCategory::usage, std::string(option) + ": '" + item + "' is not " + expected);
  return v;
}

std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    sizes.push_back(positive_integer(item, "--sizes", "a positive integer"));
  if (sizes.empty()) fail(ErrorCategory::usage, "--sizes is empty");
  return sizes;
}

// "4000x4000x4000,8192x1024x8192": a list of MxNxK shapes (x or X between the sizes).
std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::vector<std::string> parts(1);
    for (char ch : item) {
      if (ch == 'x' || ch == 'X') parts.emplace_back();
      else parts.back() += ch;
    }
    if (parts.size() != 3)
      fail(ErrorCategory::usage, "--shapes: '" + item + "' is not MxNxK (e.g. 8192x1024x4096)");
    std::int64_t sizes[3];
    for (int i = 0; i < 3; ++i) {
      try {
        sizes[i] = positive_integer(parts[i], "--shapes", "a positive integer");
      } catch (const Error&) {
        fail(ErrorCategory::usage, "--shapes: '" + item + "' is not MxNxK with positive "
                                   "integers (e.g. 8192x1024x4096)");
      }
    }
    shapes.push_back({sizes[0], sizes[1], sizes[2]});
  }
  if (shapes.empty()) fail(ErrorCategory::usage, "--shapes is empty");
  return shapes;
}

// The reference every ratio is taken against: the first reference entry (in registry
// order) that supports the dtype and computes in it; cuda_cublas (pedantic FP32), never
// cuda_cublas_tf32. nullptr if there is none (integer dtypes).
const KernelEntry* primary_reference(const std::vector<const KernelEntry*>& kernels, Backend backend,
                                     DType dtype) {
  const KernelEntry* fallback = nullptr;
  for (const KernelEntry* e : Registry::instance().of_backend(backend)) {
    if (e->role != KernelRole::reference || !e->supports(dtype) ||
        std::find(kernels.begin(), kernels.end(), e) == kernels.end())
      continue;
    if (tolerance_dtype(dtype, e->accuracy) == dtype) return e;
    if (!fallback) fallback = e;
  }
  return fallback;
}

// "412 s", "41.3 s", "2.04 s", "0.31 s": three digits, so 2.04 is not shown as the budget 2
std::string seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, s >= 100 ? "%.0f s" : "%.3g s", s);
  return buf;
}

// The kernels to run: those named (or all of the backend) that support the dtype, with the
// backend's reference library always included so every ratio is measured in the same run.
std::vector<const KernelEntry*> select_kernels(const std::string& names, Backend backend,
                                               DType dtype) {
  const Registry& registry = Registry::instance();
  std::vector<const KernelEntry*> chosen;
  if (names == "all") {
    for (const KernelEntry* e : registry.of_backend(backend))
      if (e->supports(dtype)) chosen.push_back(e);
  } else {
    std::stringstream in(names);
    for (std::string name; std::getline(in, name, ',');) {
      const KernelEntry& e = registry.get(name);
      if (e.backend != backend)
        fail(ErrorCategory::usage, "kernel '" + name + "' is a " +
                                       std::string(backend_name(e.backend)) +
                                       " kernel; this benchmark runs the " +
                                       std::string(backend_name(backend)) + " backend");
      if (!e.supports(dtype))
        fail(ErrorCategory::usage, "kernel '" + name + "' does not support " +
                                       std::string(dtype_name(dtype)));
      chosen.push_back(&e);
    }
    // The references go first, in registry order (the primary one first).
    std::vector<const KernelEntry*> references;
    for (const KernelEntry* e : registry.of_backend(backend))
      if (e->role == KernelRole::reference && e->supports(dtype) &&
          std::find(chosen.begin(), chosen.end(), e) == chosen.end())
        references.push_back(e);
    chosen.insert(chosen.begin(), references.begin(), references.end());
  }
  if (chosen.empty())
    fail(ErrorCategory::usage, "no " + std::string(backend_name(backend)) + " kernel supports " +
                                   std::string(dtype_name(dtype)));
  return chosen;
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string scientific(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

nlohmann::json to_json(const Row& r, DType dtype, Backend backend) {
  const auto number_or_null = [&](double x) {
    return r.skipped ? nlohmann::json(nullptr) : nlohmann::json(x);
  };
  return {{"kernel", r.kernel}, {"backend", backend_name(backend)}, {"rung", r.rung},
          {"reference", r.reference}, {"dtype", dtype_name(dtype)},
          {"accuracy", r.accuracy ? nlohmann::json(dtype_name(*r.accuracy)) : nlohmann::json(nullptr)},
          {"m", r.shape.m}, {"n", r.shape.n}, {"k", r.shape.k},
          {"skipped", r.skipped}, {"failed", r.failed}, {"note", r.note}, {"reps", r.reps},
          {"median_ms", number_or_null(r.median_s * 1e3)}, {"min_ms", number_or_null(r.min_s * 1e3)},
          {"gflops", number_or_null(r.gflops)},
          {"percent_of_reference", r.percent_of_reference < 0 ? nlohmann::json(nullptr)
                                                              : nlohmann::json(r.percent_of_reference)},
          {"paired_reference_median_ms", r.paired_reference_median_s > 0
                                             ? nlohmann::json(r.paired_reference_median_s * 1e3)
                                             : nlohmann::json(nullptr)},
          {"error", number_or_null(r.check.error)}, {"error_method", verify_mode_name(r.check.method)},
          {"tolerance", number_or_null(r.check.tolerance)},
          {"tolerance_dtype", dtype_name(r.tolerance_dtype)}, {"passed", r.check.passed}};
}

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

void write_csv_results(const std::string& path, const std::vector<Row>& rows, DType dtype,
                       Backend backend) {
  std::string text =
      "kernel,backend,dtype,m,n,k,reps,median_ms,min_ms,gflops,percent_of_reference,error,"
      "error_method,passed,tolerance_dtype,skipped,note\n";
  for (const Row& r : rows) {
    const auto value = [&](const std::string& x) { return r.skipped ? std::string() : x; };
    text += r.kernel + "," + std::string(backend_name(backend)) + "," +
            std::string(dtype_name(dtype)) + "," + std::to_string(r.shape.m) + "," +
            std::to_string(r.shape.n) + "," + std::to_string(r.shape.k) + "," +
            std::to_string(r.reps) + "," + value(fixed(r.median_s * 1e3, 4)) + "," +
            value(fixed(r.min_s * 1e3, 4)) + "," + value(fixed(r.gflops, 3)) + "," +
            (r.percent_of_reference < 0 ? "" : fixed(r.percent_of_reference, 1)) + "," +
            value(scientific(r.check.error)) + "," +
            std::string(verify_mode_name(r.check.method)) + "," +
            (r.check.passed ? "true" : "false") + "," +
            std::string(dtype_name(r.tolerance_dtype)) + "," + (r.skipped ? "true" : "false") +
            "," + csv_field(r.note) + "\n";
  }
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

// Runs a program and waits for it; its exit status, or -1. With `quiet`, its output is dropped.
int run_program(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (quiet) {
      const int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Runs the plot script on the JSON results, with the configured Python (Debian's, where
// python3-matplotlib lives) or else the first python3 on PATH that has matplotlib.
void plot(const std::string& png_path, const nlohmann::json& results) {
  const std::string script = plot_script_path();
  std::string python;
  for (const char* candidate : {GEMMKIT_PYTHON, "python3"})
    if (run_program({candidate, "-c", "import matplotlib"}, true) == 0) {
      python = candidate;
      break;
    }
  if (python.empty())
    fail(ErrorCategory::device,  // not the user's input: the plotting environment is missing
         "cannot plot " + quoted_path(png_path) + ": no python3 with matplotlib (scripts/install-deps.sh "
         "installs python3-matplotlib); no output was written");

  char json_path[] = "/tmp/gemmkit-bench-XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) fail(ErrorCategory::input, "cannot create a temporary file for the plot");
  const std::string text = results.dump();
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  // The script draws into a scratch file, which then goes through AtomicFile like every
  // other output (a link's target replaced, committed with the rest of the run).
  char png_scratch[] = "/tmp/gemmkit-plot-XXXXXX.png";
  const int png_fd = mkstemps(png_scratch, 4);
  if (png_fd < 0) {
    std::remove(json_path);
    fail(ErrorCategory::input, "cannot create a temporary file for the plot");
  }
  ::close(png_fd);
  const int status = written ? run_program({python, script, json_path, "-o", png_scratch}, false) : -1;
  std::remove(json_path);
  std::ifstream png(png_scratch, std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  std::remove(png_scratch);
  if (status != 0 || image.empty())
    fail(ErrorCategory::device, "plotting " + quoted_path(png_path) + " failed; no output was written");
  AtomicFile out(png_path);
  out.write(image);
  out.commit();
}

// Random operands of one shape and the problem over them (p points into a, b and c).
struct Operands {
  AnyMatrix a, b, c;
  GemmProblem p;
};

std::unique_ptr<Operands> make_operands(const Shape& s, DType dtype, const Distribution& dist,
                                        const BenchOptions& o) {
  auto ops = std::make_unique<Operands>();
  // tf32 operands are f32 matrices; the problem's dtype says the tensor cores read them.
  ops->a = o.trans_a ? random_matrix(s.k, s.m, dtype, dist, o.seed) : random_matrix(s.m, s.k, dtype, dist, o.seed);
  ops->b = o.trans_b ? random_matrix(s.n, s.k, dtype, dist, o.seed + 1)
                     : random_matrix(s.k, s.n, dtype, dist, o.seed + 1);
  ops->c = random_matrix(s.m, s.n, dtype, dist, o.seed + 2);  // beta = 0: overwritten
  ops->p = std::visit(
      [&](auto& cm) -> GemmProblem {
        using T = typename std::decay_t<decltype(cm)>::value_type;
        return make_problem<T>(std::get<Matrix<T>>(ops->a).view(), o.trans_a,
                               std::get<Matrix<T>>(ops->b).view(), o.trans_b, cm.view());
      },
      ops->c);
  ops->p.dtype = dtype;
  return ops;
}

// Below this many flops a shape is its own probe: even the naive kernels take well under a
// second.
constexpr double kFirstProbeFlops = 2e8;

// The same proportions as s with about `flops` flops; every side a multiple of 64 where s's is
// at least 64, so kernels with divisibility rules accept it where they accept s.
Shape scaled(const Shape& s, double flops) {
  const double f = std::cbrt(flops / s.flops());
  auto side = [&](std::int64_t x) {
    if (x < 64) return x;
    return std::max<std::int64_t>(64, std::int64_t(double(x) * f) / 64 * 64);
  };
  return {side(s.m), side(s.n), side(s.k)};
}

// A kernel's rate (FLOP/s) on smaller shapes of s's proportions, for a first shape too large
// to run blind: a slow rung's single run there can take minutes (cpu_naive at 4096^3). Each
// probe is 8x the last while the estimate says s would exceed `limit` and the next probe
// would stay under a quarter of it. 0 when no probe could run.
double probe_rate(const KernelEntry& e, const Shape& s, DType dtype, const Distribution& dist,
                  const BenchOptions& o, double limit) {
  double rate = 0;
  for (double budget = kFirstProbeFlops; budget < s.flops(); budget *= 8) {
    const Shape probe = scaled(s, budget);
    if (probe.flops() >= s.flops()) break;
    const auto ops = make_operands(probe, dtype, dist, o);
    if (e.rejects(ops->p)) break;
    // One untimed run first: lazy loading and thread start-up would inflate the estimate.
    const TimingOptions once{1, 1, limit};
    const double seconds = time_kernel(e, ops->p, once).front();
    if (seconds <= 0) break;
    rate = std::max(rate, probe.flops() / seconds);
    if (s.flops() / rate <= limit || seconds * 8 > limit / 4) break;
  }
  return rate;
}

void run_bench(const BenchOptions& o) {
  const auto dtype_parsed = parse_dtype(o.dtype);
  if (!dtype_parsed) fail(ErrorCategory::usage, "unknown dtype '" + o.dtype + "'");
  const DType dtype = *dtype_parsed;
  Backend backend = Backend::cpu;
  if (auto b = parse_backend(o.backend)) {
    backend = *b;
  } else if (cuda_device_available() && !Registry::instance().of_backend(Backend::cuda).empty()) {
    backend = Backend::cuda;
  }
  if (backend == Backend::cuda) require_cuda_device();
  if (o.plot_path == "-")
    fail(ErrorCategory::usage, "--plot - : a PNG does not go to standard output; name a file");
  check_outputs({o.json_path, o.csv_path, o.plot_path});

  std::vector<Shape> shapes;
  const bool mnk = o.m || o.n || o.k;
  if (int(mnk) + int(!o.sizes.empty()) + int(!o.shapes.empty()) > 1)
    fail(ErrorCategory::usage, "give one of --sizes, --shapes or --m/--n/--k");
  if (mnk) {
    if (o.m < 1 || o.n < 1 || o.k < 1)
      fail(ErrorCategory::usage, "--m, --n and --k must all be given and positive");
    shapes.push_back({o.m, o.n, o.k});
  } else if (!o.shapes.empty()) {
    shapes = parse_shapes(o.shapes);
  } else {
    const std::string sizes =
        !o.sizes.empty() ? o.sizes : backend == Backend::cuda ? kDefaultCudaSizes : kDefaultCpuSizes;
    for (std::int64_t s : parse_sizes(sizes)) shapes.push_back({s, s, s});
  }
  // Smallest first: a kernel's rate at a smaller shape predicts its time at a larger one.
  std::stable_sort(shapes.begin(), shapes.end(),
                   [](const Shape& x, const Shape& y) { return x.flops() < y.flops(); });
  if (!o.plot_path.empty() &&
      std::none_of(shapes.begin(), shapes.end(),
                   [](const Shape& s) { return s.m == s.n && s.n == s.k; }))
    fail(ErrorCategory::usage, "--plot draws square shapes (GFLOP/s against N) and none was "
                               "given; add one, e.g. --shapes 2048x2048x2048,...");
  const auto kernels = select_kernels(o.kernels, backend, dtype);
  const KernelEntry* reference_entry = primary_reference(kernels, backend, dtype);
  const int device_cc = backend == Backend::cuda ? current_compute_capability() : 0;
  const TimingOptions timing{o.warmup, o.reps, o.max_seconds};
  const Distribution dist = Distribution::parse(is_integer(dtype) ? "ints:-9:9" : "uniform");
  const bool progress = progress_wanted();

  // Each kernel's best rate so far (FLOP/s at its fastest run), to predict larger shapes.
  std::map<const KernelEntry*, double> best_rate;
  std::vector<Row> rows;
  const std::size_t total = shapes.size() * kernels.size();
  std::size_t done = 0;
  // A failure at one shape (out of memory, a device error) or of one kernel is recorded in
  // its row; the other results are still printed and written, and the run exits non-zero.
  std::optional<Error> first_failure;
  auto failure = [&](const std::exception& ex) {
    const auto* error = dynamic_cast<const Error*>(&ex);
    const Error e = error ? *error
                          : dynamic_cast<const std::bad_alloc*>(&ex)
                                ? Error(ErrorCategory::out_of_memory, "out of host memory")
                                : Error(ErrorCategory::internal, ex.what());
    if (!first_failure) first_failure = e;
    return "failed: " + std::string(e.what());
  };
  // Runs predicted to take longer than this are skipped, from the first shape on.
  const double run_limit = o.max_run_seconds;
  for (const Shape& s : shapes) {
    std::unique_ptr<Operands> ops;
    // One double reference per shape serves every kernel; past the full-check limit each
    // result gets a Freivalds check instead (integers: always exact).
    const bool full = !is_integer(dtype) && double(s.m) * double(s.n) * double(s.k) <= kFullVerifyLimit;
    std::vector<double> reference;
    std::string shape_failure;
    try {
      ops = make_operands(s, dtype, dist, o);
      if (full) reference = reference_gemm(ops->p, nullptr);
    } catch (const std::exception& ex) {
      shape_failure = failure(ex);
    }

    std::vector<Row> shape_rows;
    for (const KernelEntry* e : kernels) {
      ++done;
      if (progress)
        std::fprintf(stderr, "\r[%zu/%zu] %-24s %-18s   ", done, total, e->name.c_str(),
                     s.text().c_str());
      Row base;  // what a row says whatever happens to the run
      base.kernel = e->name;
      base.rung = e->rung;
      base.reference = e->role == KernelRole::reference;
      base.accuracy = e->accuracy;
      base.tolerance_dtype = tolerance_dtype(dtype, e->accuracy);
      base.shape = s;
      Row r = base;
      if (!shape_failure.empty()) {
        r.skipped = r.failed = true;
        r.check.passed = false;
        r.note = shape_failure;
        shape_rows.push_back(r);
        continue;
      }
      GemmProblem& p = ops->p;
      try {
        // A large first shape: estimate the kernel's rate on smaller ones before running it.
        if (!best_rate.count(e) && s.flops() > kFirstProbeFlops && !e->rejects(p) &&
            device_cc >= e->min_compute_capability)
          if (const double rate = probe_rate(*e, s, dtype, dist, o, run_limit); rate > 0) best_rate[e] = rate;
        // Kernels that cannot or should not run this shape get a row that says why.
        if (backend == Backend::cuda && device_cc < e->min_compute_capability) {
          r.note = "needs compute capability " + std::to_string(e->min_compute_capability) +
                   ", the device has " + std::to_string(device_cc);
        } else if (auto why = e->rejects(p)) {
          r.note = *why;
        } else if (auto rate = best_rate.find(e); rate != best_rate.end()) {
          const double predicted = p.flops() / rate->second;
          if (predicted > run_limit)
            r.note = "predicted " + seconds_text(predicted) + " per run (--max-run-seconds " +
                     seconds_text(run_limit) + ")";
        }
        if (!r.note.empty()) {
          r.skipped = true;
          r.note = "skipped: " + r.note;
          shape_rows.push_back(r);
          continue;
        }
        // On the GPU every kernel is timed in runs alternating with the reference's, so both
        // see the same clocks: a GPU under sustained load slows down, and sequential timing
        // would favour whichever ran first (seen on the H200: cuBLAS itself lost 11% over one
        // sweep). Not on the CPU: there the two thread pools (OpenMP, OpenBLAS) would wake
        // each other's cores cold and distort both.
        const bool paired = backend == Backend::cuda && reference_entry && e != reference_entry &&
                            !reference_entry->rejects(p) &&
                            device_cc >= reference_entry->min_compute_capability;
        std::vector<double> seconds;
        if (paired) {
          const PairedTimes t = time_kernel_beside(*e, *reference_entry, p, timing);
          seconds = t.entry;
          r.paired_reference_median_s = median(t.reference);
        } else {
          seconds = time_kernel(*e, p, timing);
        }
        r.reps = int(seconds.size());
        r.median_s = median(seconds);
        r.min_s = *std::min_element(seconds.begin(), seconds.end());
        r.gflops = p.flops() / r.median_s / 1e9;
        if (r.min_s > 0) best_rate[e] = std::max(best_rate[e], p.flops() / r.min_s);
        if (full) {
          r.check.method = VerifyMode::full;
          r.check.tolerance = tolerance(r.tolerance_dtype, s.k);
          r.check.error = relative_frobenius_error(p.c_dtype(), p.c, s.m, s.n, p.ldc, reference);
          r.check.passed = r.check.error <= r.check.tolerance;
          if (!r.check.passed && !std::isnan(r.check.error))  // the per-entry check says where
            r.check = verify(p, nullptr, VerifyMode::full, o.seed, e->accuracy);
        } else {
          r.check = verify(p, nullptr, VerifyMode::automatic, o.seed, e->accuracy);
        }
      } catch (const std::exception& ex) {
        r = base;
        r.skipped = r.failed = true;
        r.check.passed = false;
        r.note = failure(ex);
      }
      shape_rows.push_back(r);
    }
    const auto ref = std::find_if(shape_rows.begin(), shape_rows.end(), [&](const Row& r) {
      return reference_entry && r.kernel == reference_entry->name && !r.skipped;
    });
    for (Row& r : shape_rows) {
      if (!r.skipped && r.paired_reference_median_s > 0)
        r.percent_of_reference = 100.0 * r.paired_reference_median_s / r.median_s;
      else if (!r.skipped && ref != shape_rows.end())
        r.percent_of_reference = 100.0 * r.gflops / ref->gflops;
      rows.push_back(r);
    }
  }
  if (progress) std::fprintf(stderr, "\r%80s\r", "");

  const nlohmann::json env = environment_json();
  const std::string ref_name = backend == Backend::cuda ? "cuBLAS" : "OpenBLAS";
  std::printf("gemmkit bench: %s backend, %s, %s\n", std::string(backend_name(backend)).c_str(),
              std::string(dtype_name(dtype)).c_str(),
              env.contains("gpu") && !env["gpu"].is_null()
                  ? env["gpu"]["name"].get<std::string>().c_str()
                  : (env["cpu"].get<std::string>() + ", " +
                     std::to_string(env["cpu_threads"].get<int>()) + " threads, OpenBLAS " +
                     env["openblas"]["threading"].get<std::string>()).c_str());
  std::printf("%-24s %-16s %10s %10s %10s %8s %9s %5s\n", "kernel", "MxNxK", "median ms",
              "min ms", "GFLOP/s", ("% " + ref_name).c_str(), "error", "reps");
  bool all_passed = true;
  for (const Row& r : rows) {
    if (r.skipped) {
      std::printf("%-24s %-16s %s\n", r.kernel.c_str(), r.shape.text().c_str(), r.note.c_str());
      continue;
    }
    std::string note;
    if (r.tolerance_dtype != dtype) note = "  (" + std::string(dtype_name(r.tolerance_dtype)) + " tolerance)";
    if (!r.check.passed) note += "  FAILED";
    std::printf("%-24s %-16s %10.3f %10.3f %10.2f %8s %9s %5d%s\n", r.kernel.c_str(),
                r.shape.text().c_str(), r.median_s * 1e3, r.min_s * 1e3, r.gflops,
                r.percent_of_reference < 0 ? "-" : (fixed(r.percent_of_reference, 1) + "%").c_str(),
                scientific(r.check.error).c_str(), r.reps, note.c_str());
    all_passed = all_passed && r.check.passed;
  }
  if (reference_entry)
    std::printf("%% %s: GFLOP/s as a percentage of %s at the same shape\n", ref_name.c_str(),
                reference_entry->name.c_str());
  std::printf("error: relative Frobenius error against the exact product (a double-double "
              "reference; past %.0e multiply-adds, --verify auto's check; integers exact)\n",
              kFullVerifyLimit);

  nlohmann::json results = {{"environment", env},
                            {"backend", backend_name(backend)},
                            {"dtype", dtype_name(dtype)},
                            {"warmup", o.warmup},
                            {"max_reps", o.reps},
                            {"max_seconds", o.max_seconds},
                            {"max_run_seconds", o.max_run_seconds},
                            {"l2_flushed", backend == Backend::cuda},
                            {"trans_a", o.trans_a},
                            {"trans_b", o.trans_b},
                            {"timing", "each kernel's runs alternate with the reference's"},
                            {"percent_of", reference_entry ? nlohmann::json(reference_entry->name)
                                                           : nlohmann::json(nullptr)},
                            {"results", nlohmann::json::array()}};
  for (const Row& r : rows) results["results"].push_back(to_json(r, dtype, backend));
  if (!o.json_path.empty()) write_json(o.json_path, results);
  if (!o.csv_path.empty()) write_csv_results(o.csv_path, rows, dtype, backend);
  if (!o.plot_path.empty()) plot(o.plot_path, results);
  if (first_failure) {
    const auto failed = std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.failed; });
    throw PartialFailure(first_failure->category(),
                         std::to_string(failed) + " of " + std::to_string(rows.size()) +
                             " runs failed (marked failed above; the others were printed and "
                             "written); the first: " + first_failure->what());
  }
  if (!all_passed)
    throw PartialFailure(ErrorCategory::numeric,
                         "a kernel's result failed verification (marked FAILED above; the "
                         "results were written)");
}

}  // namespace

void add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time every kernel beside the reference library (OpenBLAS or cuBLAS) in one run");
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernels", o->kernels,
                  "all, or a comma-separated list of kernel names (the reference libraries "
                  "always run too)")
      ->capture_default_str();
  cmd->add_option("--sizes", o->sizes,
                  std::string("Square sizes N (N x N x N), comma-separated (default ") +
                      kDefaultCpuSizes + " on the CPU, " + kDefaultCudaSizes +
                      " on a GPU; 16384 only when listed)");
  cmd->add_option("--shapes", o->shapes,
                  "Shapes as MxNxK, comma-separated, e.g. 4000x4000x4000,8192x1024x8192,"
                  "1024x8192x256 (C is M x N, K the reduction length); the plot shows the "
                  "square ones, JSON and CSV all");
  cmd->add_option("--m", o->m, "Rows of C (with --n and --k: one shape)");
  cmd->add_option("--n", o->n, "Columns of C");
  cmd->add_option("--k", o->k, "Reduction length");
  cmd->add_option("--dtype", o->dtype,
                  "f32, f64, i32, i64, or bf16, f16, tf32 (tensor-core kernels)")
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--reps", o->reps, "Timed runs (the median is reported)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-seconds", o->max_seconds,
                  "Stop timing a kernel at a shape after this many seconds (at least one run)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-run-seconds", o->max_run_seconds,
                  "Skip a kernel at a shape when its best rate at a smaller shape of this run "
                  "predicts one run takes longer than this (shapes run smallest first; a large "
                  "first shape is estimated from probe runs on smaller ones)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->capture_default_str()->check(non_negative_integer());
  cmd->add_flag("--transpose-a", o->trans_a, "Store A transposed (k x m) in every shape");
  cmd->add_flag("--transpose-b", o->trans_b, "Store B transposed (n x k) in every shape");
  cmd->add_option("--json", o->json_path, "Write results (with GPU, date, commit) as JSON");
  cmd->add_option("--csv", o->csv_path, "Write results as CSV");
  cmd->add_option("--plot", o->plot_path,
                  "Plot GFLOP/s against N for the square shapes to a PNG (python3-matplotlib)");
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace gemmkit::cli

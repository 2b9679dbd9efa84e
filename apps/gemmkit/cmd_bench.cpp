// gemmkit bench: every kernel of a backend beside the reference library, in one run.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::cli {
namespace {

struct BenchOptions {
  std::string backend = "auto", kernels = "all", sizes, dtype = "f32";
  std::int64_t m = 0, n = 0, k = 0;
  int warmup = 1, reps = 5;
  double max_seconds = 3.0;
  std::uint64_t seed = 1;
  std::string json_path, csv_path, plot_path;
};

struct Shape {
  std::int64_t m, n, k;
};

struct Row {
  std::string kernel;
  bool reference = false;
  Shape shape{};
  int reps = 0;
  double median_s = 0, min_s = 0, gflops = 0;
  double percent_of_reference = -1;  // -1: no reference for this dtype
  VerifyResult check;
};

std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1)
      fail(ErrorCategory::usage, "--sizes: '" + item + "' is not a positive integer");
    sizes.push_back(v);
  }
  if (sizes.empty()) fail(ErrorCategory::usage, "--sizes is empty");
  return sizes;
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
    for (const KernelEntry* e : registry.of_backend(backend))
      if (e->role == KernelRole::reference && e->supports(dtype) &&
          std::find(chosen.begin(), chosen.end(), e) == chosen.end())
        chosen.insert(chosen.begin(), e);
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
  return {{"kernel", r.kernel}, {"backend", backend_name(backend)},
          {"reference", r.reference}, {"dtype", dtype_name(dtype)},
          {"m", r.shape.m}, {"n", r.shape.n}, {"k", r.shape.k}, {"reps", r.reps},
          {"median_ms", r.median_s * 1e3}, {"min_ms", r.min_s * 1e3}, {"gflops", r.gflops},
          {"percent_of_reference", r.percent_of_reference < 0 ? nlohmann::json(nullptr)
                                                              : nlohmann::json(r.percent_of_reference)},
          {"error", r.check.error}, {"error_method", verify_mode_name(r.check.method)},
          {"tolerance", r.check.tolerance}, {"passed", r.check.passed}};
}

void write_csv_results(const std::string& path, const std::vector<Row>& rows, DType dtype,
                       Backend backend) {
  std::string text =
      "kernel,backend,dtype,m,n,k,reps,median_ms,min_ms,gflops,percent_of_reference,error,"
      "error_method,passed\n";
  for (const Row& r : rows)
    text += r.kernel + "," + std::string(backend_name(backend)) + "," +
            std::string(dtype_name(dtype)) + "," + std::to_string(r.shape.m) + "," +
            std::to_string(r.shape.n) + "," + std::to_string(r.shape.k) + "," +
            std::to_string(r.reps) + "," + fixed(r.median_s * 1e3, 4) + "," +
            fixed(r.min_s * 1e3, 4) + "," + fixed(r.gflops, 3) + "," +
            (r.percent_of_reference < 0 ? "" : fixed(r.percent_of_reference, 1)) + "," +
            scientific(r.check.error) + "," + std::string(verify_mode_name(r.check.method)) +
            "," + (r.check.passed ? "true" : "false") + "\n";
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
  // The source tree's script, unless the environment names another (a relocated binary).
  const char* override_script = std::getenv("GEMMKIT_PLOT_SCRIPT");
  const std::string script = override_script ? override_script : GEMMKIT_PLOT_SCRIPT;
  if (!std::filesystem::exists(script))
    fail(ErrorCategory::usage, "plot script " + script + " not found (set GEMMKIT_PLOT_SCRIPT)");
  std::string python;
  for (const char* candidate : {GEMMKIT_PYTHON, "python3"})
    if (run_program({candidate, "-c", "import matplotlib"}, true) == 0) {
      python = candidate;
      break;
    }
  if (python.empty())
    fail(ErrorCategory::device,  // not the user's input: the plotting environment is missing
         "cannot plot " + png_path + ": no python3 with matplotlib (scripts/install-deps.sh "
         "installs python3-matplotlib); the other results were written");

  char json_path[] = "/tmp/gemmkit-bench-XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) fail(ErrorCategory::input, "cannot create a temporary file for the plot");
  const std::string text = results.dump();
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  const int status = written ? run_program({python, script, json_path, "-o", png_path}, false) : -1;
  std::remove(json_path);
  if (status != 0)
    fail(ErrorCategory::device, "plotting " + png_path + " failed; the other results were written");
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
  if (backend == Backend::cuda && !cuda_device_available())
    fail(ErrorCategory::device, "--backend cuda: " + query_devices().message);
  for (const std::string& path : {o.json_path, o.csv_path, o.plot_path})
    if (!path.empty() && std::filesystem::path(path).has_parent_path() &&
        !std::filesystem::is_directory(std::filesystem::path(path).parent_path()))
      fail(ErrorCategory::usage, "output folder of '" + path + "' does not exist");

  std::vector<Shape> shapes;
  if (o.m || o.n || o.k) {
    if (!o.sizes.empty()) fail(ErrorCategory::usage, "give either --sizes or --m/--n/--k, not both");
    if (o.m < 1 || o.n < 1 || o.k < 1)
      fail(ErrorCategory::usage, "--m, --n and --k must all be given and positive");
    shapes.push_back({o.m, o.n, o.k});
  } else {
    const std::string sizes =
        !o.sizes.empty() ? o.sizes : backend == Backend::cuda ? "1024,2048,4096" : "256,512,1024";
    for (std::int64_t s : parse_sizes(sizes)) shapes.push_back({s, s, s});
  }
  const auto kernels = select_kernels(o.kernels, backend, dtype);
  const TimingOptions timing{o.warmup, o.reps, o.max_seconds};
  const Distribution dist = Distribution::parse(is_integer(dtype) ? "ints:-9:9" : "uniform");
  const bool progress = progress_wanted();

  std::vector<Row> rows;
  const std::size_t total = shapes.size() * kernels.size();
  std::size_t done = 0;
  for (const Shape& s : shapes) {
    const AnyMatrix a = random_matrix(s.m, s.k, dtype, dist, o.seed);
    const AnyMatrix b = random_matrix(s.k, s.n, dtype, dist, o.seed + 1);
    AnyMatrix c = random_matrix(s.m, s.n, dtype, dist, o.seed + 2);  // beta = 0: overwritten
    GemmProblem p = std::visit(
        [&](auto& cm) -> GemmProblem {
          using T = typename std::decay_t<decltype(cm)>::value_type;
          return make_problem<T>(std::get<Matrix<T>>(a).view(), false,
                                 std::get<Matrix<T>>(b).view(), false, cm.view());
        },
        c);
    // One double reference per shape serves every kernel; past the full-check limit each
    // result gets a Freivalds check instead (integers: always exact).
    const bool full = !is_integer(dtype) && double(s.m) * double(s.n) * double(s.k) <= kFullVerifyLimit;
    std::vector<double> reference;
    if (full) reference = reference_gemm(p, nullptr);

    std::vector<Row> shape_rows;
    for (const KernelEntry* e : kernels) {
      ++done;
      if (progress)
        std::fprintf(stderr, "\r[%zu/%zu] %-24s %lldx%lldx%lld   ", done, total, e->name.c_str(),
                     (long long)s.m, (long long)s.n, (long long)s.k);
      if (auto why = e->rejects(p)) {
        std::fprintf(stderr, "%sskipping %s at %s: %s\n", progress ? "\n" : "", e->name.c_str(),
                     p.shape_string().c_str(), why->c_str());
        continue;
      }
      std::vector<double> seconds = time_kernel(*e, p, timing);
      std::sort(seconds.begin(), seconds.end());
      Row r;
      r.kernel = e->name;
      r.reference = e->role == KernelRole::reference;
      r.shape = s;
      r.reps = int(seconds.size());
      r.median_s = seconds[seconds.size() / 2];
      if (seconds.size() % 2 == 0) r.median_s = 0.5 * (seconds[seconds.size() / 2 - 1] + r.median_s);
      r.min_s = seconds.front();
      r.gflops = p.flops() / r.median_s / 1e9;
      if (full) {
        r.check.method = VerifyMode::full;
        r.check.tolerance = tolerance(dtype, s.k);
        r.check.error = relative_frobenius_error(dtype, p.c, s.m, s.n, p.ldc, reference);
        r.check.passed = r.check.error <= r.check.tolerance;
      } else {
        r.check = verify(p, nullptr, VerifyMode::automatic, o.seed);
      }
      shape_rows.push_back(r);
    }
    const auto ref = std::find_if(shape_rows.begin(), shape_rows.end(),
                                  [](const Row& r) { return r.reference; });
    for (Row& r : shape_rows) {
      if (ref != shape_rows.end()) r.percent_of_reference = 100.0 * r.gflops / ref->gflops;
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
                     std::to_string(env["cpu_threads"].get<int>()) + " threads").c_str());
  std::printf("%-22s %-16s %10s %10s %10s %8s %9s %5s\n", "kernel", "MxNxK", "median ms",
              "min ms", "GFLOP/s", ("% " + ref_name).c_str(), "error", "reps");
  bool all_passed = true;
  for (const Row& r : rows) {
    const std::string shape = std::to_string(r.shape.m) + "x" + std::to_string(r.shape.n) + "x" +
                              std::to_string(r.shape.k);
    std::printf("%-22s %-16s %10.3f %10.3f %10.2f %8s %9s %5d%s\n", r.kernel.c_str(),
                shape.c_str(), r.median_s * 1e3, r.min_s * 1e3, r.gflops,
                r.percent_of_reference < 0 ? "-" : (fixed(r.percent_of_reference, 1) + "%").c_str(),
                scientific(r.check.error).c_str(), r.reps, r.check.passed ? "" : "  FAILED");
    all_passed = all_passed && r.check.passed;
  }
  std::printf("error: relative Frobenius error against a double reference (freivalds residual "
              "past %.0e multiply-adds; integers exact)\n", kFullVerifyLimit);

  nlohmann::json results = {{"environment", env},
                            {"backend", backend_name(backend)},
                            {"dtype", dtype_name(dtype)},
                            {"warmup", o.warmup},
                            {"max_reps", o.reps},
                            {"results", nlohmann::json::array()}};
  for (const Row& r : rows) results["results"].push_back(to_json(r, dtype, backend));
  if (!o.json_path.empty()) write_json(o.json_path, results);
  if (!o.csv_path.empty()) write_csv_results(o.csv_path, rows, dtype, backend);
  if (!o.plot_path.empty()) plot(o.plot_path, results);
  if (!all_passed)
    fail(ErrorCategory::numeric, "a kernel's result failed verification (marked FAILED above)");
}

}  // namespace

void add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time every kernel beside the reference library (OpenBLAS or cuBLAS) in one run");
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernels", o->kernels, "all, or a comma-separated list of kernel names")
      ->capture_default_str();
  cmd->add_option("--sizes", o->sizes,
                  "Square sizes, comma-separated (default 256,512,1024 on the CPU, "
                  "1024,2048,4096 on a GPU)");
  cmd->add_option("--m", o->m, "Rows of C (with --n and --k: one non-square shape)");
  cmd->add_option("--n", o->n, "Columns of C");
  cmd->add_option("--k", o->k, "Reduction length");
  cmd->add_option("--dtype", o->dtype, "f32, f64, i32 or i64")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--reps", o->reps, "Timed runs (the median is reported)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--max-seconds", o->max_seconds,
                  "Stop timing a kernel after this many seconds (at least one run)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--json", o->json_path, "Write results (with GPU, date, commit) as JSON");
  cmd->add_option("--csv", o->csv_path, "Write results as CSV");
  cmd->add_option("--plot", o->plot_path, "Plot GFLOP/s against size to a PNG (python3-matplotlib)");
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace gemmkit::cli

// gemmkit bench: every kernel of a backend beside the reference library, in one run.
#include <fcntl.h>
#include <omp.h>
#include <sched.h>
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
#include <optional>
#include <sstream>

#include "cli.hpp"
#include "gemmkit/bench.hpp"
#include "share_path.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#ifdef GEMMKIT_HAVE_MPI
#include "gemmkit/distributed.hpp"
#endif

namespace gemmkit::cli {
namespace {

// The command line; gemmkit::BenchOptions is what the engine takes from it.
struct BenchArgs {
  std::string backend = "auto", kernels = "all", sizes, shapes, suite, dtype = "f32";
  std::int64_t m = 0, n = 0, k = 0;
  int warmup = 1, reps = 5;
  double max_seconds = 3.0;
  double max_run_seconds = 2.0;
  std::uint64_t seed = 1;
  bool trans_a = false, trans_b = false;  // every shape with A and/or B stored transposed
  std::string layout = "row";
  std::int64_t batch = 1;
  std::string json_path, csv_path, plot_path;
  bool distributed = false;  // one process of an MPI job timing SUMMA
  std::string grid;
  std::int64_t block = 256;
};

using Shape = BenchShape;

// Default square sizes when neither --sizes, --shapes nor --m/--n/--k is given.
constexpr const char* kDefaultCpuSizes = "256,512,1024";
constexpr const char* kDefaultCudaSizes = "256,512,1024,2048,4096,8192";

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

nlohmann::json to_json(const BenchRow& r, Backend backend) {
  const auto number_or_null = [&](double x) {
    return r.skipped ? nlohmann::json(nullptr) : nlohmann::json(x);
  };
  const GemmBenchFacts& g = r.gemm.value();
  const TimingSpread& t = r.timing;
  return {{"kernel", r.kernel}, {"backend", backend_name(backend)}, {"rung", r.rung},
          {"reference", r.reference}, {"dtype", dtype_name(r.dtype)},
          {"accuracy", g.accuracy ? nlohmann::json(dtype_name(*g.accuracy)) : nlohmann::json(nullptr)},
          {"m", g.shape.m}, {"n", g.shape.n}, {"k", g.shape.k}, {"batch", g.batch},
          {"trans_a", g.trans_a}, {"trans_b", g.trans_b},
          {"layout", std::string(layout_name(g.layout))},
          {"skipped", r.skipped}, {"failed", r.failed}, {"note", r.note}, {"reps", t.reps},
          {"median_ms", number_or_null(t.median_s * 1e3)}, {"min_ms", number_or_null(t.min_s * 1e3)},
          {"max_ms", number_or_null(t.max_s * 1e3)},
          {"noisy", !r.skipped && t.noisy},
          {"timing", r.skipped ? nlohmann::json(nullptr) : timing_json(t)},
          {"gflops", number_or_null(r.rate)},
          {"percent_of_reference", r.percent_of_reference < 0 ? nlohmann::json(nullptr)
                                                              : nlohmann::json(r.percent_of_reference)},
          {"percent_of_copy", r.percent_of_copy < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.percent_of_copy)},
          {"paired_reference_median_ms", r.reference_median_s > 0 ? nlohmann::json(r.reference_median_s * 1e3)
                                                                  : nlohmann::json(nullptr)},
          {"error", number_or_null(r.check.error)}, {"error_method", verify_mode_name(r.check.method)},
          {"tolerance", number_or_null(r.check.tolerance)},
          {"tolerance_dtype", dtype_name(g.tolerance_dtype)}, {"passed", r.check.passed}};
}

void write_csv_results(const std::string& path, const std::vector<BenchRow>& rows, Backend backend) {
  std::string text =
      "kernel,backend,dtype,m,n,k,batch,reps,median_ms,min_ms,gflops,percent_of_reference,error,"
      "error_method,passed,tolerance_dtype,skipped,note,trans_a,trans_b,layout,max_ms,spread,noisy\n";
  for (const BenchRow& r : rows) {
    const auto value = [&](const std::string& x) { return r.skipped ? std::string() : x; };
    const GemmBenchFacts& g = r.gemm.value();
    const TimingSpread& t = r.timing;
    text += r.kernel + "," + std::string(backend_name(backend)) + "," +
            std::string(dtype_name(r.dtype)) + "," + std::to_string(g.shape.m) + "," +
            std::to_string(g.shape.n) + "," + std::to_string(g.shape.k) + "," +
            std::to_string(g.batch) + "," + std::to_string(t.reps) + "," + value(fixed(t.median_s * 1e3, 4)) + "," +
            value(fixed(t.min_s * 1e3, 4)) + "," + value(fixed(r.rate, 3)) + "," +
            (r.percent_of_reference < 0 ? "" : fixed(r.percent_of_reference, 1)) + "," +
            value(scientific(r.check.error)) + "," +
            std::string(verify_mode_name(r.check.method)) + "," +
            (r.check.passed ? "true" : "false") + "," +
            std::string(dtype_name(g.tolerance_dtype)) + "," + (r.skipped ? "true" : "false") +
            "," + io::csv_field(r.note) + "," + (g.trans_a ? "true" : "false") + "," +
            (g.trans_b ? "true" : "false") + "," + std::string(layout_name(g.layout)) + "," +
            value(fixed(t.max_s * 1e3, 4)) + "," + value(fixed(t.spread, 4)) + "," +
            (!r.skipped && t.noisy ? "true" : "false") + "\n";
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

// What draws the plot: the script and a Python with matplotlib (the configured one, Debian's,
// where python3-matplotlib lives, or else the first python3 on PATH that has it). Found
// before the benchmark runs, so that a missing one costs no run.
struct Plotter {
  std::string script, python;
};

Plotter find_plotter(const std::string& png_path) {
  Plotter p{plot_script_path(), ""};
  for (const char* candidate : {GEMMKIT_PYTHON, "python3"})
    if (run_program({candidate, "-c", "import matplotlib"}, true) == 0) {
      p.python = candidate;
      break;
    }
  if (p.python.empty())
    fail(ErrorCategory::device,  // not the user's input: the plotting environment is missing
         "cannot plot " + quoted_path(png_path) + ": no python3 with matplotlib (scripts/install-deps.sh "
         "installs python3-matplotlib); nothing was run");
  return p;
}

// Runs the plot script on the JSON results.
void plot(const Plotter& plotter, const std::string& png_path, const nlohmann::json& results) {
  const std::string& script = plotter.script;
  const std::string& python = plotter.python;

  char json_path[] = "/tmp/gemmkit-bench-XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) fail(ErrorCategory::input, "cannot create a temporary file for the plot");
  const std::string text = results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

nlohmann::json shape_json(const SuiteShape& s) {
  return {{"m", s.shape.m}, {"n", s.shape.n}, {"k", s.shape.k}, {"trans_a", s.trans_a},
          {"trans_b", s.trans_b}, {"layout", std::string(layout_name(s.layout))}};
}

nlohmann::json suite_json(const ShapeSuite& suite, const std::vector<SuiteKernelSummary>& summary) {
  nlohmann::json shapes = nlohmann::json::array(), kernels = nlohmann::json::array();
  for (const SuiteShape& s : suite.shapes) {
    nlohmann::json j = shape_json(s);
    j["source"] = s.source;
    shapes.push_back(j);
  }
  for (const SuiteKernelSummary& k : summary) {
    const bool any = k.measured > 0;
    kernels.push_back({{"kernel", k.kernel}, {"reference", k.reference}, {"measured", k.measured},
                       {"missing", k.missing}, {"failed", k.failed},
                       {"geomean_percent", any ? nlohmann::json(k.geomean_percent) : nlohmann::json(nullptr)},
                       {"min_percent", any ? nlohmann::json(k.min_percent) : nlohmann::json(nullptr)},
                       {"min_shape", any ? shape_json(k.min_shape) : nlohmann::json(nullptr)}});
  }
  return {{"name", suite.name}, {"path", suite.path}, {"description", suite.description},
          {"shapes", shapes}, {"summary", kernels}};
}

// --distributed: every process of `mpirun -np P gemmkit bench --distributed ...` runs this.
// Each shape is timed by dist::bench_summa on random operands made where they live; rank 0
// prints a line per shape and writes the JSON. An error on any rank is reported once by rank 0.
void run_bench_distributed([[maybe_unused]] const BenchArgs& o) {  // unused without MPI
  run_as_mpi_process([&] {
#ifdef GEMMKIT_HAVE_MPI
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // The same checks on every rank (nothing is read): agreed, reported once.
    std::vector<Shape> shapes;
    DType dtype = DType::f64;
    std::optional<dist::GridShape> shape;
    bool on_gpu = false;
    dist::SummaBenchOptions options;
    dist::collective(MPI_COMM_WORLD, [&] {
      const auto parsed = parse_dtype(o.dtype);
      if (!parsed) fail(ErrorCategory::usage, "unknown dtype '" + o.dtype + "'");
      dtype = *parsed;
      // auto: the CPU backend (the CUDA one is asked for by name, as multiply --distributed does).
      on_gpu = parse_backend(o.backend) == Backend::cuda;
      if (on_gpu && !dist::nccl_available())
        fail(ErrorCategory::usage, "--backend cuda: the distributed GPU path is not in this build (it needs "
                                   "CUDA and NCCL; docs/distributed.md)");
      if (on_gpu ? dtype != DType::f64 && dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16
                 : dtype != DType::f64 && dtype != DType::f32 && dtype != DType::i32 && dtype != DType::i64)
        fail(ErrorCategory::usage, std::string("--distributed times ") +
                                       (on_gpu ? "f64, f32, f16 or bf16 with --backend cuda" : "f64, f32, i32 or i64") +
                                       ", not " + o.dtype);
      if (on_gpu) options.summa.backend = Backend::cuda;
      const auto refuse = [](const std::string& what) {
        fail(ErrorCategory::usage, what + " is not offered with --distributed (--sizes or --shapes, --dtype, "
                                          "--grid, --block, --kernels with one local kernel, --warmup, --reps, "
                                          "--max-seconds, --seed, --json)");
      };
      if (!o.suite.empty() || o.m || o.n || o.k) refuse("--suite and --m/--n/--k");
      if (o.trans_a || o.trans_b || o.layout != "row" || o.batch != 1)
        refuse("--transpose-a/--transpose-b/--layout/--batch");
      if (!o.csv_path.empty() || !o.plot_path.empty()) refuse("--csv/--plot");
      if (o.kernels.find(',') != std::string::npos) refuse("more than one kernel in --kernels");
      if (!o.sizes.empty() && !o.shapes.empty()) fail(ErrorCategory::usage, "give one of --sizes or --shapes");
      if (!o.shapes.empty()) shapes = parse_shapes(o.shapes);
      else
        for (std::int64_t s : parse_sizes(o.sizes.empty() ? kDefaultCpuSizes : o.sizes)) shapes.push_back({s, s, s});
      if (o.block < 1) fail(ErrorCategory::usage, "--block must be at least 1, not " + std::to_string(o.block));
      if (!o.grid.empty()) shape = dist::parse_grid(o.grid);
      if (rank == 0) check_outputs({{"--json", o.json_path}});
      options.warmup = o.warmup;
      options.reps = o.reps;
      options.max_seconds = o.max_seconds;
      options.seed = o.seed;
      options.summa.kernel = o.kernels == "all" ? "auto" : o.kernels;
    });
    const dist::ProcessGrid grid(MPI_COMM_WORLD, shape);
    const std::string grid_text = dist::grid_name(grid.shape());
    // mpirun binds each rank to one core by default (np <= 2), where all of a rank's OpenMP
    // threads would then share that core: say so before anyone publishes such a time.
    if (!on_gpu) {
      cpu_set_t set;
      CPU_ZERO(&set);
      const int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : omp_get_max_threads();
      int short_of = omp_get_max_threads() > cores ? rank : size;  // the first rank short of cores
      MPI_Allreduce(MPI_IN_PLACE, &short_of, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (short_of < size) {  // its figures, for rank 0 to say
        int figures[2] = {cores, omp_get_max_threads()};
        MPI_Bcast(figures, 2, MPI_INT, short_of, MPI_COMM_WORLD);
        if (rank == 0)
          std::fprintf(stderr, "gemmkit: warning: rank %d may run on %d core%s but has %d OpenMP threads: the "
                               "times will be too slow (mpirun binds ranks to cores: add --bind-to none, or "
                               "--map-by slot:pe=%d)\n",
                       short_of, figures[0], figures[0] == 1 ? "" : "s", figures[1], figures[1]);
      }
    }
    const bool progress = rank == 0 && progress_wanted();
    nlohmann::json rows = nlohmann::json::array();
    const char* backend = on_gpu ? "cuda" : "cpu";
    const bool reference = on_gpu && dist::cublasmp_available();
    // The header with the first result, so that a failing first shape prints nothing.
    const auto header = [&] {
      std::printf("SUMMA on %d processes (grid %s, blocks of %lld), %s, %s backend%s\n%-22s %10s %10s %10s %12s %5s %7s%s\n",
                  size, grid_text.c_str(), static_cast<long long>(o.block), o.dtype.c_str(), on_gpu ? "CUDA" : "CPU",
                  on_gpu && !reference ? " (no cuBLASMp in this build to compare)" : "", "MxNxK", "median ms",
                  "min ms", "GFLOP/s", "per process", "reps", "spread", reference ? "  % of cuBLASMp" : "");
    };
    for (const Shape& s : shapes) {
      if (progress) std::fprintf(stderr, "\r%-40s", ("timing " + s.text() + "...").c_str());
      const BenchReport report = dist::bench_summa(grid, dtype, s.m, s.n, s.k, o.block, options);
      if (progress) std::fprintf(stderr, "\r%40s\r", "");
      if (rank != 0) continue;
      if (rows.empty()) header();
      const BenchRow& r = report.rows.front();
      const TimingSpread& timing = r.timing;
      const DistributedBenchFacts& d = r.distributed.value();
      const double percent = r.percent_of_reference;
      std::printf("%-22s %10.3f %10.3f %10.2f %12.2f %5d %7s%s  (%s)\n", r.size.c_str(), timing.median_s * 1e3,
                  timing.min_s * 1e3, r.rate, r.rate / d.processes, timing.reps, spread_text(timing).c_str(),
                  percent < 0 ? "" : ("  " + fixed(percent, 1) + "%").c_str(), d.local_kernel.c_str());
      nlohmann::json row = {{"kernel", r.kernel}, {"backend", backend}, {"dtype", dtype_name(r.dtype)},
                            {"m", s.m}, {"n", s.n}, {"k", s.k}, {"reps", timing.reps},
                            {"seconds", r.seconds}, {"median_ms", timing.median_s * 1e3}, {"min_ms", timing.min_s * 1e3},
                            {"max_ms", timing.max_s * 1e3}, {"noisy", timing.noisy}, {"timing", timing_json(timing)},
                            {"gflops", r.rate}, {"gflops_per_process", r.rate / d.processes},
                            {"distributed", {{"processes", d.processes}, {"grid", d.grid}, {"block", d.block},
                                             {"local_kernel", d.local_kernel}}}};
      // cuBLASMp beside it (CUDA): its times, and SUMMA's speed as a percentage of it.
      const BenchRow* mp = report.rows.size() > 1 ? &report.rows[1] : nullptr;
      row["reference"] = !mp ? nlohmann::json(nullptr)
                             : nlohmann::json{{"kernel", mp->kernel},
                                              {"seconds", mp->seconds},
                                              {"median_ms", mp->timing.median_s * 1e3},
                                              {"percent_of_reference", percent}};
      rows.push_back(row);
    }
    if (rank == 0 && !rows.empty()) std::printf("%s\n", noisy_legend().c_str());
    dist::collective(MPI_COMM_WORLD, [&] {
      if (rank != 0 || o.json_path.empty()) return;
      write_json(o.json_path, json_document("bench", {{"backend", backend}, {"dtype", dtype_name(dtype)},
                               {"warmup", o.warmup}, {"max_reps", o.reps}, {"max_seconds", o.max_seconds},
                               {"timing", "each run between two barriers, the slowest process's time"},
                               {"rows", rows}}));
    });
#endif
  });
}

void run_bench(const BenchArgs& o) {
  if (o.distributed) return run_bench_distributed(o);
  const auto dtype_parsed = parse_dtype(o.dtype);
  if (!dtype_parsed) fail(ErrorCategory::usage, "unknown dtype '" + o.dtype + "'");
  const DType dtype = *dtype_parsed;
  Backend backend = Backend::cpu;
  if (auto b = parse_backend(o.backend)) {
    backend = *b;
  } else if (cuda_device_available() && !gemm_registry().of_backend(Backend::cuda).empty()) {
    backend = Backend::cuda;
  }
  if (backend == Backend::cuda) require_cuda_device();
  if (o.plot_path == "-")
    fail(ErrorCategory::usage, "--plot - : a PNG does not go to standard output; name a file");
  // A suite named by its path is an input (find_suite's rule).
  const bool suite_file = o.suite.find('/') != std::string::npos || o.suite.ends_with(".txt");
  check_outputs({{"--json", o.json_path}, {"--csv", o.csv_path}, {"--plot", o.plot_path}},
                {{"--suite", suite_file ? o.suite : ""}});

  std::vector<Shape> shapes;
  std::optional<ShapeSuite> suite;
  const bool mnk = o.m || o.n || o.k;
  if (int(mnk) + int(!o.sizes.empty()) + int(!o.shapes.empty()) + int(!o.suite.empty()) > 1)
    fail(ErrorCategory::usage, "give one of --suite, --sizes, --shapes or --m/--n/--k");
  if (!o.suite.empty()) {
    if (o.trans_a || o.trans_b || o.layout != "row")
      fail(ErrorCategory::usage, "--suite takes transposes and layout from its file's lines; "
                                 "drop --transpose-a/--transpose-b/--layout");
    suite = find_suite(o.suite);
    for (const SuiteShape& s : suite->shapes) shapes.push_back(s.shape);
  } else if (mnk) {
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
  if (!o.plot_path.empty() &&
      std::none_of(shapes.begin(), shapes.end(),
                   [](const Shape& s) { return s.m == s.n && s.n == s.k; }))
    fail(ErrorCategory::usage, "--plot draws square shapes (GFLOP/s against N) and none was "
                               "given; add one, e.g. --shapes 2048x2048x2048,...");
  const std::optional<Layout> layout = parse_layout(o.layout);
  if (!layout) fail(ErrorCategory::usage, "--layout: '" + o.layout + "' is not row or col");
  if (o.batch < 1) fail(ErrorCategory::usage, "--batch must be positive");
  const std::optional<Plotter> plotter =
      o.plot_path.empty() ? std::nullopt : std::optional<Plotter>(find_plotter(o.plot_path));

  BenchOptions engine;
  if (o.kernels != "all") {
    std::stringstream in(o.kernels);
    for (std::string name; std::getline(in, name, ',');) engine.kernels.push_back(name);
  }
  engine.shapes = shapes;
  engine.dtype = dtype;
  engine.trans_a = o.trans_a;
  engine.trans_b = o.trans_b;
  engine.layout = *layout;
  engine.batch = o.batch;
  engine.warmup = o.warmup;
  engine.reps = o.reps;
  engine.max_seconds = o.max_seconds;
  engine.max_run_seconds = o.max_run_seconds;
  engine.seed = o.seed;
  // The engine takes transposes and layout per run: a suite runs once per combination of
  // them, in the order the file first gives each.
  std::vector<BenchOptions> runs;
  if (suite) {
    for (const SuiteShape& s : suite->shapes) {
      auto run = std::find_if(runs.begin(), runs.end(), [&](const BenchOptions& r) {
        return r.trans_a == s.trans_a && r.trans_b == s.trans_b && r.layout == s.layout;
      });
      if (run == runs.end()) {
        runs.push_back(engine);
        run = runs.end() - 1;
        run->shapes.clear();
        run->trans_a = s.trans_a, run->trans_b = s.trans_b, run->layout = s.layout;
      }
      run->shapes.push_back(s.shape);
    }
  } else {
    runs.push_back(engine);
  }
  Context ctx(backend);
  const bool progress = progress_wanted();
  std::vector<BenchReport> reports;
  for (const BenchOptions& run : runs)
    reports.push_back(run_gemm_bench(ctx, run, [&](const BenchProgress& at) {
      if (progress)
        std::fprintf(stderr, "\r[%zu/%zu] %-24s %-18s   ", at.done, at.total, at.kernel.c_str(),
                     (o.batch > 1 ? std::to_string(o.batch) + " x " + at.shape.text() : at.shape.text()).c_str());
    }));
  if (progress) std::fprintf(stderr, "\r%80s\r", "");
  // The runs together: every row, the first failure, one reference.
  BenchReport report = reports.front();
  for (std::size_t i = 1; i < reports.size(); ++i) {
    report.rows.insert(report.rows.end(), reports[i].rows.begin(), reports[i].rows.end());
    if (!report.first_failure) report.first_failure = reports[i].first_failure;
  }
  const std::vector<BenchRow>& rows = report.rows;

  const RunMeta meta = run_meta(&ctx);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (suite) {
      SuiteShape group;
      group.trans_a = runs[i].trans_a, group.trans_b = runs[i].trans_b, group.layout = runs[i].layout;
      const std::string flags = group.text().substr(group.shape.text().size());
      std::printf("%ssuite %s: %zu shape%s%s\n", i ? "\n" : "", suite->name.c_str(), runs[i].shapes.size(),
                  runs[i].shapes.size() == 1 ? "" : "s",
                  flags.empty() ? "" : (", stored" + flags).c_str());
    }
    std::fputs(bench_table(reports[i], meta).c_str(), stdout);
  }
  const std::vector<SuiteKernelSummary> summary =
      suite ? summarize_suite(rows) : std::vector<SuiteKernelSummary>{};
  if (suite)
    std::printf("\n%s", suite_summary_table(suite->name, dtype, report.percent_of, summary).c_str());

  nlohmann::json results = {{"backend", backend_name(backend)},
                            {"dtype", dtype_name(dtype)},
                            {"warmup", o.warmup},
                            {"max_reps", o.reps},
                            {"max_seconds", o.max_seconds},
                            {"max_run_seconds", o.max_run_seconds},
                            {"l2_flushed", report.l2_flushed},
                            {"trans_a", o.trans_a},
                            {"trans_b", o.trans_b},
                            {"layout", o.layout},
                            {"batch", o.batch},
                            {"timing", report.paired ? "each kernel's runs alternate with the reference's"
                                                     : "each kernel's runs one after another"},
                            {"percent_of", report.percent_of.empty() ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(report.percent_of)},
                            {"suite", suite ? suite_json(*suite, summary) : nlohmann::json(nullptr)},
                            {"rows", nlohmann::json::array()}};
  for (const BenchRow& r : rows) results["rows"].push_back(to_json(r, backend));
  results = json_document("bench", std::move(results), &meta);
  if (!o.json_path.empty()) write_json(o.json_path, results);
  if (!o.csv_path.empty()) write_csv_results(o.csv_path, rows, backend);
  if (plotter) plot(*plotter, o.plot_path, results);
  if (report.first_failure)
    throw PartialFailure(report.first_failure->category(),
                         std::to_string(report.failed_rows()) + " of " + std::to_string(rows.size()) +
                             " runs failed (marked failed above; the others were printed and "
                             "written); the first: " + report.first_failure->what());
  if (!report.all_passed())
    throw PartialFailure(ErrorCategory::numeric,
                         "a kernel's result failed verification (marked FAILED above; the "
                         "results were written)");
}

}  // namespace

void add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time every kernel beside the reference library (OpenBLAS or cuBLAS) in one run");
  cmd->footer("Spread and noisy rows: every timed row carries the spread of its runs, (max - min) / median, in "
              "the table (spread) and the JSON (timing: samples, min, median, max). A row is noisy (* after its "
              "spread; \"noisy\": true in the JSON, timing.noisy_reason says why) when that spread is above " +
              std::to_string(int(kNoisySpread * 100 + 0.5)) +
              "%, when the reference's runs paired with it (GPU) spread more than that, or, on the CPU, when "
              "the cores are shared: the 1-minute load average (/proc/loadavg) less the run's own threads "
              "above the cores it leaves idle. See docs/results_schema.md.");
  cmd->add_option("--backend", o->backend, kBackendHelp)->capture_default_str();
  cmd->add_option("--kernels", o->kernels,
                  "all, or a comma-separated list of kernel names (the reference libraries "
                  "always run too); 'auto' adds a row per shape for the kernel --kernel auto runs "
                  "there (its note names it)")
      ->capture_default_str();
  cmd->add_option("--sizes", o->sizes,
                  std::string("Square sizes N (N x N x N), comma-separated (default ") +
                      kDefaultCpuSizes + " on the CPU, " + kDefaultCudaSizes +
                      " on a GPU; 16384 only when listed)");
  cmd->add_option("--shapes", o->shapes,
                  "Shapes as MxNxK, comma-separated, e.g. 4000x4000x4000,8192x1024x8192,"
                  "1024x8192x256 (C is M x N, K the reduction length); the plot shows the "
                  "square ones, JSON and CSV all");
  cmd->add_option("--suite", o->suite,
                  "A shape suite: a name from bench/shapes/ (installed in share/gemmkit/shapes/; "
                  "small_squares, skinny, long_k, short_k, odd, transposed, or all: their union) "
                  "or a suite file's path (with a '/' or ending in .txt). Each line's transposes "
                  "and layout are its own; after the tables, each kernel's geometric mean and "
                  "minimum of % of the reference over the suite");
  cmd->add_option("--m", o->m, "Rows of C (with --n and --k: one shape)");
  cmd->add_option("--n", o->n, "Columns of C");
  cmd->add_option("--k", o->k, "Reduction length");
  cmd->add_option("--dtype", o->dtype,
                  "f32, f64, i32, i64, or bf16, f16, tf32 (tensor-core kernels)")
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")
      ->capture_default_str()->check(at_least(0));
  cmd->add_option("--reps", o->reps, "Timed runs (the median is reported)")
      ->capture_default_str()->check(at_least(1));
  cmd->add_option("--max-seconds", o->max_seconds,
                  "Stop timing a kernel at a shape after this many seconds (at least one run)")
      ->capture_default_str()->check(positive_number());
  cmd->add_option("--max-run-seconds", o->max_run_seconds,
                  "Skip a kernel at a shape when its best rate at a smaller shape of this run "
                  "predicts one run takes longer than this (shapes run smallest first; a large "
                  "first shape is estimated from probe runs on smaller ones)")
      ->capture_default_str()->check(positive_number());
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")->capture_default_str()->check(non_negative_integer());
  cmd->add_flag("--transpose-a", o->trans_a, "Store A transposed (k x m) in every shape");
  cmd->add_flag("--transpose-b", o->trans_b, "Store B transposed (n x k) in every shape");
  cmd->add_option("--layout", o->layout,
                  "row (C's rows contiguous) or col (column-major, as BLAS and cuBLAS store)")
      ->capture_default_str();
  cmd->add_option("--batch", o->batch,
                  "Time a strided batch of this many products per shape, stored one after "
                  "another; kernels without a batched launch (see gemmkit list) run them one "
                  "after another. GFLOP/s count every product; every product is verified")
      ->capture_default_str()->check(at_least(1));
  add_json_option(cmd, o->json_path, "Write results (with GPU, date, commit) as JSON");
  cmd->add_option("--csv", o->csv_path, "Write results as CSV");
  cmd->add_option("--plot", o->plot_path,
                  "Plot GFLOP/s against N for the square shapes to a PNG (python3-matplotlib)");
  CLI::Option* distributed = cmd->add_flag(
      "--distributed", o->distributed,
      "Be one of the processes of 'mpirun -np P gemmkit bench --distributed ...' (a build with MPI): "
      "times SUMMA on random operands, block-cyclic over a process grid, on the CPU backend or with "
      "--backend cuda on one GPU per process beside cuBLASMp (a build with NCCL); --kernels: the local "
      "kernel; per shape the median of the timed runs, each between two barriers (docs/distributed.md)");
  add_grid_options(cmd, distributed, o->grid, o->block);
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace gemmkit::cli

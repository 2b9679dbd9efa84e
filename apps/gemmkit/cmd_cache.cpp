// gemmkit cache list|clear|warm: the kernels compiled on first use and their on-disk cache
// (gemmkit/kernel_cache.hpp). warm compiles what a dtype's plans can launch, or what the plans
// of a suite or a list of shapes need, in parallel, so that a GPU test run, a benchmark or a
// machine without NVRTC finds its kernels compiled.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gemmkit/bench.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/kernel_cache.hpp"

namespace gemmkit::cli {
namespace {

std::string size_text(double bytes) {
  char text[32];
  if (bytes >= 1 << 20) std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
  else std::snprintf(text, sizeof text, "%.0f KiB", bytes / 1024);
  return text;
}

void list_cache() {
  const std::vector<CachedKernel> entries = kernel_cache_list();
  double total = 0;
  int damaged = 0;
  for (const CachedKernel& e : entries) {
    total += double(e.bytes);
    if (!e.valid) {
      ++damaged;
      std::printf("%-8s %9s  %6s  (damaged: compiled again when next needed) %s\n", "?", size_text(double(e.bytes)).c_str(),
                  "", e.file.c_str());
      continue;
    }
    // Spilled registers go to local memory: worth seeing for a kernel meant to keep its tile
    // in registers.
    const std::string spills = e.spill_stores || e.spill_loads
                                   ? "  (spills: " + std::to_string(e.spill_stores) + " bytes stored, " +
                                         std::to_string(e.spill_loads) + " loaded)"
                                   : "";
    std::printf("%-8s %9s  %5.1fs  %3d regs  %s%s\n", e.arch.c_str(), size_text(double(e.bytes)).c_str(),
                e.compile_seconds, e.registers, e.kernel.c_str(), spills.c_str());
  }
  std::printf("%zu kernels, %s, in %s%s\n", entries.size(), size_text(total).c_str(), kernel_cache_dir().c_str(),
              damaged ? (" (" + std::to_string(damaged) + " damaged)").c_str() : "");
}

// warm --suite/--shapes: each shape in each dtype planned as a call would plan it; one line
// per problem with the kernel that runs it and what its plan compiled.
void warm_for_problems(const std::string& suite_name, const std::string& shapes, bool trans_a, bool trans_b,
                       const std::string& kernel, const std::vector<DType>& dtypes, int arch, int jobs) {
  if (!suite_name.empty() && !shapes.empty()) fail(ErrorCategory::usage, "give one of --suite or --shapes");
  if (dtypes.empty())
    fail(ErrorCategory::usage, "--suite and --shapes plan for the dtypes given: add --dtype (e.g. --dtype bf16)");
  std::vector<SuiteShape> lines;
  if (!suite_name.empty()) {
    if (trans_a || trans_b)
      fail(ErrorCategory::usage, "--suite takes transposes from its file's lines; drop --transpose-a/--transpose-b");
    lines = find_suite(suite_name).shapes;
  } else {
    for (const BenchShape& s : parse_shapes(shapes)) lines.push_back({s, trans_a, trans_b});
  }
  KernelCacheWarmProblems request;
  for (const DType dtype : dtypes)
    for (const SuiteShape& line : lines) {
      GemmProblem p;
      p.dtype = dtype;
      if (dtype == DType::i8) p.out_dtype = DType::i32;  // int8 products are int32 (the bench's and explain's rule)
      p.m = line.shape.m, p.n = line.shape.n, p.k = line.shape.k;
      p.trans_a = line.trans_a, p.trans_b = line.trans_b;
      p.layout = line.layout;
      // Packed operands, as bench allocates them.
      const bool row = p.layout == Layout::row_major;
      p.lda = row ? p.a_cols() : p.a_rows();
      p.ldb = row ? p.b_cols() : p.b_rows();
      p.ldc = row ? p.n : p.m;
      request.problems.push_back(p);
    }
  request.kernel = kernel;
  request.compute_capability = arch;
  request.threads = jobs;
  request.on_problem = [](const GemmProblem& p, const std::string& name, const std::vector<WarmedKernel>& kernels,
                          int done, int total) {
    std::string what;
    for (const WarmedKernel& k : kernels)
      what += (what.empty() ? "" : "; ") + k.kernel + " " +
              (k.compiled ? std::to_string(k.compile_seconds).substr(0, 4) + " s" : std::string("cached"));
    const std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + p.shape_string() + " " +
                             std::string(dtype_name(p.dtype)) + ": " + name + ": " +
                             (what.empty() ? "(nothing compiled on first use)" : what);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  const KernelCacheWarmed result = kernel_cache_warm(request);
  std::printf("%zu problems, %d kernels, %d compiled now, in %.1f s; cache %s\n", request.problems.size(),
              result.kernels, result.compiled, result.seconds, kernel_cache_dir().c_str());
}

}  // namespace

void add_cache(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "cache", "The cache of kernels compiled on first use ($GEMMKIT_CACHE_DIR, else ~/.cache/gemmkit/kernels)");
  cmd->require_subcommand(1);
  cmd->add_subcommand("list", "List the compiled kernels in the cache")->callback(list_cache);
  cmd->add_subcommand("clear", "Remove every compiled kernel from the cache")->callback([] {
    const std::size_t removed = kernel_cache_clear();
    std::printf("removed %zu files from %s\n", removed, kernel_cache_dir().c_str());
  });

  struct WarmOptions {
    std::vector<std::string> dtypes;
    std::string shapes, suite, kernel = "auto";
    bool trans_a = false, trans_b = false;
    int arch = 0, jobs = 0;
  };
  auto o = std::make_shared<WarmOptions>();
  CLI::App* warm = cmd->add_subcommand(
      "warm", "Compile the kernels some dtypes' plans can launch (or the plans of a suite or of some shapes need) "
              "into the cache, in parallel");
  warm->add_option("--dtype", o->dtypes, "bf16, f16, tf32, ... (repeat or comma-separate; default: all)")
      ->delimiter(',');
  warm->add_option("--suite", o->suite,
                   "only what the plans of a bench suite need (a name, e.g. all, or a file; needs --dtype)");
  warm->add_option("--shapes", o->shapes, "only what the plans of these MxNxK shapes need (needs --dtype)");
  warm->add_flag("--transpose-a", o->trans_a, "with --shapes: op(A) = A^T");
  warm->add_flag("--transpose-b", o->trans_b, "with --shapes: op(B) = B^T");
  warm->add_option("--kernels", o->kernel, "with --suite/--shapes: the kernel that plans them (default: auto)");
  warm->add_option("--arch", o->arch,
                   "compute capability to compile for, e.g. 90 (default: the device's; with --suite/--shapes and "
                   "no such device, only 90: an H200's plans)")
      ->check(CLI::Range(50, 200));
  warm->add_option("--jobs", o->jobs, "compiles (or plans) at once (default: one per core)")->check(at_least(1));
  warm->callback([o] {
    std::vector<DType> dtypes;
    for (const std::string& name : o->dtypes) {
      const auto dtype = parse_dtype(name);
      if (!dtype) fail(ErrorCategory::usage, "--dtype: unknown dtype '" + name + "'");
      dtypes.push_back(*dtype);
    }
    if (!o->shapes.empty() || !o->suite.empty()) {
      warm_for_problems(o->suite, o->shapes, o->trans_a, o->trans_b, o->kernel, dtypes, o->arch, o->jobs);
      return;
    }
    if (o->trans_a || o->trans_b || o->kernel != "auto")
      fail(ErrorCategory::usage, "--transpose-a, --transpose-b and --kernels go with --suite or --shapes");
    KernelCacheWarm request;
    request.dtypes = dtypes;
    request.compute_capability = o->arch;
    request.threads = o->jobs;
    request.on_kernel = [](const std::string& kernel, double seconds, bool compiled, int done, int total) {
      std::printf("[%d/%d] %s: %s\n", done, total, kernel.c_str(),
                  compiled ? (std::to_string(seconds).substr(0, 4) + " s").c_str() : "cached");
      std::fflush(stdout);
    };
    const KernelCacheWarmed result = kernel_cache_warm(request);
    std::printf("%d kernels, %d compiled now, in %.1f s; cache %s\n", result.kernels, result.compiled, result.seconds,
                kernel_cache_dir().c_str());
  });
}

}  // namespace gemmkit::cli

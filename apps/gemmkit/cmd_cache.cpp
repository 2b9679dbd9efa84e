// gemmkit cache list|clear|warm: the kernels compiled on first use and their on-disk cache
// (gemmkit/kernel_cache.hpp). warm compiles what a dtype's plans can launch, in parallel, so
// that a GPU test run, a benchmark or a machine without NVRTC finds every kernel compiled.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
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
    int arch = 0, jobs = 0;
  };
  auto o = std::make_shared<WarmOptions>();
  CLI::App* warm = cmd->add_subcommand(
      "warm", "Compile every kernel the plans of some dtypes can launch into the cache, in parallel");
  warm->add_option("--dtype", o->dtypes, "bf16, f16, tf32, ... (repeat or comma-separate; default: all)")
      ->delimiter(',');
  warm->add_option("--arch", o->arch, "compute capability to compile for, e.g. 90 (default: the device's)")
      ->check(CLI::Range(50, 200));
  warm->add_option("--jobs", o->jobs, "compiles at once (default: one per core)")->check(at_least(1));
  warm->callback([o] {
    KernelCacheWarm request;
    for (const std::string& name : o->dtypes) {
      const auto dtype = parse_dtype(name);
      if (!dtype) fail(ErrorCategory::usage, "--dtype: unknown dtype '" + name + "'");
      request.dtypes.push_back(*dtype);
    }
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

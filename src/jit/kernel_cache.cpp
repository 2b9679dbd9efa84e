#include "gemmkit/kernel_cache.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "jit/jit.hpp"
#include "jit/progress.hpp"
#include "runtime/cuda/jit_kernels.hpp"  // host declarations only: both builds type-check the call
#include "runtime/cuda_part.hpp"

namespace gemmkit {
namespace {

// Every kernel compiled on first use, once each (tables may name one instantiation twice).
std::vector<const jit::KernelSpec*> all_specs() {
  std::vector<const jit::KernelSpec*> out;
  GEMMKIT_CUDA_PART(for (const cuda::JitKernel* k : cuda::all_jit_kernels()) out.push_back(&k->spec);)
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::string kernel_cache_dir() { return jit::cache_dir(); }

std::vector<CachedKernel> kernel_cache_list() {
  std::vector<CachedKernel> out;
  for (const jit::CacheEntry& e : jit::cache_entries())
    out.push_back({e.file, e.label, e.arch, e.bytes, e.compile_seconds, e.resources.registers,
                   e.resources.spill_stores, e.resources.spill_loads, e.valid});
  return out;
}

std::size_t kernel_cache_clear() { return jit::cache_clear(); }

std::vector<DType> kernel_cache_dtypes() {
  std::vector<DType> out;
  for (const jit::KernelSpec* spec : all_specs()) {
    const DType d = *parse_dtype(spec->dtype);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

KernelCacheWarmed kernel_cache_warm(const KernelCacheWarm& options) {
  const auto start = std::chrono::steady_clock::now();
  int cc = options.compute_capability;
  if (cc == 0) {
    require_cuda_device();
    cc = current_compute_capability();
  }
  const std::vector<DType> known = kernel_cache_dtypes();
  for (const DType d : options.dtypes)
    if (std::find(known.begin(), known.end(), d) == known.end())
      fail(ErrorCategory::usage, "no kernel compiled on first use takes " + std::string(dtype_name(d)) +
                                     (known.empty() ? " (this build compiles none)" : ""));
  std::vector<const jit::KernelSpec*> work;  // the dtypes' kernels that run on cc
  for (const jit::KernelSpec* spec : all_specs())
    if (cc >= spec->min_compute_capability &&
        (options.dtypes.empty() || std::find(options.dtypes.begin(), options.dtypes.end(),
                                             *parse_dtype(spec->dtype)) != options.dtypes.end()))
      work.push_back(spec);
  if (!work.empty() && !jit::nvrtc_available())
    fail(ErrorCategory::device, "cannot compile kernels here: NVRTC (libnvrtc, of the CUDA toolkit) cannot be loaded");

  KernelCacheWarmed out;
  out.kernels = int(work.size());
  std::atomic<std::size_t> next{0};
  std::atomic<int> compiled{0};
  std::mutex report;
  int done = 0;
  std::exception_ptr error;
  const auto worker = [&] {
    const jit::Progress::Quiet quiet;  // one line per kernel comes from on_kernel instead
    for (std::size_t i; (i = next++) < work.size();) {
      try {
        bool now = false;
        const auto kernel = jit::compile(*work[i], cc, &now);
        if (now) ++compiled;
        const std::lock_guard lock(report);
        ++done;
        if (options.on_kernel) options.on_kernel(work[i]->label, kernel->compile_seconds, now, done, out.kernels);
      } catch (...) {
        const std::lock_guard lock(report);
        if (!error) error = std::current_exception();
        next = work.size();  // the others stop after their current kernel
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = std::clamp<int>(options.threads > 0 ? options.threads : int(cores), 1, std::max(1, out.kernels));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  out.compiled = compiled;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace gemmkit

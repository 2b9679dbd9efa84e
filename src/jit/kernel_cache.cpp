#include "gemmkit/kernel_cache.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/registry.hpp"
#include "jit/compile_log.hpp"
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

// Runs work(i) for i in [0, count) on `threads` threads (0: one per core); the first error
// stops the others after their current item and is rethrown.
void in_parallel(int count, int threads, const std::function<void(int)>& work) {
  std::atomic<int> next{0};
  std::mutex guard;
  std::exception_ptr error;
  const auto worker = [&] {
    for (int i; (i = next++) < count;) {
      try {
        work(i);
      } catch (...) {
        const std::lock_guard lock(guard);
        if (!error) error = std::current_exception();
        next = count;
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int n = std::clamp<int>(threads > 0 ? threads : int(cores), 1, std::max(1, count));
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  std::atomic<int> compiled{0};
  std::mutex report;
  int done = 0;
  in_parallel(out.kernels, options.threads, [&](int i) {
    const jit::Progress::Quiet quiet;  // one line per kernel comes from on_kernel instead
    bool now = false;
    const auto kernel = jit::compile(*work[i], cc, &now);
    if (now) ++compiled;
    const std::lock_guard lock(report);
    ++done;
    if (options.on_kernel) options.on_kernel(work[i]->label, kernel->compile_seconds, now, done, out.kernels);
  });
  out.compiled = compiled;
  out.seconds = seconds_since(start);
  return out;
}

KernelCacheWarmed kernel_cache_warm(const KernelCacheWarmProblems& options) {
  const auto start = std::chrono::steady_clock::now();
  // Plans are the device's when it is the architecture asked for, else an H200's.
  const bool device = cuda_device_available();
  int cc = options.compute_capability;
  if (cc == 0) {
    require_cuda_device();
    cc = current_compute_capability();
  }
  if (!cuda_compiled()) fail(ErrorCategory::device, "this build has no CUDA backend, so it compiles no kernel");
  const bool live = device && current_compute_capability() == cc;
  if (!live && cc != 90)
    fail(ErrorCategory::usage, "plans for compute capability " + std::to_string(cc) +
                                   " are made on such a device; without one, only for 90 (an H200's limits)");
  const bool named = options.kernel != "auto";  // GEMM takes only "auto" as the auto choice
  if (named) gemm_registry().get(options.kernel);  // an unknown name fails before any work

  std::mutex report;
  std::set<const jit::KernelSpec*> needed, fresh;
  int done = 0;
  const int total = int(options.problems.size());
  in_parallel(total, options.threads, [&](int i) {
    GemmProblem p = options.problems[i];
    // Addresses only looked at, never read, on every alignment a kernel asks (as explain's).
    p.a = reinterpret_cast<void*>(std::uintptr_t(1) << 32);
    p.b = reinterpret_cast<void*>(std::uintptr_t(2) << 32);
    p.c = reinterpret_cast<void*>(std::uintptr_t(3) << 32);
    validate(p);
    std::string name = options.kernel;
    if (!named) {
      const AutoChoice choice = explain_auto_choice(Backend::cuda, cc, p);
      if (!choice.chosen) fail(ErrorCategory::usage, "no CUDA kernel takes " + p.shape_string());
      name = choice.chosen->name;
    }
    const KernelEntry& entry = gemm_registry().get(name);
    jit::CompileLog log;
    if (entry.launches) {  // else nothing of it is compiled on first use (cuBLAS, ...)
      // Explain plans a launch as a call does (the same launcher code) and compiles what it needs.
      const GemmProblem rm = as_row_major(p);
      ExplainRequest request;
      request.kernel = name;
      request.m = rm.m, request.n = rm.n, request.k = rm.k;
      request.dtype = rm.dtype;
      request.trans_a = rm.trans_a, request.trans_b = rm.trans_b;
      request.live = live;
      const jit::Progress::Quiet quiet;  // on_problem reports instead
      explain(request);
    }
    std::vector<WarmedKernel> kernels;
    const std::lock_guard lock(report);
    for (const jit::CompileLog::Entry& e : log.entries()) {
      if (std::any_of(kernels.begin(), kernels.end(), [&](const WarmedKernel& k) { return k.kernel == e.spec->label; }))
        continue;
      kernels.push_back({e.spec->label, e.compile_seconds, e.compiled_now});
      needed.insert(e.spec);
      if (e.compiled_now) fresh.insert(e.spec);
    }
    ++done;
    if (options.on_problem) options.on_problem(p, name, kernels, done, total);
  });
  KernelCacheWarmed out;
  out.kernels = int(needed.size());
  out.compiled = int(fresh.size());
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace gemmkit

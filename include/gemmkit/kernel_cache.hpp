// The cache of kernels compiled on first use. A CUDA build compiles its heavy kernel families
// (the Hopper wgmma rungs, ...) when a plan first needs them, with NVRTC, for the device's own
// architecture, and keeps them on disk: in $GEMMKIT_CACHE_DIR, else
// $XDG_CACHE_HOME/gemmkit/kernels, else ~/.cache/gemmkit/kernels. An entry is keyed by the
// kernel's source, its template arguments, the architecture and NVRTC's and the driver's
// versions, so a changed kernel or toolkit never reuses stale code. Entries are written
// atomically, several processes may fill the cache at once, a damaged entry is compiled
// again, and a cache folder that cannot be written leaves kernels in memory (one warning).
// `gemmkit cache` is the command-line face of these functions.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gemmkit/dtype.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit {

std::string kernel_cache_dir();

struct CachedKernel {
  std::string file;    // its path
  std::string kernel;  // e.g. "wgmma_ws 128x256 bf16, A K-major, B K-major"
  std::string arch;    // "sm_90a"
  std::size_t bytes = 0;
  double compile_seconds = 0;  // how long it took to compile
  int registers = 0;           // per thread, as ptxas reported them
  int spill_stores = 0, spill_loads = 0;  // bytes of registers spilled to local memory
  bool valid = false;          // false: truncated or damaged (compiled again when next needed)
};
std::vector<CachedKernel> kernel_cache_list();

// Removes every entry; returns how many files it removed.
std::size_t kernel_cache_clear();

struct KernelCacheWarm {
  std::vector<DType> dtypes;   // the element types whose kernels to compile; empty: all
  int compute_capability = 0;  // the architecture, e.g. 90; 0: the current CUDA device's
  int threads = 0;             // compiles at once; 0: one per core
  // Called after each kernel (from the compiling thread, one call at a time).
  std::function<void(const std::string& kernel, double seconds, bool compiled, int done, int total)> on_kernel;
};
struct KernelCacheWarmed {
  int kernels = 0;   // what the dtypes need
  int compiled = 0;  // compiled now (the rest were in the cache)
  double seconds = 0;
};
// Compiles every kernel the build compiles on first use for the dtypes and architecture,
// in parallel, into the cache. Usage error for a dtype no such kernel takes; device error
// without NVRTC, or with compute_capability 0 and no device.
KernelCacheWarmed kernel_cache_warm(const KernelCacheWarm& options);

// What the plans of some GEMM problems launch, compiled into the cache: each problem is
// planned with `kernel` (auto: the kernel auto picks for it there) as a call on the device
// would plan it, and the kernels its launches compile on first use are compiled, the problems
// in parallel threads. A problem's pointers are not read: its operands are taken as aligned as
// their leading dimensions allow. With compute_capability 0 or the device's,
// the device's plans (kernels loaded into it too); 90 without such a device, the plans for an
// H200's limits (explain's recorded ones); any other is a usage error, as are a problem no
// kernel takes and a kernel that does not take a problem.
struct WarmedKernel {
  std::string kernel;  // its label, e.g. "wgmma_ws 128x256 bf16, A and B K-major"
  double compile_seconds = 0;
  bool compiled = false;  // compiled now; false: the cache (or another problem) had it
};
struct KernelCacheWarmProblems {
  std::vector<GemmProblem> problems;
  std::string kernel = "auto";
  int compute_capability = 0;
  int threads = 0;  // problems planned at once; 0: one per core
  // After each problem (one call at a time): the kernel that runs it and what its plan compiled.
  std::function<void(const GemmProblem& problem, const std::string& kernel, const std::vector<WarmedKernel>& compiled,
                     int done, int total)>
      on_problem;
};
// kernels: the distinct kernels the plans need; compiled: how many of them were compiled now.
KernelCacheWarmed kernel_cache_warm(const KernelCacheWarmProblems& options);

// The dtypes some kernel compiled on first use takes (empty in a build without CUDA).
std::vector<DType> kernel_cache_dtypes();

}  // namespace gemmkit

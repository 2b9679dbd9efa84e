// Internal: kernels compiled on first use. The heavy kernel families (the Hopper wgmma rungs,
// ...) are not compiled into the library: their headers are embedded as text (cmake/
// embed_sources.cmake), and the first plan that needs an instantiation compiles it with NVRTC
// for the device's own architecture, its configuration (tile, stages, transposes) as template
// arguments. Compiled kernels are kept twice: in memory for the process, and on disk
// (disk_cache.cpp) for the next one. What a Context loads from them (cudaLibrary_t) is the
// context's (runtime/cuda/jit_kernels.cu); what is here is host data only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gemmkit::jit {

// One instantiation of a kernel template, as NVRTC compiles it.
struct KernelSpec {
  std::string header;      // the embedded header that defines it, e.g. "ops/gemm/cuda/hopper/19_wgmma_ws.cuh"
  std::string expression;  // the instantiation, e.g. "gemmkit::cuda::kernels::wgmma_ws_kernel<...>"
  std::string label;       // for people: "wgmma_ws 128x256 bf16, A and B K-major"
  std::string dtype;       // the element type it multiplies ("bf16"), for `gemmkit cache warm --dtype`
  int min_compute_capability;  // the oldest architecture it compiles for (90: wgmma and TMA)
};

// What ptxas reported for the kernel (-v), read at compile time and kept with the code.
struct CompiledResources {
  int registers = 0;
  int stack_bytes = 0;  // stack frame (local memory)
  int spill_stores = 0, spill_loads = 0;  // bytes
  int static_smem = 0;  // bytes
};

struct CompiledKernel {
  std::string cubin;         // the device code
  std::string lowered_name;  // the entry's symbol in it
  CompiledResources resources;
  double compile_seconds = 0;  // when it was compiled (also when it was read from the cache)
  bool from_disk = false;      // read from the on-disk cache in this process
};

// The architecture name NVRTC compiles for: compute capability 90 -> "sm_90a" (the wgmma and
// TMA kernels need the architecture-specific features), others "sm_XY".
std::string arch_name(int compute_capability);

// The kernel compiled for `compute_capability`: from this process's memory, else the disk
// cache, else compiled now (and then kept in both). Thread-safe; several threads asking for
// the same kernel compile it once. A compile error is ErrorCategory::internal with NVRTC's
// log; a machine without NVRTC gets ErrorCategory::device saying so (and that `gemmkit cache
// warm` on a machine with it fills a cache this one can use). On a terminal, a compile prints
// one progress line on stderr ("gemmkit: compiling ... for sm_90a ... 2.1 s"). `compiled_now`,
// when given, says whether this call compiled it (false: memory or disk had it).
std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, int compute_capability,
                                              bool* compiled_now = nullptr);

// Whether NVRTC can be loaded here.
bool nvrtc_available();
// "13.0", or empty without NVRTC.
std::string nvrtc_version();
// The versions a cache key names: NVRTC's (without it, this build's toolkit's) and the driver's.
std::string key_versions();

// ---- the on-disk cache (disk_cache.cpp) ----

// $GEMMKIT_CACHE_DIR, else $XDG_CACHE_HOME/gemmkit/kernels, else ~/.cache/gemmkit/kernels.
std::string cache_dir();

// The cache's key for a compile: everything the code depends on (the embedded sources' hash,
// the instantiation, the architecture, NVRTC's and the driver's versions, the options).
std::string cache_key(const KernelSpec& spec, int compute_capability, const std::string& options);

// The entry for `key`, when the cache holds a whole one (a truncated or corrupt entry, or one
// of another key, reads as absent, and the next store replaces it).
std::shared_ptr<CompiledKernel> cache_load(const std::string& key);
// Stores an entry atomically (a temporary file renamed over it: a reader sees the old entry or
// the new one, never part of one). A folder that cannot be written warns once per process
// and leaves the kernel in memory only.
void cache_store(const std::string& key, const KernelSpec& spec, int compute_capability, const CompiledKernel& kernel);

struct CacheEntry {
  std::string file;   // path
  std::string label;  // the KernelSpec's label
  std::string arch;   // "sm_90a"
  std::size_t bytes = 0;
  double compile_seconds = 0;
  CompiledResources resources;  // what ptxas reported
  bool valid = false;  // false: truncated or corrupt (rebuilt on next use)
};
std::vector<CacheEntry> cache_entries();
// Removes every entry (and stray temporary files); returns how many files it removed.
std::size_t cache_clear();

// The hash of every embedded source together (FNV-1a, 64 bits), in hex.
const std::string& sources_hash();

}  // namespace gemmkit::jit

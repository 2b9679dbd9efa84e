// Loads OpenBLAS, cuBLAS, cuSPARSE, NCCL and NVRTC when first called (see lazy_library.hpp for why). Each
// is looked for at the path CMake found it at (the build's own: for OpenBLAS the OpenMP
// build, which a search by name may not find first), then by its file name through the
// loader's usual search (LD_LIBRARY_PATH, the run path, the system's libraries), for a
// binary moved to a machine where the library lies elsewhere. src/CMakeLists.txt passes both.
#include "runtime/lazy_library.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "gemmkit/error.hpp"
#include "gemmkit/memory.hpp"

namespace gemmkit::detail {
namespace {

struct Candidates {
  const char* what;
  const char* name;
  const char* path;
};

Candidates candidates(LazyLibrary library) {
  switch (library) {
    case LazyLibrary::openblas: return {"OpenBLAS", GEMMKIT_OPENBLAS_NAME, GEMMKIT_OPENBLAS_PATH};
#if GEMMKIT_HAVE_CUDA
    case LazyLibrary::cublas: return {"cuBLAS", GEMMKIT_CUBLAS_NAME, GEMMKIT_CUBLAS_PATH};
    case LazyLibrary::cusparse: return {"cuSPARSE", GEMMKIT_CUSPARSE_NAME, GEMMKIT_CUSPARSE_PATH};
    case LazyLibrary::nvrtc: return {"NVRTC", GEMMKIT_NVRTC_NAME, GEMMKIT_NVRTC_PATH};
#else
    case LazyLibrary::cublas:
    case LazyLibrary::cusparse:
    case LazyLibrary::nvrtc: break;
#endif
#if GEMMKIT_HAVE_NCCL
    case LazyLibrary::nccl: return {"NCCL", GEMMKIT_NCCL_NAME, GEMMKIT_NCCL_PATH};
#else
    case LazyLibrary::nccl: break;
#endif
  }
  fail(ErrorCategory::internal, "a CUDA library was asked for in a build without it");
}

// OpenBLAS's OpenMP build maps a 128 MiB buffer for each OpenMP thread at its first product
// and, when a map fails, tries again forever; so the address space is checked first: the
// library and its own dependencies, then the buffers. Measured with 0.3.21 on x86-64
// (2026-12-02, the first cblas_sgemm of a 48^3 product): one thread needs about 305 MiB above
// the process's size, two about 435; the figures below leave a margin of ~10%.
std::uint64_t openblas_load_bytes() {
  return (std::uint64_t{192} + std::uint64_t{144} * std::uint64_t(std::max(1, omp_get_max_threads()))) << 20;
}

std::mutex mutex;
void* handles[5] = {};  // opened once per process and never closed: call sites keep entries

void* handle_of(LazyLibrary library) {
  const std::lock_guard lock(mutex);
  void*& handle = handles[int(library)];
  if (handle) return handle;  // a failed load is tried again at the next call
  const Candidates c = candidates(library);
  if (library == LazyLibrary::openblas)
    require_address_space(openblas_load_bytes(), "loading OpenBLAS (a 128 MiB buffer for each of its " +
                                                   std::to_string(omp_get_max_threads()) +
                                                   " threads; OMP_NUM_THREADS sets them)");
  handle = dlopen(c.path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const std::string first = dlerror();
    handle = dlopen(c.name, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      fail(library == LazyLibrary::openblas ? ErrorCategory::internal : ErrorCategory::device,
           std::string("cannot load ") + c.what + " (" + c.path + "): " + first);
  }
  return handle;
}

}  // namespace

void* lazy_entry(LazyLibrary library, const char* name) {
  void* handle = handle_of(library);
  void* entry = dlsym(handle, name);
  if (!entry)
    fail(ErrorCategory::internal, std::string(candidates(library).what) + " (" + candidates(library).path +
                                      ") has no entry " + name);
  return entry;
}

bool lazy_loaded(LazyLibrary library) {
  const std::lock_guard lock(mutex);
  return handles[int(library)] != nullptr;
}

}  // namespace gemmkit::detail

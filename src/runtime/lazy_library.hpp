// OpenBLAS, cuBLAS, cuSPARSE, NCCL and NVRTC, loaded when first called (dlopen) rather than when the
// program starts. Linked, they are mapped before main: cuBLAS, cuSPARSE and NCCL reserve about
// 1 GB of address space, and OpenBLAS's start-up retries a 128 MiB mmap forever when it
// fails, so a program linked against them crashed or hung under a small `ulimit -v` before
// it could say anything. Loaded here, a run that needs none of them never maps them, and
// one that cannot load them gets an error saying why. Every call into them goes through
// GEMMKIT_OPENBLAS / GEMMKIT_CUBLAS / GEMMKIT_CUSPARSE / GEMMKIT_NCCL / GEMMKIT_NVRTC:
//
//   GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetStream)(handle, stream));
//
// which resolves the entry once per call site (the library once per process) and has the
// declared type of the function, so the compiler checks a call as it checks a direct one.
#pragma once

namespace gemmkit::detail {

enum class LazyLibrary { openblas, cublas, cusparse, nccl, nvrtc };

// The entry `name` of the library, loaded on first use; fails (ErrorCategory::device for the
// CUDA libraries, out_of_memory where the address space cannot hold the library) naming the
// library and why it could not be loaded or has no such entry.
void* lazy_entry(LazyLibrary library, const char* name);

// Whether the library is loaded already (nothing is loaded to answer).
bool lazy_loaded(LazyLibrary library);

template <class F>
F lazy_function(LazyLibrary library, const char* name) {
  return reinterpret_cast<F>(lazy_entry(library, name));
}

}  // namespace gemmkit::detail

// Two steps, so that a name that is a macro (cublasCreate is cublasCreate_v2) is expanded first.
#define GEMMKIT_LAZY_NAME_(x) #x
#define GEMMKIT_LAZY_NAME(x) GEMMKIT_LAZY_NAME_(x)
#define GEMMKIT_LAZY_CALL_(library, type, fn)                                                 \
  ([] {                                                                                        \
    static const auto entry_ = ::gemmkit::detail::lazy_function<type>(library, GEMMKIT_LAZY_NAME(fn)); \
    return entry_;                                                                             \
  }())
#define GEMMKIT_OPENBLAS(fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::openblas, decltype(&fn), fn)
#define GEMMKIT_CUBLAS(fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::cublas, decltype(&fn), fn)
#define GEMMKIT_CUSPARSE(fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::cusparse, decltype(&fn), fn)
#define GEMMKIT_NCCL(fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::nccl, decltype(&fn), fn)
#define GEMMKIT_NVRTC(fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::nvrtc, decltype(&fn), fn)
// For a C entry that a header also overloads for C++: its C type, spelled out.
#define GEMMKIT_CUBLAS_AS(type, fn) GEMMKIT_LAZY_CALL_(::gemmkit::detail::LazyLibrary::cublas, type, fn)

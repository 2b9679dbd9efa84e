// Internal: what a Context holds. The CUDA handles are kept as void* so that this header
// needs no CUDA header; src/runtime/cuda/context.cu casts them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "gemmkit/context.hpp"

namespace gemmkit {

struct Context::Impl {
  Backend backend = Backend::cpu;
  int device = -1;
  DeviceInfo info;

  // Guards everything below.
  mutable std::mutex mutex;
  // One workspace per stream: a stream's calls run in order, so they can share it.
  std::map<Stream, Workspace> workspaces;
  std::uint64_t allocations = 0;
  std::map<const void*, int> cached;  // Context::cached
  // Kernels compiled on first use, loaded into this device (runtime/cuda/jit_kernels.cu): per
  // JitKernel, its library (unloaded when the last reference goes, at close at the latest).
  std::map<const void*, std::shared_ptr<void>> jit_kernels;

  // cuBLAS and cuSPARSE handles, created on first use. A handle holds the stream and the
  // workspace of its last call, so each is used under its own lock (see src/runtime/cuda/context.cu).
  void* cublas = nullptr;
  std::mutex cublas_mutex;
  void* cusparse = nullptr;
  // Frees `cusparse`; set with it by src/ops/spmv/cuda/spmv_handle.cu, in gemmkit_primitives, so
  // that gemmkit_core (GEMM only) does not link cuSPARSE.
  void (*cusparse_destroy)(void*) = nullptr;
  std::mutex cusparse_mutex;
};

namespace detail {
// The backend halves (src/runtime/cuda/context.cu, or src/cuda_absent/cuda_absent.cpp).
void cuda_context_open(Context::Impl& impl, int device);  // fills device and info
void cuda_context_close(Context::Impl& impl);             // frees workspaces and handles
// Grows `current` to at least `bytes` in stream order on impl's device.
Workspace cuda_workspace_grow(Context::Impl& impl, Stream stream, Workspace current,
                              std::size_t bytes);
void cuda_workspaces_release(Context::Impl& impl);  // waits for the device, frees them all
}  // namespace detail

}  // namespace gemmkit

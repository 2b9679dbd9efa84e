// Internal: the CUDA side of a Context, for launchers: the device made current for a call,
// the cuBLAS/cuSPARSE handle bound to the call's stream and workspace, and once-per-context
// facts about kernels.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <mutex>

#include "runtime/context_impl.hpp"
#include "runtime/cuda/check.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cuda {

// Makes `device` current for a scope and restores the caller's device after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
};

// The context's cuBLAS handle, locked for one call and bound to its stream and workspace
// (cuBLAS keeps both in the handle, so two threads must not share it unlocked, and two
// streams must not share its default workspace).
class CublasCall {
 public:
  CublasCall(Context& ctx, Stream stream, Workspace workspace);
  cublasHandle_t get() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cublasHandle_t handle_ = nullptr;
};

// cuBLAS's workspace for one call of `dtype` (it asks for 32 MiB on Hopper, 4 on others).
std::size_t cublas_workspace_bytes(const Context& ctx);

// The context's cuSPARSE handle, locked for one call and bound to its stream.
class CusparseCall {
 public:
  CusparseCall(Context& ctx, Stream stream);
  cusparseHandle_t get() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cusparseHandle_t handle_ = nullptr;
};

inline cudaStream_t stream_of(const KernelLaunch& launch) { return launch.stream; }

// Keys for Context::cached: one per kernel and kind of fact (Fact is a tag type).
template <class Fact, auto Kernel>
inline constexpr char fact_key = 0;

struct SmemOptIn;
struct ResidentBlocks;

// Opts Kernel into `bytes` of dynamic shared memory (above 48 KiB needs it), once per
// context: the attribute belongs to the function on one device, and a kernel always asks
// for the same bytes.
template <auto Kernel>
void allow_dynamic_smem(const Context& ctx, std::size_t bytes) {
  ctx.cached(&fact_key<SmemOptIn, Kernel>, [bytes] {
    GEMMKIT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(bytes)));
    return 1;
  });
}
template <auto Kernel, int SmemBytes>
void allow_dynamic_smem(const Context& ctx) {
  allow_dynamic_smem<Kernel>(ctx, SmemBytes);
}

}  // namespace gemmkit::cuda

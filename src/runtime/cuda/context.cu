// The CUDA half of Context: opening a device, the workspace pool, and the library handles.
#include "runtime/cuda/context.hpp"

#include <string>

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/device.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit {
namespace cuda {

DeviceScope::DeviceScope(int device) {
  GEMMKIT_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(device));
    switched_ = true;
  }
}

DeviceScope::~DeviceScope() {
  if (switched_) cudaSetDevice(previous_);  // never throws from a destructor
}

std::size_t cublas_workspace_bytes(const Context& ctx) {
  return std::size_t(ctx.compute_capability() >= 90 ? 32 : 4) << 20;
}

CublasCall::CublasCall(Context& ctx, Stream stream, Workspace workspace)
    : lock_(ctx.impl().cublas_mutex) {
  Context::Impl& impl = ctx.impl();
  if (!impl.cublas) {
    cublasHandle_t h = nullptr;
    GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasCreate)(&h));
    impl.cublas = h;
  }
  handle_ = static_cast<cublasHandle_t>(impl.cublas);
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetStream)(handle_, stream));
  // Our workspace (the call's, per stream) instead of the handle's shared default one. With
  // none lent cuBLAS runs without workspace, which it allows at some cost in speed.
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetWorkspace)(handle_, workspace.data, workspace.bytes));
}

}  // namespace cuda

namespace detail {

DeviceInfo cuda_device_info(int device);  // device.cu

void cuda_context_open(Context::Impl& impl, int device) {
  require_cuda_device();
  int count = 0;
  GEMMKIT_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0) GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= count)
    fail(ErrorCategory::device, "no CUDA device " + std::to_string(device) + ": this machine has " +
                                    std::to_string(count));
  impl.device = device;
  impl.info = cuda_device_info(device);
}

namespace {
// The streams the workspaces were used on may be gone by now (a caller's streams are often
// destroyed before the context), so this waits for the device and frees synchronously
// rather than in the order of a stream.
void free_workspaces(Context::Impl& impl) {
  cudaDeviceSynchronize();
  for (auto& [stream, w] : impl.workspaces)
    if (w.data) cudaFree(w.data);
  impl.workspaces.clear();
}
}  // namespace

void cuda_context_close(Context::Impl& impl) {
  // Never throws: it runs in a destructor, possibly after an error.
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(impl.device);
  free_workspaces(impl);
  cudaGetLastError();  // a failure here must not surface in the caller's next CUDA call
  if (impl.cublas) GEMMKIT_CUBLAS(cublasDestroy)(static_cast<cublasHandle_t>(impl.cublas));
  if (impl.cusparse) impl.cusparse_destroy(impl.cusparse);
  impl.jit_kernels.clear();  // unloads their libraries
  cudaGetLastError();
  cudaSetDevice(previous);
}

Workspace cuda_workspace_grow(Context::Impl& impl, Stream stream, Workspace current,
                              std::size_t bytes) {
  cuda::DeviceScope scope(impl.device);
  // Round up so that a slowly growing size does not reallocate every call.
  const std::size_t granule = std::size_t(1) << 20;
  const std::size_t rounded = (bytes + granule - 1) / granule * granule;
  if (current.data) GEMMKIT_CUDA_CHECK(cudaFreeAsync(current.data, stream));
  void* data = nullptr;
  const cudaError_t status = cudaMallocAsync(&data, rounded, stream);
  if (status == cudaErrorMemoryAllocation) cuda::throw_device_oom(rounded, 1);
  GEMMKIT_CUDA_CHECK(status);
  return {data, rounded};
}

void cuda_workspaces_release(Context::Impl& impl) {
  cuda::DeviceScope scope(impl.device);
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  free_workspaces(impl);
}

}  // namespace detail
}  // namespace gemmkit

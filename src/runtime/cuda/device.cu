// Device query and the host-side half of running a CUDA kernel on host matrices.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "ops/gemm/dispatch.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_problem.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit {

bool cuda_compiled() { return true; }

namespace detail {

DeviceInfo cuda_device_info(int d) {
  cudaDeviceProp p{};
  GEMMKIT_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
  DeviceInfo info;
  info.index = d;
  info.name = p.name;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.sm_count = p.multiProcessorCount;
  info.max_threads_per_block = p.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    info.max_block_dim[i] = p.maxThreadsDim[i];
    info.max_grid_dim[i] = p.maxGridSize[i];
  }
  info.warp_size = p.warpSize;
  info.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  info.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  // The clock fields left cudaDeviceProp in CUDA 13; the attributes remain.
  GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, d));
  GEMMKIT_CUDA_CHECK(
      cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, d));
  info.memory_bus_width_bits = p.memoryBusWidth;
  info.total_global_memory = p.totalGlobalMem;
  info.shared_memory_per_block = p.sharedMemPerBlock;
  info.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  info.shared_memory_per_sm = p.sharedMemPerMultiprocessor;
  info.constant_memory = p.totalConstMem;
  info.registers_per_block = p.regsPerBlock;
  info.registers_per_sm = p.regsPerMultiprocessor;
  info.l2_cache_bytes = p.l2CacheSize;
  return info;
}

}  // namespace detail

DeviceQuery query_devices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 when there is no driver library
  cudaRuntimeGetVersion(&runtime);
  if (status != cudaSuccess || count == 0) {
    CudaProbe probe;
    probe.status = status == cudaSuccess                 ? CudaProbe::Status::success
                   : status == cudaErrorNoDevice           ? CudaProbe::Status::no_device
                   : status == cudaErrorInsufficientDriver ? CudaProbe::Status::insufficient_driver
                                                           : CudaProbe::Status::other;
    probe.error_text = cudaGetErrorString(status);
    probe.device_count = count;
    probe.driver_version = driver;
    probe.runtime_version = runtime;
    probe.kernel_module_loaded = std::filesystem::exists("/proc/driver/nvidia");
    return diagnose_devices(probe);
  }
  DeviceQuery q;
  for (int d = 0; d < count; ++d) {
    DeviceInfo info = detail::cuda_device_info(d);
    info.driver_version = driver;
    info.runtime_version = runtime;
    q.devices.push_back(info);
  }
  return q;
}

bool cuda_device_available() {
  static const bool available = [] {
    int count = 0;
    const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError();
    return ok;
  }();
  return available;
}

std::optional<DeviceMemory> device_memory() {
  if (!cuda_device_available()) return std::nullopt;
  std::size_t free_bytes = 0, total_bytes = 0;
  GEMMKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return DeviceMemory{free_bytes, total_bytes};
}

int current_compute_capability() {
  if (!cuda_device_available()) return 0;
  int device = 0, major = 0, minor = 0;
  GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
  GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

CudaVersions cuda_versions() {
  CudaVersions v;
  cudaRuntimeGetVersion(&v.runtime);
  cudaDriverGetVersion(&v.driver);  // leaves 0 when there is no driver library
  cudaGetLastError();
  int major = 0, minor = 0, patch = 0;
  try {  // cuBLAS is loaded here if it was not yet; leaves 0 where it cannot be
    if (GEMMKIT_CUBLAS(cublasGetProperty)(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        GEMMKIT_CUBLAS(cublasGetProperty)(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        GEMMKIT_CUBLAS(cublasGetProperty)(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
      v.cublas = major * 10000 + minor * 100 + patch;
  } catch (const Error&) {
  }
  return v;
}

namespace detail {
namespace {

// The operand's name if it is memory the context's device cannot read: pageable host
// memory, or another device's memory.
void check_device_pointer(const Context& ctx, const void* ptr, const char* operand) {
  if (!ptr) return;
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, ptr);
  cudaGetLastError();
  if (status != cudaSuccess || attributes.type == cudaMemoryTypeUnregistered)
    fail(ErrorCategory::usage, std::string(operand) +
                                   " is not device memory: the device API takes pointers from "
                                   "cudaMalloc (or managed memory); host matrices go through "
                                   "the host gemm()");
  if (attributes.type == cudaMemoryTypeDevice && attributes.device != ctx.device())
    fail(ErrorCategory::usage, std::string(operand) + " is memory of device " +
                                   std::to_string(attributes.device) + ", the context's is device " +
                                   std::to_string(ctx.device()));
}

}  // namespace

GemmRunReport cuda_launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& p, Stream stream,
                               Workspace workspace, const GemmOptions& options) {
  const cuda::DeviceScope scope(ctx.device());
  check_device_pointer(ctx, p.a, "A");
  check_device_pointer(ctx, p.b, "B");
  if (!options.limbs.words || p.beta != 0) check_device_pointer(ctx, p.c, "C");  // limbs: C unread
  check_device_pointer(ctx, options.limbs.words, "the limbs");
  GemmRunReport report = run_batch(entry, p, KernelLaunch{ctx, stream, workspace}, options);
  cuda::check_launch(entry.name.c_str());
  return report;
}

GemmRunReport run_on_device(Context& ctx, const KernelEntry& entry, const GemmProblem& host,
                            const GemmOptions& options) {
  if (writes_nothing(host)) return {};
  const cuda::DeviceScope scope(ctx.device());
  const ExactLimbsOut& limbs = options.limbs;
  // C goes to the device unless only limbs are written and C0 is not read.
  const cuda::DeviceProblem device(host, !limbs.words || host.beta != 0);
  // Limbs on the device, tightly packed (rows x cols of the row-major form).
  std::optional<cuda::DeviceBuffer<std::uint64_t>> words;
  GemmOptions on_device = options;
  if (limbs.words) {
    words.emplace(std::size_t(host.m * host.n) * std::size_t(limbs.limbs));
    on_device.limbs = {words->data(), host.n, limbs.limbs};
  }
  const std::size_t needed = workspace_with(entry, device.get(), ctx, on_device);
  GemmRunReport report = cuda_launch_gemm(ctx, entry, device.get(), nullptr,
                                          needed ? ctx.workspace(nullptr, needed) : Workspace{}, on_device);
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  if (limbs.words) {
    const std::size_t row_bytes = std::size_t(host.n * limbs.limbs) * 8;
    GEMMKIT_CUDA_CHECK(cudaMemcpy2D(limbs.words, std::size_t(limbs.ld * limbs.limbs) * 8, words->data(), row_bytes,
                                    row_bytes, std::size_t(host.m), cudaMemcpyDeviceToHost));
  } else {
    device.copy_c_back();
  }
  return report;
}

}  // namespace detail
}  // namespace gemmkit

// Device query and the host-side half of running a CUDA kernel on host matrices.
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/dispatch.hpp"
#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/launch.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/event.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"

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

void cuda_launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& p, Stream stream,
                      Workspace workspace) {
  const cuda::DeviceScope scope(ctx.device());
  check_device_pointer(ctx, p.a, "A");
  check_device_pointer(ctx, p.b, "B");
  check_device_pointer(ctx, p.c, "C");
  const KernelLaunch launch{ctx, stream, workspace};
  if (entry.batched) {
    entry.run(p, launch);
  } else {
    for (std::int64_t i = 0; i < p.batch; ++i) entry.run(batch_item(p, i), launch);
  }
  cuda::check_launch(entry.name.c_str());
}

namespace {

// A host problem's operands (the whole batch) copied to the device with the same layout.
class DeviceProblem {
 public:
  explicit DeviceProblem(const GemmProblem& host)
      : host_(host),
        a_(std::size_t(host.a_span()) * dtype_size(host.dtype)),
        b_(std::size_t(host.b_span()) * dtype_size(host.dtype)),
        c_(std::size_t(host.c_span()) * dtype_size(host.c_dtype())) {
    a_.copy_from_host(static_cast<const unsigned char*>(host.a), a_.size());
    b_.copy_from_host(static_cast<const unsigned char*>(host.b), b_.size());
    c_.copy_from_host(static_cast<const unsigned char*>(host.c), c_.size());
    problem_ = host;
    problem_.a = a_.data();
    problem_.b = b_.data();
    problem_.c = c_.data();
  }
  const GemmProblem& get() const { return problem_; }
  // Puts the host's C back on the device, for a run that must start from C0 again.
  void restore_c() { c_.copy_from_host(static_cast<const unsigned char*>(host_.c), c_.size()); }
  void copy_c_back() const { c_.copy_to_host(static_cast<unsigned char*>(host_.c), c_.size()); }

 private:
  GemmProblem host_, problem_;
  cuda::DeviceBuffer<unsigned char> a_, b_, c_;
};

using cuda::Event;

// The launch through the device API's path, with the workspace from ctx's pool.
void launch(Context& ctx, const KernelEntry& entry, const GemmProblem& p) {
  const std::size_t needed = entry.workspace_for(entry.batched ? p : batch_item(p, 0), ctx);
  cuda_launch_gemm(ctx, entry, p, nullptr, needed ? ctx.workspace(nullptr, needed) : Workspace{});
}

}  // namespace

void run_on_device(Context& ctx, const KernelEntry& entry, const GemmProblem& host) {
  if (host.m == 0 || host.n == 0 || host.batch == 0) return;
  const cuda::DeviceScope scope(ctx.device());
  DeviceProblem device(host);
  launch(ctx, entry, device.get());
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  device.copy_c_back();
}

namespace {

// Overwrites twice the L2 cache of the context's device, so that the next launch reads its
// operands from memory, as it would if they did not fit in L2. The scratch belongs to one
// timing call. (nvbench flushes L2 the same way.)
class L2Flush {
 public:
  explicit L2Flush(const Context& ctx)
      : scratch_(std::max<std::size_t>(2 * std::size_t(ctx.device_info().l2_cache_bytes),
                                        std::size_t(64) << 20)) {}
  void operator()() {
    GEMMKIT_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++value_, scratch_.bytes()));
  }

 private:
  cuda::DeviceBuffer<unsigned char> scratch_;
  unsigned char value_ = 0;
};

// Seconds of one launch under CUDA events. `flush` first clears L2, outside the timed pair.
double timed_launch(Context& ctx, const KernelEntry& entry, const GemmProblem& device_problem,
                    L2Flush* flush, const Event& start, const Event& stop) {
  if (flush) (*flush)();
  GEMMKIT_CUDA_CHECK(cudaEventRecord(start.get()));
  launch(ctx, entry, device_problem);
  GEMMKIT_CUDA_CHECK(cudaEventRecord(stop.get()));
  const double seconds = cuda::elapsed_seconds(start, stop);
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  return seconds;
}

}  // namespace

std::vector<double> time_on_device(Context& ctx, const KernelEntry& entry, const GemmProblem& host,
                                   int warmup, int reps, double max_seconds) {
  const cuda::DeviceScope scope(ctx.device());
  DeviceProblem device(host);
  L2Flush flush(ctx);
  Event start, stop;
  // Warm-up runs (clocks, lazy module loading, cuBLAS heuristics) are timed only to spend at
  // most half the budget on them: one run of a slow rung at a large size can take seconds.
  double spent = 0;
  for (int i = 0; i < warmup && spent < max_seconds / 2; ++i)
    spent += timed_launch(ctx, entry, device.get(), nullptr, start, stop);
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> seconds;
  double total = 0;
  while (int(seconds.size()) < std::max(reps, 1) && (seconds.empty() || total < max_seconds)) {
    // Every timed run starts with a cold L2: otherwise operands that fit in the 60 MiB L2
    // (every f32 size up to about 2048) would be read from cache.
    seconds.push_back(timed_launch(ctx, entry, device.get(), &flush, start, stop));
    total += seconds.back();
  }
  device.copy_c_back();
  return seconds;
}

// Both run on the same device copies of A, B and C, so where those landed in memory is the
// same for both.
PairedTimes time_pair_on_device(Context& ctx, const KernelEntry& entry,
                                const KernelEntry& reference, const GemmProblem& host, int warmup,
                                int reps, double max_seconds) {
  const cuda::DeviceScope scope(ctx.device());
  DeviceProblem device(host);
  L2Flush flush(ctx);
  Event start, stop;
  double spent = 0;
  for (int i = 0; i < warmup && spent < max_seconds; ++i) {
    spent += timed_launch(ctx, entry, device.get(), nullptr, start, stop);
    spent += timed_launch(ctx, reference, device.get(), nullptr, start, stop);
  }
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const PairedTimes t = time_pairs_abba(
      reps, max_seconds,
      [&] { return timed_launch(ctx, entry, device.get(), &flush, start, stop); },
      [&] { return timed_launch(ctx, reference, device.get(), &flush, start, stop); });
  // The reference may have written C last: one more run of the entry, from C0 again, leaves
  // the entry's own result for verification.
  device.restore_c();
  launch(ctx, entry, device.get());
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  device.copy_c_back();
  return t;
}

}  // namespace detail
}  // namespace gemmkit

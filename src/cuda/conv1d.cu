// conv1d on the device: a launcher per rung (configuration worked out once, so the benchmark's
// timed loop only launches), the host-memory entry point, and the benchmark that times every
// rung beside the device-to-device copy in the same run.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/device_buffer.hpp"
#include "core/splitmix.hpp"
#include "cuda/device_timing.hpp"
#include "cuda/kernels/conv1d/01_basic.cuh"
#include "cuda/kernels/conv1d/02_constant_mask.cuh"
#include "cuda/kernels/conv1d/03_tiled.cuh"
#include "cuda/kernels/conv1d/04_streaming.cuh"
#include "cuda/launch.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "primitives/conv1d_device.hpp"

namespace gemmkit {
namespace cuda {
namespace {

using conv1d_detail::kThreadsPerBlock;
static_assert(kernels::conv1d_streaming_threads == kThreadsPerBlock);
static_assert(kernels::conv1d_streaming_tile<float> == conv1d_detail::kStreamingTile<float> &&
                  kernels::conv1d_streaming_tile<double> == conv1d_detail::kStreamingTile<double>,
              "the host's shared-memory check must use the kernel's tile");

// Copies `width` taps from device memory into the constant-memory buffer of T. The buffer is
// one per process: launches that use it must not overlap with another mask's upload.
template <class T>
void upload_constant_mask(const T* device_mask, int width) {
  const std::size_t bytes = std::size_t(width) * sizeof(T);
  if constexpr (std::is_same_v<T, float>)
    GEMMKIT_CUDA_CHECK(cudaMemcpyToSymbol(kernels::conv1d_mask_f32, device_mask, bytes, 0,
                                          cudaMemcpyDeviceToDevice));
  else
    GEMMKIT_CUDA_CHECK(cudaMemcpyToSymbol(kernels::conv1d_mask_f64, device_mask, bytes, 0,
                                          cudaMemcpyDeviceToDevice));
}

// One rung, configured for one problem; calling it enqueues the kernel on the default stream.
template <class T>
struct Conv1dLaunch {
  std::string kernel;
  const T* x = nullptr;
  const T* mask = nullptr;  // device memory
  T* y = nullptr;
  std::int64_t n = 0;
  int width = 0;
  unsigned grid = 0;
  std::size_t shared_bytes = 0;

  void operator()() const {
    if (n == 0) return;
    if (kernel == "basic")
      kernels::conv1d_basic_kernel<T><<<grid, kThreadsPerBlock>>>(x, mask, y, n, width);
    else if (kernel == "constant_mask")
      kernels::conv1d_constant_mask_kernel<T><<<grid, kThreadsPerBlock>>>(x, y, n, width);
    else if (kernel == "tiled")
      kernels::conv1d_tiled_kernel<T><<<grid, kThreadsPerBlock, shared_bytes>>>(x, y, n, width);
    else
      kernels::conv1d_streaming_kernel<T><<<grid, kThreadsPerBlock, shared_bytes>>>(x, mask, y, n, width);
    check_launch(kernel.c_str());
  }
};

// The launch of `kernel` (which conv1d_kernel_rejection has accepted for this width) on device
// buffers; uploads the mask to constant memory for the rungs that read it there.
template <class T>
Conv1dLaunch<T> plan_launch(std::string_view kernel, const T* x, const T* mask, T* y,
                            std::int64_t n, int width) {
  Conv1dLaunch<T> launch{std::string(kernel), x, mask, y, n, width};
  if (kernel == "constant_mask" || kernel == "tiled") upload_constant_mask(mask, width);
  if (n == 0) return launch;
  if (kernel == "streaming") {
    // x must be 16-byte aligned for the vector loads; cudaMalloc gives 256 bytes.
    if (reinterpret_cast<std::uintptr_t>(x) % 16 != 0)
      fail(ErrorCategory::internal, "conv1d streaming: input not 16-byte aligned");
    constexpr int vec = 16 / int(sizeof(T));
    const int left = width / 2, right = width - 1 - left;
    launch.shared_bytes = std::size_t((left + vec - 1) / vec * vec + kernels::conv1d_streaming_tile<T> +
                                      (right + vec - 1) / vec * vec) * sizeof(T);
    int device = 0, sms = 0, blocks_per_sm = 0;
    GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
    GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, kernels::conv1d_streaming_kernel<T>, kThreadsPerBlock, launch.shared_bytes));
    const std::int64_t tiles = ceil_div(n, kernels::conv1d_streaming_tile<T>);
    // As many blocks as are resident at once (each loops over tiles), never more than tiles.
    launch.grid = unsigned(std::min<std::int64_t>(tiles, std::int64_t(sms) * std::max(blocks_per_sm, 1)));
    return launch;
  }
  const std::int64_t blocks = ceil_div(n, kThreadsPerBlock);  // one thread per output
  if (blocks > INT_MAX)
    fail(ErrorCategory::usage, "conv1d kernel '" + std::string(kernel) + "': " + std::to_string(n) +
                                   " outputs need more blocks than a grid holds (use streaming)");
  launch.grid = unsigned(blocks);
  if (kernel == "tiled") launch.shared_bytes = std::size_t(kThreadsPerBlock + width - 1) * sizeof(T);
  return launch;
}

// ---- benchmark data --------------------------------------------------------------------

// Uniform in [-1, 1) from the top 53 bits of a hash of (seed, i): mixed signs, never all zero.
__host__ __device__ inline double uniform_pm1(std::uint64_t seed, std::uint64_t i) {
  return double(splitmix64(seed * 0x2545f4914f6cdd1dull + i) >> 11) * 0x1p-52 - 1.0;
}

template <class T>
__global__ void fill_uniform_kernel(T* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    x[i] = T(uniform_pm1(seed, std::uint64_t(i)));
}

template <class T>
Conv1dBench bench_typed(std::int64_t n, std::int64_t width, int warmup, int reps, std::uint64_t seed) {
  Conv1dBench report{dtype_of<T>, n, width, warmup, reps, {}};
  DeviceBuffer<T> x{std::size_t(n)}, y{std::size_t(n)}, mask{std::size_t(width)};
  fill_uniform_kernel<T><<<1024, 256>>>(x.data(), n, seed);
  check_launch("fill_uniform_kernel");
  std::vector<T> host_x(static_cast<std::size_t>(n)), host_mask(static_cast<std::size_t>(width)),
      host_y(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < width; ++j) host_mask[j] = T(uniform_pm1(seed + 1, std::uint64_t(j)));
  mask.copy_from_host(host_mask.data(), host_mask.size());
  x.copy_to_host(host_x.data(), host_x.size());

  // Outputs checked against the CPU reference: both ends (the zero padding) and a random
  // sample in between.
  std::vector<std::int64_t> sample;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4096); ++i) sample.push_back(i);
  for (std::int64_t i = std::max<std::int64_t>(4096, n - 4096); i < n; ++i) sample.push_back(i);
  for (std::uint64_t k = 0; k < 65536 && n > 8192; ++k)
    sample.push_back(std::int64_t(splitmix64(seed + 7 + k) % std::uint64_t(n)));

  const double bytes = 2.0 * double(n) * sizeof(T);
  for (const auto& info : conv1d_kernels()) {
    Conv1dBenchRow row;
    row.kernel = std::string(info.name);
    row.bytes = bytes;
    if (auto why = conv1d_kernel_rejection(info.name, dtype_of<T>, width)) {
      row.skipped = *why;
      report.rows.push_back(row);
      continue;
    }
    GEMMKIT_CUDA_CHECK(cudaMemset(y.data(), 0xff, y.bytes()));  // NaN: a rung must write every output
    const Conv1dLaunch<T> launch = plan_launch<T>(info.name, x.data(), mask.data(), y.data(), n, int(width));
    const DeviceTiming t = time_on_device(launch, warmup, reps);
    row.median_s = t.median_s;
    row.min_s = t.min_s;
    row.reps = t.reps;
    y.copy_to_host(host_y.data(), host_y.size());
    for (std::int64_t i : sample) {
      const double expect = double(static_cast<T>(
          conv1d_detail::reference_at(host_x.data(), n, host_mask.data(), width, i)));
      const double error = std::fabs(double(host_y[i]) - expect);
      const double bound = conv1d_error_bound(host_x.data(), n, host_mask.data(), width, i);
      const double ratio = error == 0 ? 0 : bound > 0 ? error / bound : INFINITY;
      row.max_error_ratio = std::max(row.max_error_ratio, std::isnan(ratio) ? INFINITY : ratio);
    }
    row.checked = std::int64_t(sample.size());
    report.rows.push_back(row);
  }
  const DeviceTiming copy = time_device_copy(std::size_t(n) * sizeof(T), warmup, reps);
  Conv1dBenchRow copy_row;
  copy_row.kernel = "device_copy";
  copy_row.median_s = copy.median_s;
  copy_row.min_s = copy.min_s;
  copy_row.reps = copy.reps;
  copy_row.bytes = bytes;
  report.rows.push_back(copy_row);
  return report;
}

}  // namespace
}  // namespace cuda

namespace conv1d_detail {

template <class T>
void run_on_device(std::string_view kernel, const T* x, std::int64_t n, const T* mask,
                   std::int64_t width, T* y) {
  cuda::DeviceBuffer<T> dx{std::size_t(n)}, dmask{std::size_t(width)}, dy{std::size_t(n)};
  dx.copy_from_host(x, std::size_t(n));
  dmask.copy_from_host(mask, std::size_t(width));
  cuda::plan_launch<T>(kernel, dx.data(), dmask.data(), dy.data(), n, int(width))();
  dy.copy_to_host(y, std::size_t(n));  // synchronises: a fault in the kernel surfaces here
}

template void run_on_device<float>(std::string_view, const float*, std::int64_t, const float*,
                                   std::int64_t, float*);
template void run_on_device<double>(std::string_view, const double*, std::int64_t, const double*,
                                    std::int64_t, double*);

}  // namespace conv1d_detail

Conv1dBench conv1d_bench(DType dtype, std::int64_t n, std::int64_t width, int warmup, int reps,
                         std::uint64_t seed) {
  if (n < 1) fail(ErrorCategory::usage, "conv1d --bench: --n must be at least 1");
  if (width < 1 || width > INT_MAX)
    fail(ErrorCategory::usage, "conv1d --bench: --width must be between 1 and 2^31-1");
  require_cuda_device();
  if (dtype == DType::f32) return cuda::bench_typed<float>(n, width, warmup, reps, seed);
  if (dtype == DType::f64) return cuda::bench_typed<double>(n, width, warmup, reps, seed);
  fail(ErrorCategory::usage, "conv1d runs in f32 or f64, not " + std::string(dtype_name(dtype)));
}

}  // namespace gemmkit

// conv1d on the device: the launcher of every rung on the caller's stream (the mask carried in
// launch parameters, or staged into the call's workspace; nothing kept between calls), the
// host API's device path, and the benchmark that times every rung beside the
// device-to-device copy in the same run.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "arith/splitmix.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_timing.hpp"
#include "ops/conv1d/cuda/01_basic.cuh"
#include "ops/conv1d/cuda/02_constant_mask.cuh"
#include "ops/conv1d/cuda/03_tiled.cuh"
#include "ops/conv1d/cuda/04_streaming.cuh"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "ops/conv1d/conv1d_device.hpp"
#include "ops/cuda_entry.hpp"

namespace gemmkit {
namespace cuda {
namespace {

using conv1d_detail::kThreadsPerBlock;
static_assert(kernels::conv1d_streaming_threads == kThreadsPerBlock);
static_assert(kernels::conv1d_streaming_tile<float> == conv1d_detail::kStreamingTile<float> &&
                  kernels::conv1d_streaming_tile<double> == conv1d_detail::kStreamingTile<double>,
              "the host's shared-memory check must use the kernel's tile");

constexpr int kMaxTaps = int(kConv1dConstantMaskTaps);

// Calls f(std::integral_constant<int, K>{}) with the smallest parameter capacity K that holds
// `taps` taps (taps <= kConv1dConstantMaskTaps).
template <class F>
void with_capacity(int taps, F&& f) {
  using kernels::conv1d_mask_capacities;
  if (taps <= conv1d_mask_capacities[0]) f(std::integral_constant<int, conv1d_mask_capacities[0]>{});
  else if (taps <= conv1d_mask_capacities[1]) f(std::integral_constant<int, conv1d_mask_capacities[1]>{});
  else f(std::integral_constant<int, conv1d_mask_capacities[2]>{});
}

template <class T, int kTaps>
kernels::Conv1dMaskParams<T, kTaps> pack_taps(const T* host, int count) {
  kernels::Conv1dMaskParams<T, kTaps> params{};
  std::copy(host, host + count, params.taps);
  return params;
}

// Writes the taps, which arrive as the launch's parameters, to global memory.
template <class T, int kTaps>
__global__ void stage_taps_kernel(const __grid_constant__ kernels::Conv1dMaskParams<T, kTaps> params,
                                  T* dst, int count) {
  const int i = int(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = params.taps[i];
}

// The host mask into device memory at `dst`, in stream order and without waiting: each
// launch carries up to kMaxTaps taps in its parameters, so the caller's buffer may be reused
// at once and no pinned staging buffer or host synchronisation is needed.
template <class T, class Emit>
void stage_taps(const T* host, int width, T* dst, const Emit& emit) {
  constexpr bool run = std::is_same_v<Emit, LaunchEmit>;  // a plan reads no mask
  for (int offset = 0; offset < width; offset += kMaxTaps) {
    const int count = std::min(kMaxTaps, width - offset);
    with_capacity(count, [&](auto capacity) {
      constexpr int K = decltype(capacity)::value;
      emit.template launch<stage_taps_kernel<T, K>>(
          unsigned(ceil_div(count, kThreadsPerBlock)), kThreadsPerBlock, 0, "the mask into global memory",
          "thread i = blockIdx.x * blockDim.x + threadIdx.x writes tap i of the launch's parameters to global memory",
          run ? pack_taps<T, K>(host + offset, count) : kernels::Conv1dMaskParams<T, K>{}, dst + offset, count);
      if constexpr (run) check_launch("conv1d stage_taps_kernel");
    });
  }
}

// Blocks for one thread per output (rungs 1-3).
unsigned output_grid(std::string_view kernel, std::int64_t n) {
  const std::int64_t blocks = ceil_div(n, kThreadsPerBlock);
  if (blocks > INT_MAX)
    fail(ErrorCategory::usage, "conv1d kernel '" + std::string(kernel) + "': " + std::to_string(n) +
                                   " outputs need more blocks than a grid holds (use streaming)");
  return unsigned(blocks);
}

// Dynamic shared memory of one streaming block: the tile and its halos rounded out to vectors.
template <class T>
std::size_t streaming_shared_bytes(int width) {
  constexpr int vec = 16 / int(sizeof(T));
  const int left = width / 2, right = width - 1 - left;
  return std::size_t((left + vec - 1) / vec * vec + kernels::conv1d_streaming_tile<T> +
                     (right + vec - 1) / vec * vec) * sizeof(T);
}

constexpr const char* kOutputText =
    "one output per thread: i = blockIdx.x * blockDim.x + threadIdx.x, y[i] = sum over taps j of "
    "x[i - width / 2 + j] * mask[j] (x outside 0..n-1 counts 0)";

// The launches of rung `kernel` (accepted for this problem) through `emit`: LaunchEmit
// queues them, PlanEmit describes them. The global-memory rungs read the taps staged in
// `workspace` (width values of T). per_sm(shared): blocks of the streaming kernel one SM
// holds with that much dynamic shared memory.
template <class T, class Emit, class PerSm>
void rung_launches(std::string_view kernel, const T* x, std::int64_t n, const T* host_mask, int width,
                   T* y, void* workspace, int sm_count, PerSm per_sm, const Emit& emit) {
  constexpr bool run = std::is_same_v<Emit, LaunchEmit>;  // a plan reads no mask
  if (n == 0) return;
  if (kernel == "constant_mask" || kernel == "tiled") {
    const unsigned grid = output_grid(kernel, n);
    with_capacity(width, [&](auto capacity) {
      constexpr int K = decltype(capacity)::value;
      const auto mask = run ? pack_taps<T, K>(host_mask, width) : kernels::Conv1dMaskParams<T, K>{};
      if (kernel == "constant_mask") {
        emit.template launch<kernels::conv1d_constant_mask_kernel<T, K>>(
            grid, kThreadsPerBlock, 0, "the convolution", "as basic, the mask in the launch's parameters (constant memory)",
            x, y, n, width, mask);
      } else {
        const std::size_t shared = std::size_t(kThreadsPerBlock + width - 1) * sizeof(T);
        emit.template launch<kernels::conv1d_tiled_kernel<T, K>>(
            grid, kThreadsPerBlock, shared, "the convolution",
            "the block first stages x[blockIdx.x * 256 - width / 2 ...], its 256 outputs' inputs and halo, in shared "
            "memory; then output i = blockIdx.x * blockDim.x + threadIdx.x per thread, as basic",
            x, y, n, width, mask);
      }
    });
    if constexpr (run) check_launch(std::string(kernel).c_str());
    return;
  }
  T* taps = static_cast<T*>(workspace);
  stage_taps(host_mask, width, taps, emit);
  if (kernel == "basic") {
    emit.template launch<kernels::conv1d_basic_kernel<T>>(output_grid(kernel, n), kThreadsPerBlock, 0,
                                                          "the convolution", kOutputText, x, taps, y, n, width);
    if constexpr (run) check_launch("basic");
    return;
  }
  // streaming: as many blocks as are resident at once (each loops over tiles), never more
  // than tiles. x is 16-byte aligned (the entry's precondition).
  const std::size_t shared = streaming_shared_bytes<T>(width);
  const std::int64_t tiles = ceil_div(n, kernels::conv1d_streaming_tile<T>);
  const std::int64_t resident = std::int64_t(std::max(sm_count, 1)) * std::max(per_sm(shared), 1);
  const unsigned grid = unsigned(std::min<std::int64_t>(tiles, resident));
  emit.template launch<kernels::conv1d_streaming_kernel<T>>(
      grid, kThreadsPerBlock, shared, "the convolution",
      "persistent: block b takes the tiles of outputs b, b + gridDim.x, ..., staging each tile's inputs and halo in "
      "shared memory with 16-byte loads; thread t computes outputs t, t + 256, ... of the tile",
      x, taps, y, n, width);
  if constexpr (run) check_launch("streaming");
}

template <class T>
void launch_rung(std::string_view kernel, const T* x, std::int64_t n, const T* host_mask, int width,
                 T* y, void* workspace, const Context& ctx, cudaStream_t s) {
  const auto per_sm = [](std::size_t shared) {
    int blocks = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, kernels::conv1d_streaming_kernel<T>, kThreadsPerBlock, shared));
    return blocks;
  };
  rung_launches<T>(kernel, x, n, host_mask, width, y, workspace, ctx.device_info().sm_count, per_sm, LaunchEmit{s});
}

template <class T>
std::vector<LaunchPlan> rung_plans(std::string_view kernel, std::int64_t n, int width, const LaunchQueries& q) {
  std::vector<LaunchPlan> out;
  const auto per_sm = [&q](std::size_t shared) {
    return q.blocks_per_sm(plan_of<kernels::conv1d_streaming_kernel<T>>({dim3(1), dim3(kThreadsPerBlock), shared}, "", ""));
  };
  auto* fake = reinterpret_cast<T*>(std::uintptr_t(1) << 32);  // never dereferenced
  rung_launches<T>(kernel, fake, n, nullptr, width, fake, fake, q.sm_count, per_sm, PlanEmit{&out});
  return out;
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
BenchReport bench_typed(std::int64_t n, std::int64_t width, int warmup, int reps, std::uint64_t seed) {
  BenchReport report;
  report.operation = "conv1d";
  report.backend = Backend::cuda;
  report.dtype = dtype_of<T>;
  report.bytes = 2.0 * double(n) * sizeof(T);  // n values read + n written (halo re-reads not counted)
  const auto row = [&](std::string kernel) {
    BenchRow r;
    r.operation = report.operation;
    r.kernel = std::move(kernel);
    r.size = "n = " + std::to_string(n) + ", width " + std::to_string(width);
    r.dtype = report.dtype;
    r.unit = RateUnit::gbs;
    return r;
  };
  const TimingOptions runs = fixed_runs(warmup, reps);
  DeviceBuffer<T> x{std::size_t(n)}, y{std::size_t(n)};
  fill_uniform_kernel<T><<<1024, 256>>>(x.data(), n, seed);
  check_launch("fill_uniform_kernel");
  std::vector<T> host_x(static_cast<std::size_t>(n)), host_mask(static_cast<std::size_t>(width)),
      host_y(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < width; ++j) host_mask[j] = T(uniform_pm1(seed + 1, std::uint64_t(j)));
  x.copy_to_host(host_x.data(), host_x.size());

  // Outputs checked against the CPU reference: both ends (the zero padding) and a random
  // sample in between.
  std::vector<std::int64_t> sample;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4096); ++i) sample.push_back(i);
  for (std::int64_t i = std::max<std::int64_t>(4096, n - 4096); i < n; ++i) sample.push_back(i);
  for (std::uint64_t k = 0; k < 65536 && n > 8192; ++k)
    sample.push_back(std::int64_t(splitmix64(seed + 7 + k) % std::uint64_t(n)));

  Context ctx(Backend::cuda);
  for (const auto& info : conv1d_registry().entries()) {
    if (info.backend != Backend::cuda) continue;
    BenchRow r = row(info.name);
    r.rung = info.rung;
    if (auto why = conv1d_kernel_rejection(info.name, dtype_of<T>, width)) {
      r.skipped = true;
      r.note = *why;
      report.rows.push_back(r);
      continue;
    }
    GEMMKIT_CUDA_CHECK(cudaMemset(y.data(), 0xff, y.bytes()));  // NaN: a rung must write every output
    DeviceBuffer<unsigned char> workspace(conv1d_workspace_bytes(ctx, dtype_of<T>, n, width, info.name));
    const auto launch = [&] {
      conv1d(ctx, x.data(), n, host_mask.data(), width, y.data(), nullptr, info.name,
             Workspace{workspace.data(), workspace.bytes()});
    };
    record_runs(r, {time_on_device(nullptr, runs, launch), {}}, report.bytes, false);
    y.copy_to_host(host_y.data(), host_y.size());
    double worst = 0;  // max |y - reference| / bound over the sample
    for (std::int64_t i : sample) {
      const double expect = double(static_cast<T>(
          conv1d_detail::reference_at(host_x.data(), n, host_mask.data(), width, i)));
      const double error = std::fabs(double(host_y[i]) - expect);
      const double bound = conv1d_error_bound(host_x.data(), n, host_mask.data(), width, i);
      const double ratio = error == 0 ? 0 : bound > 0 ? error / bound : INFINITY;
      worst = std::max(worst, std::isnan(ratio) ? INFINITY : ratio);
    }
    r.check.error = worst;
    r.check.tolerance = 1;
    r.check.passed = worst <= 1.0;
    r.check.check = "max |y - reference| / bound over " + std::to_string(sample.size()) + " outputs";
    r.conv1d = Conv1dBenchFacts{std::int64_t(sample.size())};
    report.rows.push_back(r);
  }
  BenchRow& copy = report.copy.emplace(row("device_copy"));
  record_runs(copy, {time_device_copy(nullptr, std::size_t(n) * sizeof(T), runs), {}}, report.bytes, false);
  set_ratios(report.rows.begin(), report.rows.end(), nullptr, copy.timing.median_s);
  return report;
}

}  // namespace
}  // namespace cuda

namespace conv1d_detail {

namespace {

std::size_t cuda_workspace_bytes(std::string_view kernel, const Conv1dProblem& problem, const Context&) {
  // The global-memory rungs read the taps from the workspace; the others carry them.
  if (kernel == "basic" || kernel == "streaming") return std::size_t(problem.width) * dtype_size(problem.dtype);
  return 0;
}

std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const Conv1dProblem& p, const LaunchQueries& q) {
  if (p.dtype == DType::f32) return cuda::rung_plans<float>(kernel, p.n, int(p.width), q);
  return cuda::rung_plans<double>(kernel, p.n, int(p.width), q);
}

void cuda_run(std::string_view kernel, const Conv1dProblem& p, const KernelLaunch& launch) {
  const cuda::DeviceScope scope(launch.context.device());
  if (p.dtype == DType::f32)
    cuda::launch_rung<float>(kernel, static_cast<const float*>(p.x), p.n, static_cast<const float*>(p.mask),
                             int(p.width), static_cast<float*>(p.y), launch.workspace.data,
                             launch.context, launch.stream);
  else
    cuda::launch_rung<double>(kernel, static_cast<const double*>(p.x), p.n, static_cast<const double*>(p.mask),
                              int(p.width), static_cast<double*>(p.y), launch.workspace.data,
                              launch.context, launch.stream);
}

Conv1dKernel cuda_entry(std::string name, int rung, std::string summary, int auto_priority) {
  // sm_70 and up: launches carry up to 32 KiB of parameters (the mask).
  Conv1dKernel e = detail::cuda_operation_entry<Conv1dProblem>(name, rung, std::move(summary), auto_priority,
                                                               KernelRole::ladder, 70, cuda_workspace_bytes,
                                                               cuda_run, cuda_plans);
  e.precondition = [name](const Conv1dProblem& p) -> std::optional<std::string> {
    if (auto why = conv1d_kernel_rejection(name, p.dtype, p.width)) return why;
    // The streaming rung's 16-byte loads; cudaMalloc gives 256-byte alignment.
    if (name == "streaming" && reinterpret_cast<std::uintptr_t>(p.x) % 16 != 0)
      return std::string("kernel 'streaming' reads x in 16-byte vectors: x must be 16-byte aligned");
    return std::nullopt;
  };
  return e;
}

}  // namespace

void register_cuda_kernels(Registry<Conv1dProblem>& r) {
  // auto: streaming wherever its halo fits; beyond that the work is dominated by the w
  // multiply-adds per output, and the basic rung takes any width.
  r.add(cuda_entry("basic", 1, "the teaching texts' kernel: one thread per output, mask in global memory", 1));
  r.add(cuda_entry("constant_mask", 2,
                   "the teaching texts' second kernel: the mask in constant memory (the launch's parameters)", 0));
  r.add(cuda_entry("tiled", 3, "a block's inputs and halo cells staged once in shared memory", 0));
  r.add(cuda_entry("streaming", 4,
                   "16-byte loads, 8 (f32) / 4 (f64) outputs per thread, next tile prefetched, grid "
                   "sized to the SMs",
                   10));
}

template <class T>
void run_host_on_device(Context& ctx, std::string_view kernel, const T* x, std::int64_t n, const T* mask,
                        std::int64_t width, T* y) {
  const cuda::DeviceScope scope(ctx.device());
  cuda::DeviceBuffer<T> dx{std::size_t(n)}, dy{std::size_t(n)};
  dx.copy_from_host(x, std::size_t(n));
  conv1d(ctx, dx.data(), n, mask, width, dy.data(), nullptr, kernel);
  dy.copy_to_host(y, std::size_t(n));  // waits: a fault in the kernel surfaces here
}

template void run_host_on_device<float>(Context&, std::string_view, const float*, std::int64_t, const float*,
                                        std::int64_t, float*);
template void run_host_on_device<double>(Context&, std::string_view, const double*, std::int64_t,
                                         const double*, std::int64_t, double*);

BenchReport bench_on_device(DType dtype, std::int64_t n, std::int64_t width, int warmup, int reps,
                            std::uint64_t seed) {
  if (dtype == DType::f32) return cuda::bench_typed<float>(n, width, warmup, reps, seed);
  if (dtype == DType::f64) return cuda::bench_typed<double>(n, width, warmup, reps, seed);
  fail(ErrorCategory::usage, "conv1d runs in f32 or f64, not " + std::string(dtype_name(dtype)));
}

}  // namespace conv1d_detail
}  // namespace gemmkit

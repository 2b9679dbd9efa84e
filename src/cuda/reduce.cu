// Launchers of the reduction ladder and of CUB's DeviceReduce, the device entry points by
// kernel name, and the benchmark (every rung, CUB and the D2D copy in one process).
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cuda/check.hpp"
#include "cuda/device_buffer.hpp"
#include "core/splitmix.hpp"
#include "cuda/device_timing.hpp"
#include "cuda/kernels/reduce/00_fold.cuh"
#include "cuda/kernels/reduce/01_grid_stride.cuh"
#include "cuda/kernels/reduce/02_shared_tree.cuh"
#include "cuda/kernels/reduce/03_any_blocks.cuh"
#include "cuda/kernels/reduce/04_unrolled.cuh"
#include "cuda/kernels/reduce/05_warp_shuffle.cuh"
#include "cuda/kernels/reduce/06_vec16_two_pass.cuh"
#include "gemmkit/device.hpp"
#include "gemmkit/reduce.hpp"

namespace gemmkit {
namespace {

using namespace cuda::reduce_kernels;
using cuda::DeviceBuffer;

// Kernel ids: the ladder's rungs, CUB, and bench-only variants of rung 6.
enum class Kernel { fold, grid_stride, shared_tree, any_blocks, unrolled, warp_shuffle, vec16, cub,
                    vec16_unroll2, vec16_unroll8, vec16_ldg };

Kernel kernel_id(std::string_view name) {
  static const std::pair<std::string_view, Kernel> names[] = {
      {"reduce0_fold", Kernel::fold},         {"reduce1_grid_stride", Kernel::grid_stride},
      {"reduce2_shared_tree", Kernel::shared_tree}, {"reduce3_any_blocks", Kernel::any_blocks},
      {"reduce4_unrolled", Kernel::unrolled}, {"warp_shuffle", Kernel::warp_shuffle},
      {"vec16_two_pass", Kernel::vec16},      {"cub", Kernel::cub},
      {"vec16_unroll2", Kernel::vec16_unroll2}, {"vec16_unroll8", Kernel::vec16_unroll8},
      {"vec16_ldg", Kernel::vec16_ldg}};
  if (name == "auto" || name.empty()) name = kReduceAutoKernel;
  for (const auto& [text, id] : names)
    if (text == name) return id;
  fail(ErrorCategory::usage, "reduce: unknown kernel '" + std::string(name) + "'");
}

constexpr int kThreads = 256;                   // block size of every first pass
constexpr unsigned kSeedGrid = 256;             // rungs 1-2: the seeds' 256 x 256 threads
constexpr std::size_t kSeedThreads = std::size_t(kSeedGrid) * kThreads;

int sm_count() {
  int device = 0, sms = 0;
  GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
  GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>(std::max<std::size_t>(1, (threads + kThreads - 1) / kThreads));
}

// For CUB's norm2: x -> x*x in double.
template <class T>
struct SquareToDouble {
  __host__ __device__ double operator()(T x) const { return double(x) * double(x); }
};

// One kernel for one length: its workspace, allocated once, and its launches. launch()
// enqueues everything on the default stream and leaves the final accumulator at result().
template <class Op>
class ReducePlan {
 public:
  using T = typename Op::Value;
  using Acc = typename Op::Acc;

  ReducePlan(Kernel kernel, std::size_t n) : kernel_(kernel), n_(n), sms_(sm_count()) {
    // Grids of rungs 3-5 are a whole number of blocks per SM, and at least 64 blocks
    // (16384 threads: the error bound in reduce.hpp counts on it).
    per_sm4_ = std::max(4u * unsigned(sms_), 64u);
    per_sm8_ = std::max(8u * unsigned(sms_), 64u);
    std::size_t scratch = 1;
    switch (kernel_) {
      case Kernel::fold: scratch = std::max<std::size_t>(1, (n + 1) / 2); break;
      case Kernel::grid_stride: scratch = kSeedThreads + kThreads; break;
      case Kernel::shared_tree: scratch = kSeedGrid; break;
      case Kernel::any_blocks:
      case Kernel::unrolled: scratch = per_sm4_; break;
      case Kernel::warp_shuffle: scratch = per_sm8_; break;
      case Kernel::vec16: vec16_grid(&vec16_partials<Op, 4, true>); scratch = vec_blocks_; break;
      case Kernel::vec16_unroll2: vec16_grid(&vec16_partials<Op, 2, true>); scratch = vec_blocks_; break;
      case Kernel::vec16_unroll8: vec16_grid(&vec16_partials<Op, 8, true>); scratch = vec_blocks_; break;
      case Kernel::vec16_ldg: vec16_grid(&vec16_partials<Op, 4, false>); scratch = vec_blocks_; break;
      case Kernel::cub: break;
    }
    scratch_ = DeviceBuffer<Acc>(scratch);
    result_ = DeviceBuffer<Acc>(1);
    if (kernel_ == Kernel::cub) {
      std::size_t bytes = 0;
      cub_call(nullptr, bytes, nullptr);
      cub_temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 1));
      cub_bytes_ = bytes;
    }
  }

  void launch(const T* x) {
    if (n_ == 0) {  // nothing to read: the identity
      const Acc identity = Op::identity();
      GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(result_.data(), &identity, sizeof(Acc), cudaMemcpyHostToDevice));
      GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(0));
      return;
    }
    Acc* scratch = scratch_.data();
    Acc* result = result_.data();
    switch (kernel_) {
      case Kernel::fold: {
        std::size_t len = n_, half = (len + 1) / 2;
        fold_halves<Op, true><<<blocks_for(half), kThreads>>>(x, half == 1 ? result : scratch, len, half);
        for (len = half; len > 1; len = half) {
          half = (len + 1) / 2;
          fold_halves<Op, false><<<blocks_for(half), kThreads>>>(scratch, half == 1 ? result : scratch, len, half);
        }
        break;
      }
      case Kernel::grid_stride:
        grid_stride_partials<Op, true><<<kSeedGrid, kThreads>>>(x, scratch, n_);
        grid_stride_partials<Op, false><<<1, kThreads>>>(scratch, scratch + kSeedThreads, kSeedThreads);
        grid_stride_partials<Op, false><<<1, 1>>>(scratch + kSeedThreads, result, kThreads);
        break;
      case Kernel::shared_tree:
        shared_tree_partials<Op, true><<<kSeedGrid, kThreads, kThreads * sizeof(Acc)>>>(x, scratch, n_);
        shared_tree_partials<Op, false><<<1, kSeedGrid, kSeedGrid * sizeof(Acc)>>>(scratch, result, kSeedGrid);
        break;
      case Kernel::any_blocks: {
        const unsigned second = std::min(per_sm4_, 1024u);
        any_block_partials<Op, true><<<per_sm4_, kThreads, kThreads * sizeof(Acc)>>>(x, scratch, n_);
        any_block_partials<Op, false><<<1, second, second * sizeof(Acc)>>>(scratch, result, per_sm4_);
        break;
      }
      case Kernel::unrolled:
        unrolled_partials<Op, true, kThreads><<<per_sm4_, kThreads>>>(x, scratch, n_);
        unrolled_partials<Op, false, 512><<<1, 512>>>(scratch, result, per_sm4_);
        break;
      case Kernel::warp_shuffle:
        warp_shuffle_partials<Op, true><<<per_sm8_, kThreads>>>(x, scratch, n_);
        warp_shuffle_partials<Op, false><<<1, 1024>>>(scratch, result, per_sm8_);
        break;
      case Kernel::vec16: vec16_launch<4, true>(x); break;
      case Kernel::vec16_unroll2: vec16_launch<2, true>(x); break;
      case Kernel::vec16_unroll8: vec16_launch<8, true>(x); break;
      case Kernel::vec16_ldg: vec16_launch<4, false>(x); break;
      case Kernel::cub: {
        std::size_t bytes = cub_bytes_;
        cub_call(cub_temp_.data(), bytes, x);
        break;
      }
    }
    GEMMKIT_CUDA_CHECK(cudaGetLastError());
  }

  Acc result() const {
    Acc value;
    GEMMKIT_CUDA_CHECK(cudaMemcpy(&value, result_.data(), sizeof(Acc), cudaMemcpyDeviceToHost));
    return value;
  }

 private:
  // One wave: as many blocks as are resident at once, fewer when n is small.
  template <class KernelFn>
  void vec16_grid(KernelFn fn) {
    int per_sm = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, kThreads, 0));
    const std::size_t wave = std::size_t(std::max(per_sm, 1)) * sms_;
    const std::size_t needed = blocks_for((n_ + Vec16<T>::kLanes - 1) / Vec16<T>::kLanes);
    vec_blocks_ = unsigned(std::min(wave, needed));
  }

  template <int kUnroll, bool kStreaming>
  void vec16_launch(const T* x) {
    vec16_partials<Op, kUnroll, kStreaming><<<vec_blocks_, kThreads>>>(x, n_, scratch_.data());
    warp_shuffle_partials<Op, false><<<1, 1024>>>(scratch_.data(), result_.data(), vec_blocks_);
  }

  void cub_call(void* temp, std::size_t& bytes, const T* x) {
    Acc* out = result_.data();
    cudaError_t status;
    if constexpr (std::is_same_v<Op, SumOp<T>>)
      status = cub::DeviceReduce::Sum(temp, bytes, x, out, n_);
    else if constexpr (std::is_same_v<Op, MinOp<T>>)
      status = cub::DeviceReduce::Min(temp, bytes, x, out, n_);
    else if constexpr (std::is_same_v<Op, MaxOp<T>>)
      status = cub::DeviceReduce::Max(temp, bytes, x, out, n_);
    else
      status = cub::DeviceReduce::TransformReduce(temp, bytes, x, out, n_, ::cuda::std::plus<>{},
                                                  SquareToDouble<T>{}, 0.0);
    GEMMKIT_CUDA_CHECK(status);
  }

  Kernel kernel_;
  std::size_t n_;
  int sms_;
  unsigned per_sm4_ = 0, per_sm8_ = 0, vec_blocks_ = 1;
  DeviceBuffer<Acc> scratch_, result_;
  DeviceBuffer<unsigned char> cub_temp_;
  std::size_t cub_bytes_ = 0;
};

// The accumulator turned into the answer: sqrt for norm2, then rounded to T once.
template <class Op>
typename Op::Value finish(typename Op::Acc acc) {
  if constexpr (std::is_same_v<Op, SumSquaresOp<typename Op::Value>>)
    return static_cast<typename Op::Value>(std::sqrt(acc));
  else
    return acc;
}

template <class Op>
typename Op::Value run_once(Kernel kernel, const typename Op::Value* x, std::size_t n) {
  ReducePlan<Op> plan(kernel, n);
  plan.launch(x);
  return finish<Op>(plan.result());
}

template <class T>
T dispatch_op(Kernel kernel, const T* x, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return run_once<SumOp<T>>(kernel, x, n);
    case ReduceOp::min: return run_once<MinOp<T>>(kernel, x, n);
    case ReduceOp::max: return run_once<MaxOp<T>>(kernel, x, n);
    case ReduceOp::norm2: return run_once<SumSquaresOp<T>>(kernel, x, n);
  }
  return T(0);
}

// Values in [-1, 1) from a hash of (seed, index): mixed signs, reproducible, made on the GPU.
template <class T>
__global__ void fill_uniform(T* x, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t z = splitmix64(seed + 0x9e3779b97f4a7c15ull * i);
    x[i] = T(double(z >> 11) * 0x1.0p-52 - 1.0);
  }
}

template <class Op>
void bench_kernels(ReduceBenchReport& report, const typename Op::Value* x, int warmup, int reps) {
  using Acc = typename Op::Acc;
  std::vector<std::pair<std::string, int>> entries;
  for (const auto& k : reduce_kernels()) entries.emplace_back(k.name, k.rung);
  // Variants of rung 6, timed for the record (how much the unroll and the cache hint matter).
  for (const char* variant : {"vec16_unroll2", "vec16_unroll8", "vec16_ldg"}) entries.emplace_back(variant, 6);
  for (const auto& [name, rung] : entries) {
    ReducePlan<Op> plan(kernel_id(name), report.n);
    bool same = true;
    bool first = true;
    Acc first_value{};
    // Each timed launch is followed (outside the timing) by a look at its bits: the
    // median and the determinism check come from the same runs.
    std::vector<double> seconds;
    for (int i = 0; i < warmup; ++i) plan.launch(x);
    GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
    cuda::Event start, stop;
    for (int i = 0; i < std::max(reps, 1); ++i) {
      GEMMKIT_CUDA_CHECK(cudaEventRecord(start.get()));
      plan.launch(x);
      GEMMKIT_CUDA_CHECK(cudaEventRecord(stop.get()));
      seconds.push_back(cuda::elapsed_seconds(start, stop));
      const Acc value = plan.result();
      if (first) first_value = value, first = false;
      else same = same && std::memcmp(&value, &first_value, sizeof(Acc)) == 0;
    }
    const cuda::DeviceTiming t = cuda::summarize(seconds);
    report.rows.push_back({name, rung, t.median_s, t.min_s, t.reps,
                           static_cast<double>(finish<Op>(first_value)), same});
  }
}

template <class T>
void bench_typed(ReduceBenchReport& report, int warmup, int reps, std::uint64_t seed) {
  DeviceBuffer<T> x(report.n);
  fill_uniform<T><<<1024, 256>>>(x.data(), report.n, seed);
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  const cuda::DeviceTiming copy = cuda::time_device_copy(report.bytes, warmup, reps);
  report.copy_median_s = copy.median_s;
  report.copy_min_s = copy.min_s;
  switch (report.op) {
    case ReduceOp::sum: bench_kernels<SumOp<T>>(report, x.data(), warmup, reps); break;
    case ReduceOp::min: bench_kernels<MinOp<T>>(report, x.data(), warmup, reps); break;
    case ReduceOp::max: bench_kernels<MaxOp<T>>(report, x.data(), warmup, reps); break;
    case ReduceOp::norm2: bench_kernels<SumSquaresOp<T>>(report, x.data(), warmup, reps); break;
  }
}

}  // namespace

bool reduce_cuda_available() { return cuda_device_available(); }

template <class T>
T reduce_cuda_device(const T* x, std::size_t n, ReduceOp op, std::string_view kernel) {
  return dispatch_op(kernel_id(kernel), x, n, op);
}

template <class T>
T reduce_cuda(const T* x, std::size_t n, ReduceOp op, std::string_view kernel) {
  DeviceBuffer<T> device(n);
  if (n) device.copy_from_host(x, n);
  return reduce_cuda_device(device.data(), n, op, kernel);
}

template float reduce_cuda_device<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda_device<double>(const double*, std::size_t, ReduceOp, std::string_view);
template float reduce_cuda<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda<double>(const double*, std::size_t, ReduceOp, std::string_view);

ReduceBenchReport reduce_bench(std::size_t n, DType dtype, ReduceOp op, int warmup, int reps,
                               std::uint64_t seed) {
  require_cuda_device();
  if (n == 0) fail(ErrorCategory::usage, "reduce --bench: --n must be at least 1");
  ReduceBenchReport report;
  report.n = n;
  report.dtype = dtype;
  report.op = op;
  report.warmup = warmup;
  report.reps = reps;
  if (dtype == DType::f32) {
    report.bytes = n * sizeof(float);
    bench_typed<float>(report, warmup, reps, seed);
  } else if (dtype == DType::f64) {
    report.bytes = n * sizeof(double);
    bench_typed<double>(report, warmup, reps, seed);
  } else {
    fail(ErrorCategory::usage, "reduce --bench: --dtype must be f32 or f64");
  }
  return report;
}

}  // namespace gemmkit

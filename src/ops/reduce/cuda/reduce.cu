// Launchers of the reduction ladder and of CUB's DeviceReduce on the caller's stream and
// workspace (nothing allocated, nothing kept between calls), the host API's device path, and
// the benchmark (every rung, CUB and the D2D copy in one process).
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "arith/splitmix.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_timing.hpp"
#include "launch/explain_launch.hpp"
#include "ops/reduce/cuda/00_fold.cuh"
#include "ops/reduce/cuda/01_grid_stride.cuh"
#include "ops/reduce/cuda/02_shared_tree.cuh"
#include "ops/reduce/cuda/03_any_blocks.cuh"
#include "ops/reduce/cuda/04_unrolled.cuh"
#include "ops/reduce/cuda/05_warp_shuffle.cuh"
#include "ops/reduce/cuda/06_vec16_two_pass.cuh"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/reduce.hpp"
#include "ops/cuda_entry.hpp"
#include "ops/reduce/reduce_device.hpp"

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
constexpr unsigned kSeedGrid = 256;             // rungs 1-2: the teaching texts' 256 x 256 threads
constexpr std::size_t kSeedThreads = std::size_t(kSeedGrid) * kThreads;

unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>(std::max<std::size_t>(1, (threads + kThreads - 1) / kThreads));
}

// For CUB's norm2: x -> x*x in double.
template <class T>
struct SquareToDouble {
  __host__ __device__ double operator()(T x) const { return double(x) * double(x); }
};

// The final accumulator turned into the answer, on the device: sqrt for norm2, rounded to T.
template <class Op>
__global__ void finish_kernel(const typename Op::Acc* acc, typename Op::Value* result) {
  if constexpr (std::is_same_v<Op, SumSquaresOp<typename Op::Value>>)
    *result = static_cast<typename Op::Value>(sqrt(*acc));
  else
    *result = static_cast<typename Op::Value>(*acc);
}

// An empty input: the identity (after finish: norm2 of nothing is 0).
template <class Op>
__global__ void identity_kernel(typename Op::Value* result) {
  *result = static_cast<typename Op::Value>(Op::identity());
}

// Blocks of a kernel one SM holds: the kernel's stub, and its name for a launch plan (asked
// of the context by the launcher, of explain's queries by the launch plans).
using PerSm = std::function<int(const void* function, const std::string& (*name)())>;

// Mapping texts of the launches (what each thread reads and writes).
constexpr const char* kStrideText =
    "thread id = blockIdx.x * blockDim.x + threadIdx.x; thread t combines x[t], x[t + S], x[t + 2S], ... "
    "(S = gridDim.x * blockDim.x, the grid's threads) in a register";
constexpr const char* kBlockText =
    "thread id = blockIdx.x * blockDim.x + threadIdx.x; each thread combines x[t], x[t + S], ... (S: the grid's "
    "threads), then the block combines its threads' values and thread 0 writes one value per block: out[blockIdx.x]";

// One kernel for one length on one device: the grid sizes and the workspace it needs, and
// its launches. It owns no memory: launch() gets the workspace and the stream, enqueues
// everything there and leaves the answer (type T) at `result`; plans() describes the same.
template <class Op>
class ReducePlan {
 public:
  using T = typename Op::Value;
  using Acc = typename Op::Acc;
  // The last pass writes the answer itself when it needs no conversion; else it writes an
  // accumulator into the workspace and finish_kernel converts it.
  static constexpr bool kDirect = std::is_same_v<Acc, T> && !std::is_same_v<Op, SumSquaresOp<T>>;

  // Occupancy asked once per context and kernel.
  ReducePlan(Kernel kernel, std::size_t n, const Context& ctx)
      : ReducePlan(kernel, n, ctx.device_info().sm_count, [&ctx](const void* fn, const std::string& (*)()) {
          return ctx.cached(fn, [fn] {
            int blocks = 0;
            GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, kThreads, 0));
            return blocks;
          });
        }) {}

  ReducePlan(Kernel kernel, std::size_t n, int sm_count, const PerSm& per_sm) : kernel_(kernel), n_(n) {
    const int sms = std::max(sm_count, 1);
    // Grids of rungs 3-5 are a whole number of blocks per SM, and at least 64 blocks
    // (16384 threads: the error bound in reduce.hpp counts on it).
    per_sm4_ = std::max(4u * unsigned(sms), 64u);
    per_sm8_ = std::max(8u * unsigned(sms), 64u);
    std::size_t scratch = 1;
    switch (kernel_) {
      case Kernel::fold: scratch = std::max<std::size_t>(1, (n + 1) / 2); break;
      case Kernel::grid_stride: scratch = kSeedThreads + kThreads; break;
      case Kernel::shared_tree: scratch = kSeedGrid; break;
      case Kernel::any_blocks:
      case Kernel::unrolled: scratch = per_sm4_; break;
      case Kernel::warp_shuffle: scratch = per_sm8_; break;
      case Kernel::vec16: vec16_grid<vec16_partials<Op, 4, true>>(sms, per_sm); scratch = vec_blocks_; break;
      case Kernel::vec16_unroll2: vec16_grid<vec16_partials<Op, 2, true>>(sms, per_sm); scratch = vec_blocks_; break;
      case Kernel::vec16_unroll8: vec16_grid<vec16_partials<Op, 8, true>>(sms, per_sm); scratch = vec_blocks_; break;
      case Kernel::vec16_ldg: vec16_grid<vec16_partials<Op, 4, false>>(sms, per_sm); scratch = vec_blocks_; break;
      case Kernel::cub: scratch = 0; break;
    }
    // Layout: [final accumulator][scratch partials][CUB's temporary storage], each aligned.
    scratch_offset_ = workspace_aligned(sizeof(Acc));
    cub_offset_ = scratch_offset_ + workspace_aligned(scratch * sizeof(Acc));
    if (kernel_ == Kernel::cub && n_ > 0) cub_call(nullptr, cub_bytes_, nullptr, nullptr, nullptr);
    bytes_ = cub_offset_ + cub_bytes_;
  }

  std::size_t workspace_bytes() const { return bytes_; }

  void launch(const T* x, T* answer, void* workspace, cudaStream_t s) const {
    launches(x, answer, workspace, cuda::LaunchEmit{s});
    GEMMKIT_CUDA_CHECK(cudaGetLastError());
  }

  // The launches, described (CUB's, inside the library, are not).
  std::vector<LaunchPlan> plans() const {
    std::vector<LaunchPlan> out;
    const auto fake = reinterpret_cast<T*>(std::uintptr_t(1) << 32);  // never dereferenced
    launches(fake, fake, fake, cuda::PlanEmit{&out});
    return out;
  }

 private:
  // Every launch of the kernel, in order, through `emit` (see launch/explain_launch.hpp).
  template <class Emit>
  void launches(const T* x, T* answer, void* workspace, const Emit& emit) const {
    if (n_ == 0) {  // nothing to read: the identity
      emit.template launch<identity_kernel<Op>>(1, 1, 0, "the empty input's answer", "one thread writes the identity", answer);
      return;
    }
    auto* base = static_cast<unsigned char*>(workspace);
    Acc* scratch = reinterpret_cast<Acc*>(base + scratch_offset_);
    Acc* result = kDirect ? reinterpret_cast<Acc*>(answer) : reinterpret_cast<Acc*>(base);
    switch (kernel_) {
      case Kernel::fold: {
        constexpr const char* text = "thread id = blockIdx.x * blockDim.x + threadIdx.x; thread i < half writes "
                                     "x[i] + x[i + half] (half = ceil(len / 2)), the middle value of an odd length alone";
        std::size_t len = n_, half = (len + 1) / 2;
        emit.template launch<fold_halves<Op, true>>(blocks_for(half), kThreads, 0, "the first fold, of the input", text,
                                                   x, half == 1 ? result : scratch, len, half);
        for (len = half; len > 1; len = half) {
          half = (len + 1) / 2;
          emit.template launch<fold_halves<Op, false>>(blocks_for(half), kThreads, 0, "a fold of the scratch", text,
                                                      scratch, half == 1 ? result : scratch, len, half);
        }
        break;
      }
      case Kernel::grid_stride:
        emit.template launch<grid_stride_partials<Op, true>>(kSeedGrid, kThreads, 0, "256 x 256 threads over the input",
                                                             kStrideText, x, scratch, n_);
        emit.template launch<grid_stride_partials<Op, false>>(1, kThreads, 0, "one block over their 65536 values",
                                                              kStrideText, scratch, scratch + kSeedThreads, kSeedThreads);
        emit.template launch<grid_stride_partials<Op, false>>(1, 1, 0, "one thread over the block's 256 values",
                                                              kStrideText, scratch + kSeedThreads, result, kThreads);
        break;
      case Kernel::shared_tree:
        emit.template launch<shared_tree_partials<Op, true>>(kSeedGrid, kThreads, kThreads * sizeof(Acc),
                                                             "the grid over the input", kBlockText, x, scratch, n_);
        emit.template launch<shared_tree_partials<Op, false>>(1, kSeedGrid, kSeedGrid * sizeof(Acc),
                                                              "one block over the block values", kBlockText, scratch,
                                                              result, kSeedGrid);
        break;
      case Kernel::any_blocks: {
        const unsigned second = std::min(per_sm4_, 1024u);
        emit.template launch<any_block_partials<Op, true>>(per_sm4_, kThreads, kThreads * sizeof(Acc),
                                                           "4 blocks per SM over the input", kBlockText, x, scratch, n_);
        emit.template launch<any_block_partials<Op, false>>(1, second, second * sizeof(Acc),
                                                            "one block over the block values", kBlockText, scratch,
                                                            result, per_sm4_);
        break;
      }
      case Kernel::unrolled:
        emit.template launch<unrolled_partials<Op, true, kThreads>>(per_sm4_, kThreads, 0, "4 blocks per SM over the input",
                                                                    kBlockText, x, scratch, n_);
        emit.template launch<unrolled_partials<Op, false, 512>>(1, 512, 0, "one block over the block values", kBlockText,
                                                                scratch, result, per_sm4_);
        break;
      case Kernel::warp_shuffle:
        emit.template launch<warp_shuffle_partials<Op, true>>(per_sm8_, kThreads, 0, "8 blocks per SM over the input",
                                                              kBlockText, x, scratch, n_);
        emit.template launch<warp_shuffle_partials<Op, false>>(1, 1024, 0, "one block over the block values", kBlockText,
                                                               scratch, result, per_sm8_);
        break;
      case Kernel::vec16: vec16_launches<4, true>(x, scratch, result, emit); break;
      case Kernel::vec16_unroll2: vec16_launches<2, true>(x, scratch, result, emit); break;
      case Kernel::vec16_unroll8: vec16_launches<8, true>(x, scratch, result, emit); break;
      case Kernel::vec16_ldg: vec16_launches<4, false>(x, scratch, result, emit); break;
      case Kernel::cub: {
        if constexpr (std::is_same_v<Emit, cuda::LaunchEmit>) {
          std::size_t bytes = cub_bytes_;
          cub_call(base + cub_offset_, bytes, x, result, emit.stream);
        }
        break;
      }
    }
    if constexpr (!kDirect)
      emit.template launch<finish_kernel<Op>>(1, 1, 0, "the answer from the accumulator",
                                              "one thread converts (and takes the square root for norm2)", result, answer);
  }

  // One wave: as many blocks as are resident at once, fewer when n is small.
  template <auto Fn>
  void vec16_grid(int sms, const PerSm& per_sm) {
    const int blocks = per_sm(reinterpret_cast<const void*>(Fn), &cuda::kernel_name<Fn>);
    const std::size_t wave = std::size_t(std::max(blocks, 1)) * sms;
    const std::size_t needed = blocks_for((n_ + Vec16<T>::kLanes - 1) / Vec16<T>::kLanes);
    vec_blocks_ = unsigned(std::min(wave, needed));
  }

  template <int kUnroll, bool kStreaming, class Emit>
  void vec16_launches(const T* x, Acc* scratch, Acc* result, const Emit& emit) const {
    emit.template launch<vec16_partials<Op, kUnroll, kStreaming>>(
        vec_blocks_, kThreads, 0, "one wave of blocks over the input",
        "thread id t = blockIdx.x * blockDim.x + threadIdx.x; thread t loads 16-byte chunks t, t + S, t + 2S, ... (S: "
        "the grid's threads), several in flight at once, then the block combines by warp shuffles and thread 0 "
        "writes out[blockIdx.x]",
        x, n_, scratch);
    emit.template launch<warp_shuffle_partials<Op, false>>(1, 1024, 0, "one block over the block values, in a fixed order",
                                                           kBlockText, scratch, result, vec_blocks_);
  }

  void cub_call(void* temp, std::size_t& bytes, const T* x, Acc* out, cudaStream_t s) const {
    cudaError_t status;
    if constexpr (std::is_same_v<Op, SumOp<T>>)
      status = cub::DeviceReduce::Sum(temp, bytes, x, out, n_, s);
    else if constexpr (std::is_same_v<Op, MinOp<T>>)
      status = cub::DeviceReduce::Min(temp, bytes, x, out, n_, s);
    else if constexpr (std::is_same_v<Op, MaxOp<T>>)
      status = cub::DeviceReduce::Max(temp, bytes, x, out, n_, s);
    else
      status = cub::DeviceReduce::TransformReduce(temp, bytes, x, out, n_, ::cuda::std::plus<>{},
                                                  SquareToDouble<T>{}, 0.0, s);
    GEMMKIT_CUDA_CHECK(status);
  }

  Kernel kernel_;
  std::size_t n_;
  unsigned per_sm4_ = 0, per_sm8_ = 0, vec_blocks_ = 1;
  std::size_t scratch_offset_ = 0, cub_offset_ = 0, cub_bytes_ = 0, bytes_ = 0;
};

// Calls f(Op{}) with the operation's type for `op` and value type T.
template <class T, class F>
decltype(auto) with_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum: return f(SumOp<T>{});
    case ReduceOp::min: return f(MinOp<T>{});
    case ReduceOp::max: return f(MaxOp<T>{});
    case ReduceOp::norm2: break;
  }
  return f(SumSquaresOp<T>{});
}

// ... and with T from the problem's dtype (f32 or f64, checked by the caller).
template <class F>
decltype(auto) with_problem_op(const ReduceProblem& p, F&& f) {
  if (p.dtype == DType::f32) return with_op<float>(p.op, std::forward<F>(f));
  return with_op<double>(p.op, std::forward<F>(f));
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
void bench_kernels(BenchReport& report, std::size_t n, const typename Op::Value* x, const TimingOptions& runs) {
  using T = typename Op::Value;
  std::vector<BenchRow> rows;
  const auto row = [&](const std::string& name, int rung, bool reference) {
    BenchRow r;
    r.operation = report.operation;
    r.kernel = name;
    r.size = std::to_string(n) + " values";
    r.dtype = report.dtype;
    r.rung = rung;
    r.reference = reference;
    r.unit = RateUnit::gbs;
    return r;
  };
  for (const auto& k : reduce_registry().entries())
    if (k.backend == Backend::cuda) rows.push_back(row(k.name, k.rung, k.role == KernelRole::reference));
  // Variants of rung 6, timed for the record (how much the unroll and the cache hint matter).
  for (const char* variant : {"vec16_unroll2", "vec16_unroll8", "vec16_ldg"}) rows.push_back(row(variant, 6, false));
  Context ctx(Backend::cuda);
  DeviceBuffer<T> answer(1);
  for (BenchRow& r : rows) {
    const ReducePlan<Op> plan(kernel_id(r.kernel), n, ctx);
    DeviceBuffer<unsigned char> workspace(plan.workspace_bytes());
    const auto launch = [&] { plan.launch(x, answer.data(), workspace.data(), nullptr); };
    // After each run (outside its timing) a look at its bits: the median and the determinism
    // check come from the same runs.
    ReduceBenchFacts& facts = r.reduce.emplace();
    bool first = true;
    T first_value{};
    const auto look = [&] {
      T value;
      answer.copy_to_host(&value, 1);
      if (first) first_value = value, first = false;
      else facts.bit_identical = facts.bit_identical && std::memcmp(&value, &first_value, sizeof(T)) == 0;
    };
    record_runs(r, {cuda::time_on_device(nullptr, runs, launch, look), {}}, report.bytes, false);
    facts.value = static_cast<double>(first_value);
    if (r.reference) report.percent_of = r.kernel;
  }
  report.rows = std::move(rows);
}

template <class T>
void bench_typed(BenchReport& report, std::size_t n, const TimingOptions& runs, std::uint64_t seed, ReduceOp op) {
  DeviceBuffer<T> x(n);
  fill_uniform<T><<<1024, 256>>>(x.data(), n, seed);
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  BenchRow& copy = report.copy.emplace();
  copy.operation = report.operation;
  copy.kernel = "device_copy";
  copy.dtype = report.dtype;
  copy.unit = RateUnit::gbs;
  record_runs(copy, {cuda::time_device_copy(nullptr, std::size_t(report.bytes), runs), {}}, report.bytes, false);
  switch (op) {
    case ReduceOp::sum: bench_kernels<SumOp<T>>(report, n, x.data(), runs); break;
    case ReduceOp::min: bench_kernels<MinOp<T>>(report, n, x.data(), runs); break;
    case ReduceOp::max: bench_kernels<MaxOp<T>>(report, n, x.data(), runs); break;
    case ReduceOp::norm2: bench_kernels<SumSquaresOp<T>>(report, n, x.data(), runs); break;
  }
  const auto cub = std::find_if(report.rows.begin(), report.rows.end(), [](const BenchRow& r) { return r.reference; });
  set_ratios(report.rows.begin(), report.rows.end(), cub == report.rows.end() ? nullptr : &*cub, copy.timing.median_s);
}

}  // namespace

namespace reduce_detail {

namespace {


std::size_t cuda_workspace_bytes(std::string_view kernel, const ReduceProblem& problem,
                                 const Context& ctx) {
  const cuda::DeviceScope scope(ctx.device());  // occupancy is asked of the context's device
  return with_problem_op(problem, [&](auto op) {
    return ReducePlan<decltype(op)>(kernel_id(kernel), problem.n, ctx).workspace_bytes();
  });
}

std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const ReduceProblem& problem, const LaunchQueries& q) {
  return with_problem_op(problem, [&](auto op) {
    const PerSm per_sm = [&q](const void* fn, const std::string& (*name)()) {
      LaunchPlan plan;
      plan.kernel = name();
      plan.function = fn;
      plan.block = {kThreads, 1, 1};
      return q.blocks_per_sm(plan);
    };
    return ReducePlan<decltype(op)>(kernel_id(kernel), problem.n, q.sm_count, per_sm).plans();
  });
}

void cuda_run(std::string_view kernel, const ReduceProblem& problem, const KernelLaunch& launch) {
  const cuda::DeviceScope scope(launch.context.device());
  with_problem_op(problem, [&](auto op) {
    using Op = decltype(op);
    using T = typename Op::Value;
    ReducePlan<Op>(kernel_id(kernel), problem.n, launch.context)
        .launch(static_cast<const T*>(problem.x), static_cast<T*>(problem.result),
                launch.workspace.data, launch.stream);
  });
}

ReduceKernel cuda_entry(std::string name, int rung, std::string summary, int auto_priority = 0,
                        KernelRole role = KernelRole::ladder) {
  return detail::cuda_operation_entry<ReduceProblem>(std::move(name), rung, std::move(summary), auto_priority,
                                                     role, 50, cuda_workspace_bytes, cuda_run, cuda_plans);
}

}  // namespace

void register_cuda_kernels(Registry<ReduceProblem>& r) {
  r.add(cuda_entry("reduce0_fold", 0,
                   "the teaching texts' reduce0: fold the top half onto the bottom half, one launch per halving "
                   "(any length: the odd middle value has no partner)"));
  r.add(cuda_entry("reduce1_grid_stride", 1,
                   "the teaching texts' reduce1: thread-linear grid-stride sums in registers; 3 launches "
                   "(256x256 threads, 1 block, 1 thread)"));
  r.add(cuda_entry("reduce2_shared_tree", 2,
                   "the teaching texts' reduce2: block tree in shared memory (power-of-two blocks), one value "
                   "per block, then one block"));
  r.add(cuda_entry("reduce3_any_blocks", 3,
                   "the teaching texts' reduce3: tree rounded up to a power of two, so 4 blocks per SM and a "
                   "second pass of exactly that many threads"));
  r.add(cuda_entry("reduce4_unrolled", 4,
                   "the teaching texts' reduce4: tree unrolled at compile time, the last warp with __syncwarp"));
  r.add(cuda_entry("warp_shuffle", 5,
                   "__shfl_down_sync within warps, one shared slot per warp, one barrier"));
  r.add(cuda_entry(std::string(kReduceAutoKernel), 6,
                   "16-byte loads, 4 in flight per thread, one wave of blocks (SMs x occupancy); "
                   "deterministic second pass over the block results in a fixed order",
                   /*auto_priority=*/10));
  r.add(cuda_entry("cub", 0,
                   "reference: cub::DeviceReduce::Sum/Min/Max, TransformReduce (squares, double) "
                   "for norm2",
                   0, KernelRole::reference));
}

template <class T>
T run_host_on_device(Context& ctx, const T* x, std::size_t n, ReduceOp op, std::string_view kernel) {
  const cuda::DeviceScope scope(ctx.device());
  DeviceBuffer<T> device(n), result(1);
  if (n) device.copy_from_host(x, n);
  reduce(ctx, device.data(), n, op, result.data(), nullptr, kernel);
  T value;
  result.copy_to_host(&value, 1);  // waits for the reduction; a fault in it surfaces here
  return value;
}

template float run_host_on_device<float>(Context&, const float*, std::size_t, ReduceOp, std::string_view);
template double run_host_on_device<double>(Context&, const double*, std::size_t, ReduceOp, std::string_view);

BenchReport bench_on_device(std::size_t n, DType dtype, ReduceOp op, int warmup, int reps, std::uint64_t seed) {
  BenchReport report;
  report.operation = "reduce";
  report.backend = Backend::cuda;
  report.dtype = dtype;
  report.bytes = double(n * dtype_size(dtype));
  if (dtype == DType::f32) bench_typed<float>(report, n, fixed_runs(warmup, reps), seed, op);
  else bench_typed<double>(report, n, fixed_runs(warmup, reps), seed, op);
  return report;
}

}  // namespace reduce_detail
}  // namespace gemmkit

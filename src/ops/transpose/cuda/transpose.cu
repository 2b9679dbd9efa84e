// The transpose ladder on the device: each rung's launches written once against an emitter
// (run and explain from one description), and the registry entries.
#include <algorithm>
#include <cstdint>
#include <string>

#include "gemmkit/transpose.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "ops/cuda_entry.hpp"
#include "ops/transpose/cuda/01_naive.cuh"
#include "ops/transpose/cuda/02_shared_tile.cuh"
#include "ops/transpose/cuda/03_padded_tile.cuh"
#include "ops/transpose/transpose_device.hpp"
#include "runtime/ceil_div.hpp"
#include "runtime/cuda/context.hpp"

namespace gemmkit {
namespace transpose_detail {
namespace {

using namespace cuda::kernels;
using cuda::check_launch;
using cuda::LaunchEmit;
using cuda::PlanEmit;

constexpr std::int64_t kMaxGridY = 65535;  // the hardware's limit on gridDim.y

// The element as bits: every dtype of that size moves the same way.
template <class F>
void with_element_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    default: return f(std::uint64_t{});
  }
}

// The launches of rung `kernel` through `emit` (LaunchEmit queues them, PlanEmit describes
// them). An empty matrix launches nothing.
template <class T, class Emit>
void rung_launches(std::string_view kernel, const TransposeProblem& p, const Emit& emit) {
  if (p.rows == 0 || p.cols == 0) return;
  const auto* a = static_cast<const T*>(p.a);
  auto* b = static_cast<T*>(p.b);
  const dim3 block(kTransposeTile, kTransposeRows);
  const auto grid_x = unsigned(ceil_div(p.cols, std::int64_t(kTransposeTile)));
  if (kernel == "transpose_naive") {
    const auto grid_y = unsigned(std::min(ceil_div(p.rows, std::int64_t(kTransposeRows)), kMaxGridY));
    emit.template launch<transpose_naive_kernel<T>>(
        dim3(grid_x, grid_y), block, 0, "the transpose",
        "one element per thread and row step: j = blockIdx.x * 32 + threadIdx.x, i = blockIdx.y * 8 + threadIdx.y "
        "+ t * gridDim.y * 8; B(j, i) = A(i, j)",
        a, p.lda, b, p.ldb, p.rows, p.cols);
  } else {
    const auto grid_y = unsigned(std::min(ceil_div(p.rows, std::int64_t(kTransposeTile)), kMaxGridY));
    const char* mapping =
        "a 32x32 tile per block and row step: rows 32 * (blockIdx.y + t * gridDim.y) + threadIdx.y + 8r (r = 0..3) "
        "of A, columns 32 * blockIdx.x + threadIdx.x, through shared memory into the same elements of B transposed";
    if (kernel == "transpose_shared_tile")
      emit.template launch<transpose_shared_tile_kernel<T>>(dim3(grid_x, grid_y), block, 0, "the transpose", mapping, a,
                                                            p.lda, b, p.ldb, p.rows, p.cols);
    else
      emit.template launch<transpose_padded_tile_kernel<T>>(dim3(grid_x, grid_y), block, 0, "the transpose", mapping, a,
                                                            p.lda, b, p.ldb, p.rows, p.cols);
  }
  if constexpr (std::is_same_v<Emit, LaunchEmit>) check_launch(std::string(kernel).c_str());
}

std::size_t no_workspace(std::string_view, const TransposeProblem&, const Context&) { return 0; }

void cuda_run(std::string_view kernel, const TransposeProblem& p, const KernelLaunch& launch) {
  const cuda::DeviceScope scope(launch.context.device());
  with_element_bits(p.dtype, [&](auto t) { rung_launches<decltype(t)>(kernel, p, LaunchEmit{launch.stream}); });
}

std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const TransposeProblem& p, const LaunchQueries&) {
  std::vector<LaunchPlan> out;
  with_element_bits(p.dtype, [&](auto t) { rung_launches<decltype(t)>(kernel, p, PlanEmit{&out}); });
  return out;
}

TransposeKernel cuda_entry(std::string name, int rung, std::string summary, int auto_priority) {
  TransposeKernel e = detail::cuda_operation_entry<TransposeProblem>(
      std::move(name), rung, std::move(summary), auto_priority, KernelRole::ladder, 50, no_workspace, cuda_run,
      cuda_plans);
  e.dtypes = transpose_dtypes();
  // 32 columns per block along the grid's x side, at most 2^31 - 1 blocks.
  e.precondition = [](const TransposeProblem& p) -> std::optional<std::string> {
    if (ceil_div(p.cols, std::int64_t(kTransposeTile)) > std::int64_t(0x7fffffff))
      return std::string("A has more columns than 2^31 - 1 blocks of 32 cover");
    return std::nullopt;
  };
  return e;
}

}  // namespace

void register_cuda_kernels(Registry<TransposeProblem>& r) {
  r.add(cuda_entry("transpose_naive", 1, "one thread per element: reads of A coalesced, writes of B strided", 0));
  r.add(cuda_entry("transpose_shared_tile", 2,
                   "a 32x32 tile staged in shared memory: both sides coalesced, the tile's columns in one bank", 0));
  r.add(cuda_entry("transpose_padded_tile", 3, "rung 2's tile padded to 32x33: no bank conflicts", 10));
}

}  // namespace transpose_detail
}  // namespace gemmkit

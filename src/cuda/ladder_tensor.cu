// Launchers and registry entries for the portable tensor-core rungs (sm_80+): 16, WMMA;
// 17, mma.sync with ldmatrix and a cp.async pipeline.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "cuda/kernels/16_wmma.cuh"
#include "cuda/kernels/17_mma_sync.cuh"
#include "cuda/ladder.hpp"
#include "cuda/launch.hpp"
#include "cuda/tensor_args.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::TensorArgs;

template <class T>
void run_wmma(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = kernels::WmmaConfig<T>;
  const TensorArgs<T> g = tensor_args<T>(p);
  const dim3 grid(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN)));
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    launch_with_smem<kernels::wmma_kernel<T, TA, TB>, Cfg::kSmemBytes>(l, grid, dim3(Cfg::kThreads), g);
  });
  check_launch("wmma_kernel");
}

template <class T>
void run_mma_sync(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  using Cfg = kernels::MmaSyncConfig<T>;
  const TensorArgs<T> g = tensor_args<T>(p);
  const dim3 grid(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN)));
  // 16-byte copies need the operand's start and every row on 16-byte boundaries.
  const auto aligned = [](const void* ptr, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % (16 / sizeof(T)) == 0;
  };
  const bool vec_a = aligned(p.a, p.lda), vec_b = aligned(p.b, p.ldb);
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    auto launch = [&](auto va, auto vb) {
      constexpr bool VA = decltype(va)::value, VB = decltype(vb)::value;
      launch_with_smem<kernels::mma_sync_kernel<T, TA, TB, VA, VB>, Cfg::kSmemBytes>(l, grid, dim3(Cfg::kThreads), g);
    };
    if (vec_a && vec_b) launch(std::true_type{}, std::true_type{});
    else if (vec_a) launch(std::true_type{}, std::false_type{});
    else if (vec_b) launch(std::false_type{}, std::true_type{});
    else launch(std::false_type{}, std::false_type{});
  });
  check_launch("mma_sync_kernel");
}

template <class T> struct WmmaRunner { static void run(const GemmProblem& p, const KernelLaunch& l) { run_wmma<T>(p, l); } };
template <class T> struct MmaSyncRunner { static void run(const GemmProblem& p, const KernelLaunch& l) { run_mma_sync<T>(p, l); } };
template <> struct MmaSyncRunner<float> {  // not registered for tf32
  static void run(const GemmProblem&, const KernelLaunch&) { fail(ErrorCategory::internal, "cuda_mma_sync has no tf32 path"); }
};

// One 1-D grid of 128 x 128 tiles.
std::optional<std::string> fits_128x128(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.m, 128) * ceil_div(p.n, 128), 1);
}

}  // namespace

void register_tensor_kernels(Registry& registry) {
  registry.add({.name = "cuda_wmma",
                .backend = Backend::cuda,
                .rung = 16,
                .role = KernelRole::ladder,
                .summary = "tensor cores through WMMA",
                .dtypes = {DType::bf16, DType::f16, DType::tf32},
                .min_compute_capability = 80,
                .auto_priority = 0,
                .half_inputs_f32_output = true,
                .precondition = fits_128x128,
                .run = by_tensor_dtype<WmmaRunner>});
  registry.add({.name = "cuda_mma_sync",
                .backend = Backend::cuda,
                .rung = 17,
                .role = KernelRole::ladder,
                .summary = "mma.sync with ldmatrix, swizzled shared memory and a cp.async pipeline",
                .dtypes = {DType::bf16, DType::f16},
                .min_compute_capability = 80,
                .auto_priority = 10,
                .half_inputs_f32_output = true,
                .precondition = fits_128x128,
                .run = by_tensor_dtype<MmaSyncRunner>});
}

}  // namespace gemmkit::cuda

// Launchers and registry entries for the portable tensor-core rungs (sm_80+): 16, WMMA;
// 17, mma.sync with ldmatrix and a cp.async pipeline. Their kernels are compiled on first use
// (runtime/cuda/jit_kernels.hpp): this file names them but instantiates none.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "ops/gemm/cuda/tensor/16_wmma.cuh"
#include "ops/gemm/cuda/tensor/17_mma_sync.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "ops/gemm/cuda/tensor/tensor_args.hpp"
#include "runtime/cuda/jit_kernels.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::TensorArgs;
using kernels::TensorArgsParameters;

constexpr int kTensorArch = 80;  // bf16 and tf32 fragments, ldmatrix and cp.async

// Rungs 16 and 17: one block per (BM, BN) tile of C along x, tiles in row order.
template <class Cfg>
Geometry tile_row_geometry(const GemmProblem& p) {
  return {dim3(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN))), dim3(Cfg::kThreads),
          std::size_t(Cfg::kSmemBytes)};
}

// What a thread of rungs 16-17 writes: its warp's (WM, WN) piece of the block's tile, held
// in tensor-core fragments.
template <class Cfg>
std::string warp_tile_text(const char* fragments) {
  const auto s = [](int v) { return std::to_string(v); };
  return "block b (blockIdx.x) takes the " + s(Cfg::BM) + "x" + s(Cfg::BN) + " tile at rows (b / n_tiles) * " +
         s(Cfg::BM) + ", columns (b % n_tiles) * " + s(Cfg::BN) + " (n_tiles = ceil(N / " + s(Cfg::BN) + ")); warp w " +
         "of its " + s(Cfg::kThreads / 32) + " takes the " + s(Cfg::WM) + "x" + s(Cfg::WN) + " piece at rows (w / " +
         s(Cfg::BN / Cfg::WN) + ") * " + s(Cfg::WM) + ", columns (w % " + s(Cfg::BN / Cfg::WN) + ") * " + s(Cfg::WN) +
         " of the tile; " + fragments;
}

// Rung 16: WMMA in bf16, f16 or tf32.
const auto wmma = [](const GemmProblem& p, const auto& emit) {
  with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto t) {
    using T = decltype(t);
    using Cfg = kernels::WmmaConfig<T>;
    with_transposes(p, [&](auto ta, auto tb) {
      emit.template jit<TensorArgsParameters<T>>(
          jit_instance<"ops/gemm/cuda/tensor/16_wmma.cuh", "gemmkit::cuda::kernels::wmma_kernel", T, decltype(ta),
                       decltype(tb)>(tensor_dtype_name<T>(), kTensorArch),
          tile_row_geometry<Cfg>(p), [&] {
        return Described{"the product",
                         warp_tile_text<Cfg>("WMMA fragments of 16x16 hold the sums in a layout the API leaves unspecified, "
                                             "so the warp stores them to shared memory and its lanes write that piece of C "
                                             "row by row")};
      }, tensor_args<T>(p));
    });
  });
};

// Rung 17: mma.sync in bf16 or f16, instantiated for the problem's transposes and whether
// 16-byte copies may read A and B (their starts and rows on 16-byte boundaries).
const auto mma_sync = [](const GemmProblem& p, const auto& emit) {
  with_element<__nv_bfloat16, __half>(p.dtype, [&](auto t) {
    using T = decltype(t);
    using Cfg = kernels::MmaSyncConfig<T>;
    with_bools([&](auto ta, auto tb, auto va, auto vb) {
      emit.template jit<TensorArgsParameters<T>>(
          jit_instance<"ops/gemm/cuda/tensor/17_mma_sync.cuh", "gemmkit::cuda::kernels::mma_sync_kernel", T,
                       decltype(ta), decltype(tb), decltype(va), decltype(vb)>(tensor_dtype_name<T>(), kTensorArch),
          tile_row_geometry<Cfg>(p), [&] {
        return Described{"the product",
                         warp_tile_text<Cfg>("the piece is 4 x 4 mma.sync tiles of 16x8, and lane l holds rows l / 4 and "
                                             "l / 4 + 8, columns 2 * (l % 4) and 2 * (l % 4) + 1 of each")};
      }, tensor_args<T>(p));
    }, p.trans_a, p.trans_b, rows_on_16_bytes(p.a, p.lda, sizeof(T)), rows_on_16_bytes(p.b, p.ldb, sizeof(T)));
  });
};

// One 1-D grid of 128 x 128 tiles.
std::optional<std::string> fits_128x128(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.m, 128) * ceil_div(p.n, 128), 1);
}

}  // namespace

// Every kernel rungs 16 and 17 can launch, for `gemmkit cache warm` and the test that compiles them all.
std::vector<const JitKernel*> tensor_jit_kernels() {
  std::vector<const JitKernel*> out;
  add_jit_kernels(out, wmma, {DType::bf16, DType::f16, DType::tf32});
  add_jit_kernels(out, mma_sync, {DType::bf16, DType::f16});
  return out;
}

void register_tensor_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_wmma", .backend = Backend::cuda, .rung = 16, .summary = "tensor cores through WMMA",
                 .dtypes = {DType::bf16, DType::f16, DType::tf32}, .min_compute_capability = 80},
                {.precondition = fits_128x128, .run = runs(wmma), .launches = plans(wmma)},
                {.half_inputs_f32_output = true}});
  registry.add({{.name = "cuda_mma_sync", .backend = Backend::cuda, .rung = 17,
                 .summary = "mma.sync with ldmatrix, swizzled shared memory and a cp.async pipeline",
                 .dtypes = {DType::bf16, DType::f16}, .min_compute_capability = 80, .auto_priority = 10},
                {.precondition = fits_128x128, .run = runs(mma_sync), .launches = plans(mma_sync)},
                {.half_inputs_f32_output = true}});
}

}  // namespace gemmkit::cuda

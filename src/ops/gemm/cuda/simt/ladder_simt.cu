// Launchers and registry entries of the SIMT ladder, rungs 7-11: from a coalesced
// one-thread-per-element kernel to 2-D register blocking with 128-bit accesses and
// conflict-free shared memory. Kernels live in ops/gemm/cuda/simt/07..11_*.cuh. Rungs 7, 10
// and 11 are compiled on first use (runtime/cuda/jit_kernels.hpp). Rungs 8 and 9 are compiled
// here, ahead of time: NVRTC's code for them takes 67 and 129 registers where nvcc's takes 64
// and 125 (CUDA 13.0, sm_90a), which halves their blocks per SM and cost 27-44% of their
// speed on the H200 (bench/results/2026-12-04_h200_e7197d0).
#include <cstdint>
#include <optional>
#include <string>
#include <functional>
#include <type_traits>
#include <vector>

#include "ops/gemm/cuda/simt/07_coalesced.cuh"
#include "ops/gemm/cuda/simt/08_blocktile_1d.cuh"
#include "ops/gemm/cuda/simt/09_blocktile_2d.cuh"
#include "ops/gemm/cuda/simt/10_vectorized.cuh"
#include "ops/gemm/cuda/simt/11_bank_conflict_free.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/jit_kernels.hpp"

namespace gemmkit::cuda {
namespace {

namespace k = kernels::simt;
using kernels::GemmArgsParameters;

template <class T>
const char* float_name() {
  return std::is_same_v<T, double> ? "f64" : "f32";
}
constexpr int kOldestArch = 50;  // the portable rungs: any architecture NVRTC compiles for

// Rung r's kernel, T<A...> in its header.
template <Literal Header, Literal Template, class T, class... A>
const JitKernel& simt_kernel() {
  return jit_instance<Header, Template, A...>(float_name<T>(), kOldestArch);
}

// The float4 path of an operand needs every row start 16-byte aligned: an aligned base
// pointer and a leading dimension that is a multiple of 4 floats.
bool vec4_ok(const void* ptr, std::int64_t ld) { return rows_on_16_bytes(ptr, ld, 4); }

// Thread t of a block at (m0, n0) = (blockIdx.y * BM, blockIdx.x * BN) writes the lattices
// `of(t)` gives relative to (m0, n0).
template <class Of>
std::function<std::vector<CElements>(Dim3, Dim3)> tile_elements(const GemmProblem& p, int bm, int bn, Of of) {
  return [p, bm, bn, of](Dim3 b, Dim3 t) {
    std::vector<CElements> out;
    for (const CElements& e : of(t.x))
      add_clipped(out, p, b.y * bm + e.row, e.rows, e.row_step, b.x * bn + e.col, e.cols, e.col_step);
    return out;
  };
}

// Every rung here: x over column blocks of bn, y over row blocks of bm.
Geometry block_tile_geometry(const GemmProblem& p, int bm, int bn, int threads) {
  return {dim3(unsigned(ceil_div(p.n, bn)), unsigned(ceil_div(p.m, bm))), dim3(threads)};
}
template <int BM, int BN>
std::optional<std::string> fits_block_tiles(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, BN), ceil_div(p.m, BM));
}

// ---- rung 7 ----------------------------------------------------------------------------
constexpr int coalesced_tile = k::coalesced_tile;

const auto coalesced = [](const GemmProblem& p, const auto& emit) {
  with_float_instance(p, [&](auto t, auto ta, auto tb) {
    using T = decltype(t);
    emit.template jit<GemmArgsParameters<T>>(
        simt_kernel<"ops/gemm/cuda/simt/07_coalesced.cuh", "gemmkit::cuda::kernels::simt::coalesced_kernel", T,
                    decltype(ta), decltype(tb), T>(),
        block_tile_geometry(p, coalesced_tile, coalesced_tile, coalesced_tile * coalesced_tile), [&] {
          return Described{"the product",
                           "one element of C per thread, a block on a 32x32 tile: row = blockIdx.y * 32 + threadIdx.x / 32, "
                           "column = blockIdx.x * 32 + threadIdx.x % 32 (a warp is one row of the tile)",
                           tile_elements(p, coalesced_tile, coalesced_tile, [](std::int64_t t) {
                             return std::vector<CElements>{{t / 32, 1, 1, t % 32, 1, 1}};
                           })};
        }, gemm_args<decltype(t)>(p));
  });
};

// ---- rung 8 ----------------------------------------------------------------------------
namespace bt1 {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
}

const auto blocktile_1d = [](const GemmProblem& p, const auto& emit) {
  using namespace bt1;
  with_float_instance(p, [&](auto t, auto ta, auto tb) {
    emit.template kernel<k::blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t), BM, BN, BK, TM>>(
        block_tile_geometry(p, BM, BN, BM * BN / TM), [&] {
          return Described{"the product",
                           "a block on a 64x64 tile at (blockIdx.y * 64, blockIdx.x * 64); thread t writes 8 rows of one "
                           "column of it: rows (t / 64) * 8 + 0..7, column t % 64",
                           tile_elements(p, BM, BN, [](std::int64_t t) {
                             return std::vector<CElements>{{(t / BN) * TM, TM, 1, t % BN, 1, 1}};
                           })};
        }, gemm_args<decltype(t)>(p));
  });
};

// ---- rungs 9-11: (128, 128) block tiles, 256 threads of (8, 8) -------------------------
namespace bt2 {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int threads = (BM / TM) * (BN / TN);
}

// Rungs 9 and 10: thread t on the 8x8 sub-tile at rows (t / 16) * 8, columns (t % 16) * 8.
std::vector<CElements> sub_tile(std::int64_t t) {
  using namespace bt2;
  return {{(t / (BN / TN)) * TM, TM, 1, (t % (BN / TN)) * TN, TN, 1}};
}

const auto blocktile_2d = [](const GemmProblem& p, const auto& emit) {
  using namespace bt2;
  with_float_instance(p, [&](auto t, auto ta, auto tb) {
    emit.template kernel<k::blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t), BM, BN, BK, TM, TN>>(
        block_tile_geometry(p, BM, BN, threads), [&] {
          return Described{"the product",
                           "a block on a 128x128 tile at (blockIdx.y * 128, blockIdx.x * 128); thread t writes the 8x8 "
                           "sub-tile at rows (t / 16) * 8 + 0..7, columns (t % 16) * 8 + 0..7 of it",
                           tile_elements(p, BM, BN, sub_tile)};
        }, gemm_args<decltype(t)>(p));
  });
};

// Rungs 10 and 11 (f32 only) share rung 9's configuration and differ in the kernel (rung
// 11's: ConflictFree), instantiated for the transposes and for whether A, B and C take the
// float4 path (where vec4_ok holds; otherwise the scalar instantiation runs).
template <bool ConflictFree>
auto vec4_launcher(const char* mapping, std::vector<CElements> (*of)(std::int64_t)) {
  return [=](const GemmProblem& p, const auto& emit) {
    with_bools([&](auto ta, auto tb, auto va, auto vb, auto vc) {
      const auto launch = [&](const JitKernel& kernel) {
        emit.template jit<GemmArgsParameters<float>>(
            kernel, block_tile_geometry(p, bt2::BM, bt2::BN, bt2::threads),
            [&] { return Described{"the product", mapping, tile_elements(p, bt2::BM, bt2::BN, of)}; }, gemm_args<float>(p));
      };
      if constexpr (ConflictFree)
        launch(simt_kernel<"ops/gemm/cuda/simt/11_bank_conflict_free.cuh",
                           "gemmkit::cuda::kernels::simt::bank_conflict_free_kernel", float, decltype(ta), decltype(tb),
                           decltype(va), decltype(vb), decltype(vc)>());
      else
        launch(simt_kernel<"ops/gemm/cuda/simt/10_vectorized.cuh", "gemmkit::cuda::kernels::simt::vectorized_kernel",
                           float, decltype(ta), decltype(tb), decltype(va), decltype(vb), decltype(vc)>());
    }, p.trans_a, p.trans_b, vec4_ok(p.a, p.lda), vec4_ok(p.b, p.ldb), vec4_ok(p.c, p.ldc));
  };
}

// Rung 11: 2x2 sub-tiles of 4x4, at rows ty * 4 and 64 + ty * 4, columns tx * 4 and 64 + tx * 4.
std::vector<CElements> split_sub_tiles(std::int64_t t) {
  const std::int64_t ty = t / 16, tx = t % 16;
  std::vector<CElements> out;
  for (const std::int64_t r : {ty * 4, 64 + ty * 4})
    for (const std::int64_t c : {tx * 4, 64 + tx * 4}) out.push_back({r, 4, 1, c, 4, 1});
  return out;
}

const auto vectorized = vec4_launcher<false>(
    "as rung 9, with float4 loads and stores: thread t writes rows (t / 16) * 8 + 0..7, columns (t % 16) * 8 + 0..7 "
    "of the block's 128x128 tile",
    sub_tile);

const auto bank_conflict_free = vec4_launcher<true>(
    "a block on a 128x128 tile at (blockIdx.y * 128, blockIdx.x * 128); thread t (ty = t / 16, tx = t % 16) writes "
    "four 4x4 sub-tiles: rows ty * 4 + 0..3 and 64 + ty * 4 + 0..3 times columns tx * 4 + 0..3 and 64 + tx * 4 + 0..3",
    split_sub_tiles);

const std::vector<DType> kFloats = {DType::f32, DType::f64};

}  // namespace

// Every kernel of rungs 7, 10 and 11, for `gemmkit cache warm` and the test that compiles them all.
std::vector<const JitKernel*> simt_jit_kernels() {
  std::vector<const JitKernel*> out;
  add_jit_kernels(out, coalesced, {DType::f32, DType::f64});
  add_jit_kernels(out, vectorized, {DType::f32});
  add_jit_kernels(out, bank_conflict_free, {DType::f32});
  return out;
}

void register_simt_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_coalesced", .backend = Backend::cuda, .rung = 7,
                 .summary = "coalesced one-thread-per-element", .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = fits_block_tiles<coalesced_tile, coalesced_tile>, .run = runs(coalesced),
                 .launches = plans(coalesced)}});
  registry.add({{.name = "cuda_blocktile_1d", .backend = Backend::cuda, .rung = 8,
                 .summary = "shared-memory block tiling with a 1-D thread tile", .dtypes = kFloats,
                 .min_compute_capability = 50},
                {.precondition = fits_block_tiles<bt1::BM, bt1::BN>, .run = runs(blocktile_1d),
                 .launches = plans(blocktile_1d)}});
  registry.add({{.name = "cuda_blocktile_2d", .backend = Backend::cuda, .rung = 9, .summary = "2-D register blocking",
                 .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = fits_block_tiles<bt2::BM, bt2::BN>, .run = runs(blocktile_2d),
                 .launches = plans(blocktile_2d)}});
  registry.add({{.name = "cuda_vectorized", .backend = Backend::cuda, .rung = 10,
                 .summary = "128-bit memory accesses (FP32 only)", .dtypes = {DType::f32},
                 .min_compute_capability = 50},
                {.precondition = fits_block_tiles<bt2::BM, bt2::BN>, .run = runs(vectorized),
                 .launches = plans(vectorized)}});
  registry.add({{.name = "cuda_bank_conflict_free", .backend = Backend::cuda, .rung = 11,
                 .summary = "shared memory without bank conflicts (FP32 only)", .dtypes = {DType::f32},
                 .min_compute_capability = 50},
                {.precondition = fits_block_tiles<bt2::BM, bt2::BN>, .run = runs(bank_conflict_free),
                 .launches = plans(bank_conflict_free)}});
}

}  // namespace gemmkit::cuda

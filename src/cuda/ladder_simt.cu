// Launchers and registry entries of the SIMT ladder, rungs 7-11: from a coalesced
// one-thread-per-element kernel to 2-D register blocking with 128-bit accesses and
// conflict-free shared memory. Kernels live in cuda/kernels/gemm/simt/07..11_*.cuh.
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "cuda/kernels/gemm/simt/07_coalesced.cuh"
#include "cuda/kernels/gemm/simt/08_blocktile_1d.cuh"
#include "cuda/kernels/gemm/simt/09_blocktile_2d.cuh"
#include "cuda/kernels/gemm/simt/10_vectorized.cuh"
#include "cuda/kernels/gemm/simt/11_bank_conflict_free.cuh"
#include "cuda/ladder.hpp"
#include "cuda/explain_launch.hpp"
#include "cuda/launch.hpp"

namespace gemmkit::cuda {
namespace {

namespace k = kernels::simt;

// Calls f(std::bool_constant<value>{}): turns a run-time flag into a template argument.
template <class F>
void with_bool(bool value, F&& f) {
  if (value) f(std::true_type{});
  else f(std::false_type{});
}

// Runs f.template operator()<T>() for the problem's dtype, f32 or f64.
template <class F>
void with_float_dtype(const GemmProblem& p, const char* name, F&& f) {
  switch (p.dtype) {
    case DType::f32: f(float{}); break;
    case DType::f64: f(double{}); break;
    default: fail(ErrorCategory::internal, std::string(name) + ": unsupported dtype");
  }
}

// The float4 path of an operand needs every row start 16-byte aligned: an aligned base
// pointer and a leading dimension that is a multiple of 4 floats.
bool vec4_ok(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0;
}

// ---- rung 7 ----------------------------------------------------------------------------
constexpr int coalesced_tile = k::coalesced_tile;

std::optional<std::string> coalesced_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, coalesced_tile), ceil_div(p.m, coalesced_tile));
}

Geometry coalesced_geometry(const GemmProblem& p) {
  return {dim3(unsigned(ceil_div(p.n, coalesced_tile)), unsigned(ceil_div(p.m, coalesced_tile))),
          dim3(coalesced_tile * coalesced_tile)};
}

template <class T>
void run_coalesced(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  const Geometry geo = coalesced_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    k::coalesced_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
    check_launch("cuda_coalesced");
  });
}

// ---- rung 8 ----------------------------------------------------------------------------
namespace bt1 {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
}

std::optional<std::string> blocktile_1d_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, bt1::BN), ceil_div(p.m, bt1::BM));
}

Geometry blocktile_1d_geometry(const GemmProblem& p) {
  using namespace bt1;
  return {dim3(unsigned(ceil_div(p.n, BN)), unsigned(ceil_div(p.m, BM))), dim3(BM * BN / TM)};
}

template <class T>
void run_blocktile_1d(const GemmProblem& p, const KernelLaunch& l) {
  using namespace bt1;
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  const Geometry geo = blocktile_1d_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    k::blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value, T, BM, BN, BK, TM>
        <<<geo.grid, geo.block, 0, l.stream>>>(g);
    check_launch("cuda_blocktile_1d");
  });
}

// ---- rungs 9-11: (128, 128) block tiles, 256 threads of (8, 8) -------------------------
namespace bt2 {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int threads = (BM / TM) * (BN / TN);
}

std::optional<std::string> blocktile_2d_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, bt2::BN), ceil_div(p.m, bt2::BM));
}

// Rungs 9-11: x over column blocks, y over row blocks, 256 threads.
Geometry blocktile_2d_geometry(const GemmProblem& p) {
  return {dim3(unsigned(ceil_div(p.n, bt2::BN)), unsigned(ceil_div(p.m, bt2::BM))), dim3(bt2::threads)};
}

template <class T>
void run_blocktile_2d(const GemmProblem& p, const KernelLaunch& l) {
  using namespace bt2;
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  const Geometry geo = blocktile_2d_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    k::blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value, T, BM, BN, BK, TM, TN>
        <<<geo.grid, geo.block, 0, l.stream>>>(g);
    check_launch("cuda_blocktile_2d");
  });
}

// Rungs 10 and 11 share their configuration and differ only in the kernel. Each operand
// takes the float4 path only where vec4_ok holds; otherwise the scalar instantiation runs.
template <template <bool, bool, bool, bool, bool> class Kernel>
void run_vec4_family(const GemmProblem& p, const KernelLaunch& l, const char* name) {
  if (p.m == 0 || p.n == 0) return;
  if (p.dtype != DType::f32) fail(ErrorCategory::internal, std::string(name) + ": f32 only");
  const auto g = gemm_args<float>(p);
  const Geometry geo = blocktile_2d_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    with_bool(vec4_ok(p.a, p.lda), [&](auto va) {
      with_bool(vec4_ok(p.b, p.ldb), [&](auto vb) {
        with_bool(vec4_ok(p.c, p.ldc), [&](auto vc) {
          Kernel<decltype(ta)::value, decltype(tb)::value, decltype(va)::value,
                 decltype(vb)::value, decltype(vc)::value>::launch(l.stream, geo, g);
          check_launch(name);
        });
      });
    });
  });
}

// Kernel templates cannot be template template arguments; these wrappers can.
template <bool TA, bool TB, bool VA, bool VB, bool VC>
struct VectorizedLaunch {
  static constexpr auto kernel = k::vectorized_kernel<TA, TB, VA, VB, VC>;
  static void launch(cudaStream_t stream, const Geometry& geo, const kernels::GemmArgs<float>& g) {
    kernel<<<geo.grid, geo.block, 0, stream>>>(g);
  }
};

template <bool TA, bool TB, bool VA, bool VB, bool VC>
struct BankConflictFreeLaunch {
  static constexpr auto kernel = k::bank_conflict_free_kernel<TA, TB, VA, VB, VC>;
  static void launch(cudaStream_t stream, const Geometry& geo, const kernels::GemmArgs<float>& g) {
    kernel<<<geo.grid, geo.block, 0, stream>>>(g);
  }
};

// ---- launch plans: the instantiation each launcher picks, with its geometry ----------------

using PlanList = std::vector<LaunchPlan>;

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

PlanList coalesced_plans(const GemmProblem& p, const LaunchQueries&) {
  PlanList out;
  with_float_dtype(p, "cuda_coalesced", [&](auto t) {
    with_transposes(p, [&](auto ta, auto tb) {
      out.push_back(plan_of<k::coalesced_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
          coalesced_geometry(p), "the product",
          "one element of C per thread, a block on a 32x32 tile: row = blockIdx.y * 32 + threadIdx.x / 32, "
          "column = blockIdx.x * 32 + threadIdx.x % 32 (a warp is one row of the tile)",
          tile_elements(p, coalesced_tile, coalesced_tile, [](std::int64_t t) {
            return std::vector<CElements>{{t / 32, 1, 1, t % 32, 1, 1}};
          })));
    });
  });
  return out;
}

PlanList blocktile_1d_plans(const GemmProblem& p, const LaunchQueries&) {
  using namespace bt1;
  PlanList out;
  with_float_dtype(p, "cuda_blocktile_1d", [&](auto t) {
    with_transposes(p, [&](auto ta, auto tb) {
      out.push_back(plan_of<k::blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t), BM, BN, BK, TM>>(
          blocktile_1d_geometry(p), "the product",
          "a block on a 64x64 tile at (blockIdx.y * 64, blockIdx.x * 64); thread t writes 8 rows of one "
          "column of it: rows (t / 64) * 8 + 0..7, column t % 64",
          tile_elements(p, BM, BN, [](std::int64_t t) {
            return std::vector<CElements>{{(t / BN) * TM, TM, 1, t % BN, 1, 1}};
          })));
    });
  });
  return out;
}

// Rungs 9 and 10: thread t on the 8x8 sub-tile at rows (t / 16) * 8, columns (t % 16) * 8.
constexpr const char* kSubTileText =
    "a block on a 128x128 tile at (blockIdx.y * 128, blockIdx.x * 128); thread t writes the 8x8 "
    "sub-tile at rows (t / 16) * 8 + 0..7, columns (t % 16) * 8 + 0..7 of it";
std::vector<CElements> sub_tile(std::int64_t t) {
  using namespace bt2;
  return {{(t / (BN / TN)) * TM, TM, 1, (t % (BN / TN)) * TN, TN, 1}};
}

PlanList blocktile_2d_plans(const GemmProblem& p, const LaunchQueries&) {
  using namespace bt2;
  PlanList out;
  with_float_dtype(p, "cuda_blocktile_2d", [&](auto t) {
    with_transposes(p, [&](auto ta, auto tb) {
      out.push_back(plan_of<k::blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t), BM, BN, BK, TM, TN>>(
          blocktile_2d_geometry(p), "the product", kSubTileText, tile_elements(p, BM, BN, sub_tile)));
    });
  });
  return out;
}

// The instantiation run_vec4_family picks for the problem's transposes and alignments.
template <template <bool, bool, bool, bool, bool> class Kernel>
PlanList vec4_plans(const GemmProblem& p, const char* text,
                    std::function<std::vector<CElements>(Dim3, Dim3)> elements) {
  PlanList out;
  with_transposes(p, [&](auto ta, auto tb) {
    with_bool(vec4_ok(p.a, p.lda), [&](auto va) {
      with_bool(vec4_ok(p.b, p.ldb), [&](auto vb) {
        with_bool(vec4_ok(p.c, p.ldc), [&](auto vc) {
          out.push_back(plan_of<Kernel<decltype(ta)::value, decltype(tb)::value, decltype(va)::value,
                                       decltype(vb)::value, decltype(vc)::value>::kernel>(
              blocktile_2d_geometry(p), "the product", text, elements));
        });
      });
    });
  });
  return out;
}

// Rung 11: 2x2 sub-tiles of 4x4, at rows ty * 4 and 64 + ty * 4, columns tx * 4 and 64 + tx * 4.
std::vector<CElements> split_sub_tiles(std::int64_t t) {
  const std::int64_t ty = t / 16, tx = t % 16;
  std::vector<CElements> out;
  for (const std::int64_t r : {ty * 4, 64 + ty * 4})
    for (const std::int64_t c : {tx * 4, 64 + tx * 4}) out.push_back({r, 4, 1, c, 4, 1});
  return out;
}

}  // namespace

void register_simt_kernels(Registry& registry) {
  registry.add({.name = "cuda_coalesced",
                .backend = Backend::cuda,
                .rung = 7,
                .role = KernelRole::ladder,
                .summary = "coalesced one-thread-per-element",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = coalesced_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_coalesced",
                                   [&](auto t) { run_coalesced<decltype(t)>(p, l); });
                },
                .launches = coalesced_plans});
  registry.add({.name = "cuda_blocktile_1d",
                .backend = Backend::cuda,
                .rung = 8,
                .role = KernelRole::ladder,
                .summary = "shared-memory block tiling with a 1-D thread tile",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_1d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_blocktile_1d",
                                   [&](auto t) { run_blocktile_1d<decltype(t)>(p, l); });
                },
                .launches = blocktile_1d_plans});
  registry.add({.name = "cuda_blocktile_2d",
                .backend = Backend::cuda,
                .rung = 9,
                .role = KernelRole::ladder,
                .summary = "2-D register blocking",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_blocktile_2d",
                                   [&](auto t) { run_blocktile_2d<decltype(t)>(p, l); });
                },
                .launches = blocktile_2d_plans});
  registry.add({.name = "cuda_vectorized",
                .backend = Backend::cuda,
                .rung = 10,
                .role = KernelRole::ladder,
                .summary = "128-bit memory accesses (FP32 only)",
                .dtypes = {DType::f32},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  run_vec4_family<VectorizedLaunch>(p, l, "cuda_vectorized");
                },
                .launches = [](const GemmProblem& p, const LaunchQueries&) {
                  return vec4_plans<VectorizedLaunch>(
                      p, "as rung 9, with float4 loads and stores: thread t writes rows (t / 16) * 8 + 0..7, columns (t % 16) * 8 + 0..7 of the block's 128x128 tile",
                      tile_elements(p, bt2::BM, bt2::BN, sub_tile));
                }});
  registry.add({.name = "cuda_bank_conflict_free",
                .backend = Backend::cuda,
                .rung = 11,
                .role = KernelRole::ladder,
                .summary = "shared memory without bank conflicts (FP32 only)",
                .dtypes = {DType::f32},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  run_vec4_family<BankConflictFreeLaunch>(p, l, "cuda_bank_conflict_free");
                },
                .launches = [](const GemmProblem& p, const LaunchQueries&) {
                  return vec4_plans<BankConflictFreeLaunch>(
                      p, "a block on a 128x128 tile at (blockIdx.y * 128, blockIdx.x * 128); thread t (ty = t / 16, "
                         "tx = t % 16) writes four 4x4 sub-tiles: rows ty * 4 + 0..3 and 64 + ty * 4 + 0..3 times "
                         "columns tx * 4 + 0..3 and 64 + tx * 4 + 0..3",
                      tile_elements(p, bt2::BM, bt2::BN, split_sub_tiles));
                }});
}

}  // namespace gemmkit::cuda

// Launchers and registry entries for rungs 1-6, the kernels of the seed texts: one thread
// per row, per column, per element, the restrict/unroll variant, and shared-memory tiling.
// These are teaching rungs: correct for every problem, never chosen by `--kernel auto`.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "ops/gemm/cuda/seeds/01_row_per_thread.cuh"
#include "ops/gemm/cuda/seeds/02_column_per_thread.cuh"
#include "ops/gemm/cuda/seeds/03_naive.cuh"
#include "ops/gemm/cuda/seeds/04_restrict.cuh"
#include "ops/gemm/cuda/seeds/05_tiled.cuh"
#include "ops/gemm/cuda/seeds/06_tiled_unrolled.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::GemmArgs;

// Threads per block of the one-dimensional rungs 1 and 2. They have only m (or n)
// threads in all, so small blocks spread that little work over more SMs.
constexpr int line_block = 64;

// ---- grids: shared by each launcher and its precondition, so the two cannot disagree ----

struct Grid {
  std::int64_t x, y;  // blocks along gridDim.x and gridDim.y
};

Grid row_per_thread_grid(const GemmProblem& p) { return {ceil_div(p.m, line_block), 1}; }
Grid column_per_thread_grid(const GemmProblem& p) { return {ceil_div(p.n, line_block), 1}; }
// The 2D rungs put row blocks on x (limit 2^31-1) and column blocks on y (limit 65535).
Grid tile_grid(const GemmProblem& p, int tile) {
  return {ceil_div(p.m, tile), ceil_div(p.n, tile)};
}

std::optional<std::string> fits(const GemmProblem& p, Grid grid) {
  // fits_grid checks its first count against the x limit and its second against y.
  return fits_grid(p, grid.x, grid.y);
}

dim3 to_dim3(Grid grid) { return dim3(unsigned(grid.x), unsigned(grid.y)); }

// Each launch's configuration, for the launcher and for its launch plan (explain).
Geometry row_per_thread_geometry(const GemmProblem& p) { return {to_dim3(row_per_thread_grid(p)), dim3(line_block)}; }
Geometry column_per_thread_geometry(const GemmProblem& p) { return {to_dim3(column_per_thread_grid(p)), dim3(line_block)}; }
Geometry tile_geometry(const GemmProblem& p, int tile) { return {to_dim3(tile_grid(p, tile)), dim3(tile, tile)}; }

// ---- what a thread writes ----------------------------------------------------------------

std::function<std::vector<CElements>(Dim3, Dim3)> whole_row(const GemmProblem& p) {
  return [p](Dim3 b, Dim3 t) {
    std::vector<CElements> out;
    add_clipped(out, p, b.x * line_block + t.x, 1, 1, 0, p.n, 1);
    return out;
  };
}
std::function<std::vector<CElements>(Dim3, Dim3)> whole_column(const GemmProblem& p) {
  return [p](Dim3 b, Dim3 t) {
    std::vector<CElements> out;
    add_clipped(out, p, 0, p.m, 1, b.x * line_block + t.x, 1, 1);
    return out;
  };
}
// The 2D rungs: blockIdx.x picks the row block, blockIdx.y the column block; threadIdx.x
// runs along the columns (coalesced), threadIdx.y down the rows.
std::function<std::vector<CElements>(Dim3, Dim3)> one_element(const GemmProblem& p, int tile) {
  return [p, tile](Dim3 b, Dim3 t) {
    std::vector<CElements> out;
    add_clipped(out, p, b.x * tile + t.y, 1, 1, b.y * tile + t.x, 1, 1);
    return out;
  };
}
std::string one_element_text(int tile) {
  const std::string t = std::to_string(tile);
  return "one element of C per thread: row = blockIdx.x * " + t + " + threadIdx.y, column = blockIdx.y * " + t +
         " + threadIdx.x (threads past the edge of C write nothing)";
}

// ---- launchers: each written once for run() and launches() (ladder.hpp) -----------------

// Rungs 1 and 2: one whole row (Rows) or column of C per thread.
template <bool Rows>
auto line_per_thread() {
  return [](const GemmProblem& p, const auto& emit) {
    with_float_instance(p, [&](auto t, auto ta, auto tb) {
      using T = decltype(t);
      constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
      const auto launch = [&](auto kernel, const Geometry& geometry, const char* mapping, auto elements) {
        emit.template kernel<decltype(kernel)::value>(
            geometry, [&] { return Described{"the product", mapping, elements(p)}; }, gemm_args<T>(p));
      };
      if constexpr (Rows)
        launch(Instance<kernels::row_per_thread_kernel<TA, TB, T>>{}, row_per_thread_geometry(p),
               "one row of C per thread: row = blockIdx.x * blockDim.x + threadIdx.x, every column of it", whole_row);
      else
        launch(Instance<kernels::column_per_thread_kernel<TA, TB, T>>{}, column_per_thread_geometry(p),
               "one column of C per thread: column = blockIdx.x * blockDim.x + threadIdx.x, every row of it",
               whole_column);
    });
  };
}
const auto row_per_thread = line_per_thread<true>();
const auto column_per_thread = line_per_thread<false>();

// Rungs 3-6: one element of C per thread in (Tile, Tile) blocks; kernel(ta, tb, T{}) names
// the instantiation (as the type Instance<...>), args(GemmArgs) gives its arguments.
template <int Tile, class Kernel, class Args>
auto one_element_per_thread(Kernel kernel, Args args) {
  return [=](const GemmProblem& p, const auto& emit) {
    with_float_instance(p, [&](auto t, auto ta, auto tb) {
      std::apply([&](const auto&... a) {
        emit.template kernel<decltype(kernel(ta, tb, t))::value>(
            tile_geometry(p, Tile), [&] { return Described{"the product", one_element_text(Tile), one_element(p, Tile)}; }, a...);
      }, args(gemm_args<decltype(t)>(p)));
    });
  };
}

// Rung 4's kernel takes the GemmArgs' eleven members as arguments of their own.
const auto spelled_out = [](const auto& g) {
  return std::tuple(g.m, g.n, g.k, g.alpha, g.beta, g.a, g.lda, g.b, g.ldb, g.c, g.ldc);
};
const auto as_is = [](const auto& g) { return std::tuple(g); };

// Selectors: kernel template instantiations for (ta, tb, T) as types.
using kernels::naive_kernel, kernels::restrict_kernel, kernels::tiled_kernel, kernels::tiled_unrolled_kernel;
const auto naive = one_element_per_thread<kernels::naive_block>(
    [](auto ta, auto tb, auto t) { return Instance<naive_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>{}; },
    as_is);
const auto restrict_ = one_element_per_thread<kernels::restrict_block>(
    [](auto ta, auto tb, auto t) { return Instance<restrict_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>{}; },
    spelled_out);
template <int Tile>
const auto tiled = one_element_per_thread<Tile>(
    [](auto ta, auto tb, auto t) { return Instance<tiled_kernel<Tile, decltype(ta)::value, decltype(tb)::value, decltype(t)>>{}; },
    as_is);
const auto unrolled = one_element_per_thread<kernels::unrolled_tile>(
    [](auto ta, auto tb, auto t) {
      return Instance<tiled_unrolled_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>{};
    },
    as_is);

// The precondition of a rung of (tile, tile) blocks.
std::function<std::optional<std::string>(const GemmProblem&)> fits_tiles(int tile) {
  return [tile](const GemmProblem& p) { return fits(p, tile_grid(p, tile)); };
}

const std::vector<DType> kFloats = {DType::f32, DType::f64};

}  // namespace

void register_seed_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_row_per_thread", .backend = Backend::cuda, .rung = 1,
                 .summary = "one thread computes one whole row of C", .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = [](const GemmProblem& p) { return fits(p, row_per_thread_grid(p)); },
                 .run = runs(row_per_thread), .launches = plans(row_per_thread)}});
  registry.add({{.name = "cuda_col_per_thread", .backend = Backend::cuda, .rung = 2,
                 .summary = "one thread computes one whole column of C", .dtypes = kFloats,
                 .min_compute_capability = 50},
                {.precondition = [](const GemmProblem& p) { return fits(p, column_per_thread_grid(p)); },
                 .run = runs(column_per_thread), .launches = plans(column_per_thread)}});
  registry.add({{.name = "cuda_naive", .backend = Backend::cuda, .rung = 3,
                 .summary = "one thread per element of C, in 16 x 16 blocks (the textbook kernel)", .dtypes = kFloats,
                 .min_compute_capability = 50},
                {.precondition = fits_tiles(kernels::naive_block), .run = runs(naive), .launches = plans(naive)}});
  registry.add({{.name = "cuda_restrict", .backend = Backend::cuda, .rung = 4,
                 .summary = "the naive kernel with `const T* __restrict__` operands and the k loop unrolled by 8",
                 .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = fits_tiles(kernels::restrict_block), .run = runs(restrict_),
                 .launches = plans(restrict_)}});
  registry.add({{.name = "cuda_tiled8", .backend = Backend::cuda, .rung = 5,
                 .summary = "shared-memory tiling, one (TILE, TILE) block of threads per (TILE, TILE) tile of C, TILE in {8, 16, 32}",
                 .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = fits_tiles(8), .run = runs(tiled<8>), .launches = plans(tiled<8>)}});
  registry.add({{.name = "cuda_tiled16", .backend = Backend::cuda, .rung = 5,
                 .summary = "16x16 tiles of op(A) and op(B) staged in shared memory per k step", .dtypes = kFloats,
                 .min_compute_capability = 50},
                {.precondition = fits_tiles(16), .run = runs(tiled<16>), .launches = plans(tiled<16>)}});
  registry.add({{.name = "cuda_tiled32", .backend = Backend::cuda, .rung = 5,
                 .summary = "32x32 tiles of op(A) and op(B) staged in shared memory per k step", .dtypes = kFloats,
                 .min_compute_capability = 50},
                {.precondition = fits_tiles(32), .run = runs(tiled<32>), .launches = plans(tiled<32>)}});
  registry.add({{.name = "cuda_tiled_unrolled", .backend = Backend::cuda, .rung = 6,
                 .summary = "rung 5 at TILE = 32, explicitly unrolled, with padded tiles for transposed operands",
                 .dtypes = kFloats, .min_compute_capability = 50},
                {.precondition = fits_tiles(kernels::unrolled_tile), .run = runs(unrolled),
                 .launches = plans(unrolled)}});
}

}  // namespace gemmkit::cuda

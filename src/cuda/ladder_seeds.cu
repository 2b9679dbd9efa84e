// Launchers and registry entries for rungs 1-6, the kernels of the seed texts: one thread
// per row, per column, per element, the restrict/unroll variant, and shared-memory tiling.
// These are teaching rungs: correct for every problem, never chosen by `--kernel auto`.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "cuda/kernels/gemm/seeds/01_row_per_thread.cuh"
#include "cuda/kernels/gemm/seeds/02_column_per_thread.cuh"
#include "cuda/kernels/gemm/seeds/03_naive.cuh"
#include "cuda/kernels/gemm/seeds/04_restrict.cuh"
#include "cuda/kernels/gemm/seeds/05_tiled.cuh"
#include "cuda/kernels/gemm/seeds/06_tiled_unrolled.cuh"
#include "cuda/ladder.hpp"
#include "cuda/explain_launch.hpp"
#include "cuda/launch.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::GemmArgs;

// Threads per block of the one-dimensional rungs 1 and 2. They have only m (or n)
// threads in all, so small blocks spread that little work over more SMs.
constexpr int line_block = 64;

bool empty_output(const GemmProblem& p) { return p.m == 0 || p.n == 0; }

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

// ---- launchers ------------------------------------------------------------------------

template <class T>
void run_row_per_thread(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = row_per_thread_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::row_per_thread_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
  });
  check_launch("row_per_thread_kernel");
}

template <class T>
void run_column_per_thread(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = column_per_thread_geometry(p);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::column_per_thread_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
  });
  check_launch("column_per_thread_kernel");
}

template <class T>
void run_naive(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = tile_geometry(p, kernels::naive_block);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::naive_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
  });
  check_launch("naive_kernel");
}

template <class T>
void run_restrict(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = tile_geometry(p, kernels::restrict_block);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::restrict_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(
            g.m, g.n, g.k, g.alpha, g.beta, g.a, g.lda, g.b, g.ldb, g.c, g.ldc);
  });
  check_launch("restrict_kernel");
}

template <int TILE, class T>
void run_tiled(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = tile_geometry(p, TILE);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::tiled_kernel<TILE, decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
  });
  check_launch("tiled_kernel");
}

template <class T>
void run_tiled_unrolled(const GemmProblem& p, const KernelLaunch& l) {
  if (empty_output(p)) return;
  const GemmArgs<T> g = gemm_args<T>(p);
  const Geometry geo = tile_geometry(p, kernels::unrolled_tile);
  with_transposes(p, [&](auto ta, auto tb) {
    kernels::tiled_unrolled_kernel<decltype(ta)::value, decltype(tb)::value, T><<<geo.grid, geo.block, 0, l.stream>>>(g);
  });
  check_launch("tiled_unrolled_kernel");
}

// The entry's run function: calls launch(T{}, p) with T the problem's element type (f32 or
// f64; the registry sends no other), so one generic lambda covers both instantiations.
template <class Launch>
std::function<void(const GemmProblem&, const KernelLaunch&)> for_each_dtype(Launch launch) {
  return [launch](const GemmProblem& p, const KernelLaunch& l) {
    if (p.dtype == DType::f64) launch(double{}, p, l);
    else if (p.dtype == DType::f32) launch(float{}, p, l);
    else fail(ErrorCategory::internal, "seed kernels: unsupported dtype");
  };
}

// The entry's launches: plan(T{}, ta, tb, p) for the problem's element type and transposes,
// the instantiation run() launches.
template <class Plan>
std::function<std::vector<LaunchPlan>(const GemmProblem&, const LaunchQueries&)> plans(Plan plan) {
  return [plan](const GemmProblem& p, const LaunchQueries&) {
    std::vector<LaunchPlan> out;
    with_transposes(p, [&](auto ta, auto tb) {
      if (p.dtype == DType::f64) out.push_back(plan(double{}, ta, tb, p));
      else out.push_back(plan(float{}, ta, tb, p));
    });
    return out;
  };
}

KernelEntry seed_entry(std::string name, int rung, std::string summary,
                       std::function<std::optional<std::string>(const GemmProblem&)> precondition,
                       std::function<void(const GemmProblem&, const KernelLaunch&)> run,
                       std::function<std::vector<LaunchPlan>(const GemmProblem&, const LaunchQueries&)> launches) {
  return {.name = std::move(name),
          .backend = Backend::cuda,
          .rung = rung,
          .role = KernelRole::ladder,
          .summary = std::move(summary),
          .dtypes = {DType::f32, DType::f64},
          .min_compute_capability = 50,
          .auto_priority = 0,
          .precondition = std::move(precondition),
          .run = std::move(run),
          .launches = std::move(launches)};
}

}  // namespace

void register_seed_kernels(Registry& registry) {
  // Each run lambda receives a value of the element type (see for_each_dtype).
  registry.add(seed_entry(
      "cuda_row_per_thread", 1, "one thread computes one whole row of C",
      [](const GemmProblem& p) { return fits(p, row_per_thread_grid(p)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_row_per_thread<decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        return plan_of<kernels::row_per_thread_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            row_per_thread_geometry(p), "the product",
            "one row of C per thread: row = blockIdx.x * blockDim.x + threadIdx.x, every column of it",
            whole_row(p));
      })));
  registry.add(seed_entry(
      "cuda_col_per_thread", 2, "one thread computes one whole column of C",
      [](const GemmProblem& p) { return fits(p, column_per_thread_grid(p)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_column_per_thread<decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        return plan_of<kernels::column_per_thread_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            column_per_thread_geometry(p), "the product",
            "one column of C per thread: column = blockIdx.x * blockDim.x + threadIdx.x, every row of it",
            whole_column(p));
      })));
  registry.add(seed_entry(
      "cuda_naive", 3, "one thread per element of C, in 16 x 16 blocks (the textbook kernel)",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, kernels::naive_block)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_naive<decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        constexpr int tile = kernels::naive_block;
        return plan_of<kernels::naive_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, tile), "the product", one_element_text(tile), one_element(p, tile));
      })));
  registry.add(seed_entry(
      "cuda_restrict", 4, "the naive kernel with `const T* __restrict__` operands and the k loop unrolled by 8",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, kernels::restrict_block)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_restrict<decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        constexpr int tile = kernels::restrict_block;
        return plan_of<kernels::restrict_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, tile), "the product", one_element_text(tile), one_element(p, tile));
      })));
  registry.add(seed_entry(
      "cuda_tiled8", 5, "shared-memory tiling, one (TILE, TILE) block of threads per (TILE, TILE) tile of C, TILE in {8, 16, 32}",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, 8)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_tiled<8, decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        return plan_of<kernels::tiled_kernel<8, decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, 8), "the product", one_element_text(8), one_element(p, 8));
      })));
  registry.add(seed_entry(
      "cuda_tiled16", 5, "16x16 tiles of op(A) and op(B) staged in shared memory per k step",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, 16)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_tiled<16, decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        return plan_of<kernels::tiled_kernel<16, decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, 16), "the product", one_element_text(16), one_element(p, 16));
      })));
  registry.add(seed_entry(
      "cuda_tiled32", 5, "32x32 tiles of op(A) and op(B) staged in shared memory per k step",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, 32)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_tiled<32, decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        return plan_of<kernels::tiled_kernel<32, decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, 32), "the product", one_element_text(32), one_element(p, 32));
      })));
  registry.add(seed_entry(
      "cuda_tiled_unrolled", 6,
      "rung 5 at TILE = 32, explicitly unrolled, with padded tiles for transposed operands",
      [](const GemmProblem& p) { return fits(p, tile_grid(p, kernels::unrolled_tile)); },
      for_each_dtype([](auto t, const GemmProblem& p, const KernelLaunch& l) { run_tiled_unrolled<decltype(t)>(p, l); }),
      plans([](auto t, auto ta, auto tb, const GemmProblem& p) {
        constexpr int tile = kernels::unrolled_tile;
        return plan_of<kernels::tiled_unrolled_kernel<decltype(ta)::value, decltype(tb)::value, decltype(t)>>(
            tile_geometry(p, tile), "the product", one_element_text(tile), one_element(p, tile));
      })));
}

}  // namespace gemmkit::cuda

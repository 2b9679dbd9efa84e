// Internal: a launch's configuration as one value (Geometry) that a launcher computes in one
// function and both launches with and describes (LaunchPlan, for KernelEntry::launches and
// `gemmkit explain`), and helpers for the thread-to-C mappings the plans give.
#pragma once

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <typeinfo>
#include <functional>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemmkit/explain.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/launch_plan.hpp"

namespace gemmkit::cuda {

// Grid, block, dynamic shared memory and cluster of one launch.
struct Geometry {
  dim3 grid, block;
  std::size_t smem = 0;
  dim3 cluster = dim3(1, 1, 1);
};

inline Dim3 to_dim(dim3 d) { return {d.x, d.y, d.z}; }

template <auto Kernel>
struct KernelTag {};

// The kernel's name as normalized_kernel_name gives it (the build-time records' key). Taken
// from the mangled name of a type that holds the kernel, demangled: unlike the compiler's
// pretty-printed names it spells out template arguments left at their defaults, as the
// demangled names the records were made from do.
template <auto Kernel>
const std::string& kernel_name() {
  static const std::string name = [] {
    int status = 0;
    char* demangled = abi::__cxa_demangle(typeid(KernelTag<Kernel>).name(), nullptr, nullptr, &status);
    const std::string text = demangled && status == 0 ? demangled : __PRETTY_FUNCTION__;
    std::free(demangled);
    return normalized_kernel_name(text);
  }();
  return name;
}

template <auto Kernel>
LaunchPlan plan_of(const Geometry& g, std::string purpose, std::string mapping,
                   std::function<std::vector<CElements>(Dim3, Dim3)> elements = {}) {
  LaunchPlan plan;
  plan.kernel = kernel_name<Kernel>();
  plan.function = reinterpret_cast<const void*>(Kernel);
  plan.purpose = std::move(purpose);
  plan.grid = to_dim(g.grid);
  plan.block = to_dim(g.block);
  plan.cluster = to_dim(g.cluster);
  plan.dynamic_smem = g.smem;
  plan.mapping = std::move(mapping);
  plan.elements = std::move(elements);
  return plan;
}

// A launch sequence written once against an emitter: LaunchEmit queues each launch on its
// stream, PlanEmit describes it (for KernelEntry::launches), so the two cannot disagree.
// Call as emit.template launch<kernel>(grid, block, smem, purpose, mapping, args...).
struct LaunchEmit {
  cudaStream_t stream;
  template <auto Kernel, class... Args>
  void launch(dim3 grid, dim3 block, std::size_t smem, const char*, const char*, const Args&... args) const {
    Kernel<<<grid, block, smem, stream>>>(args...);
  }
};

struct PlanEmit {
  std::vector<LaunchPlan>* out;
  template <auto Kernel, class... Args>
  void launch(dim3 grid, dim3 block, std::size_t smem, const char* purpose, const char* mapping, const Args&...) const {
    out->push_back(plan_of<Kernel>({grid, block, smem}, purpose, mapping));
  }
};

// The lattice rows row, row + row_step, ... (rows of them) x columns likewise, clipped to
// the problem's m x n C; nothing when the thread's first element lies outside.
inline void add_clipped(std::vector<CElements>& out, const GemmProblem& p, std::int64_t row,
                        std::int64_t rows, std::int64_t row_step, std::int64_t col,
                        std::int64_t cols, std::int64_t col_step) {
  const auto inside = [](std::int64_t first, std::int64_t count, std::int64_t step, std::int64_t limit) {
    if (first >= limit) return std::int64_t(0);
    return std::min(count, (limit - first + step - 1) / step);
  };
  const std::int64_t r = inside(row, rows, row_step, p.m), c = inside(col, cols, col_step, p.n);
  if (r > 0 && c > 0) out.push_back({row, r, row_step, col, c, col_step});
}

// A rung whose thread (ty, tx) of a block at tile (row0, col0) writes one lattice of C:
// rows row0 + r_first + i * r_step (i < rows), columns likewise.
struct TileMap {
  std::int64_t rows, r_step, cols, c_step;
};

}  // namespace gemmkit::cuda

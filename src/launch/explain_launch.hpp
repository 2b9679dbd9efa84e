// Internal: the launch half of the launcher toolkit (launch.hpp has the dispatch half). A
// launch's configuration is one value (Geometry) that a launcher computes in one function
// and both launches with (launch_geometry: dynamic shared memory and clusters included) and
// describes (LaunchPlan, for KernelEntry::launches and `gemmkit explain`); the residency
// queries planners ask of the device; emitters, so that one launcher written against them
// both runs and describes (ladder.hpp's runs() and plans()); and helpers for the
// thread-to-C mappings the plans give.
#pragma once

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>
#include <typeinfo>
#include <functional>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/jit_kernels.hpp"
#include "launch/launch.hpp"
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

// A kernel instantiation as a type, so that a function can pick one at run time and hand it
// on: f(Instance<kernel<...>>{}), then decltype(k)::value inside f.
template <auto Kernel>
using Instance = std::integral_constant<decltype(Kernel), Kernel>;

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

// A kernel compiled ahead of time as a KernelRef (jit_kernels.hpp).
template <auto Kernel>
inline constexpr char ahead_of_time_facts[kKernelFacts] = {};
template <auto Kernel>
KernelRef ahead_of_time() {
  return {reinterpret_cast<const void*>(Kernel), &kernel_name<Kernel>(), ahead_of_time_facts<Kernel>};
}

inline LaunchPlan plan_of(const KernelRef& kernel, const Geometry& g, std::string purpose, std::string mapping,
                          std::function<std::vector<CElements>(Dim3, Dim3)> elements = {}) {
  LaunchPlan plan;
  plan.kernel = *kernel.name;
  plan.function = kernel.function;
  if (kernel.compiled) {
    const jit::CompiledResources& r = kernel.compiled->resources;
    plan.compiled = {true, r.registers, std::size_t(r.static_smem), std::size_t(r.stack_bytes), r.spill_stores,
                     r.spill_loads, jit::arch_name(kernel.compute_capability)};
  }
  plan.purpose = std::move(purpose);
  plan.grid = to_dim(g.grid);
  plan.block = to_dim(g.block);
  plan.cluster = to_dim(g.cluster);
  plan.dynamic_smem = g.smem;
  plan.mapping = std::move(mapping);
  plan.elements = std::move(elements);
  return plan;
}

template <auto Kernel>
LaunchPlan plan_of(const Geometry& g, std::string purpose, std::string mapping,
                   std::function<std::vector<CElements>(Dim3, Dim3)> elements = {}) {
  return plan_of(ahead_of_time<Kernel>(), g, std::move(purpose), std::move(mapping), std::move(elements));
}

// A launch of `g.grid` blocks with the cluster dimension g.cluster, for cudaLaunchKernelEx
// and cudaOccupancyMaxActiveClusters. The attribute lives in the object, which config.attrs
// points into.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterLaunch(const Geometry& g, cudaStream_t stream = nullptr) {
    config.gridDim = g.grid;
    config.blockDim = g.block;
    config.dynamicSmemBytes = g.smem;
    config.stream = stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = g.cluster.x;
    attribute.val.clusterDim.y = g.cluster.y;
    attribute.val.clusterDim.z = g.cluster.z;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

inline bool has_clusters(const Geometry& g) { return g.cluster.x * g.cluster.y * g.cluster.z > 1; }

// Queues Kernel in geometry g on `stream` and checks the launch: the opt-in to its dynamic
// shared memory made once per context, clusters through cudaLaunchKernelEx.
template <auto Kernel, class... Args>
void launch_geometry(const Context& ctx, cudaStream_t stream, const Geometry& g, const Args&... args) {
  if (g.smem > 0) allow_dynamic_smem<Kernel>(ctx, g.smem);
  if (has_clusters(g)) {
    const ClusterLaunch launch(g, stream);
    GEMMKIT_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, Kernel, args...));
  } else {
    Kernel<<<g.grid, g.block, g.smem, stream>>>(args...);
  }
  check_launch(kernel_name<Kernel>().c_str());
}

// Blocks of Kernel one SM runs at once (0: none fits) in geometry g's block and dynamic
// shared memory; asked once per context, as the query costs host time inside every timed
// call otherwise.
template <auto Kernel>
int blocks_per_sm(const Context& ctx, const Geometry& g) {
  return ctx.cached(&fact_key<ResidentBlocks, Kernel>, [&] {
    if (g.smem > 0) allow_dynamic_smem<Kernel>(ctx, g.smem);
    int blocks = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, Kernel, int(g.block.x * g.block.y * g.block.z), g.smem));
    return blocks;
  });
}

// Clusters of g.cluster blocks of Kernel that the device runs at once (0: none fits), asked
// once per context and Key (a tag type: one per cluster shape a launcher asks about).
struct ActiveClusters;
template <auto Kernel, class Key = ActiveClusters>
int active_clusters(const Context& ctx, const Geometry& g) {
  return ctx.cached(&fact_key<Key, Kernel>, [&] {
    if (g.smem > 0) allow_dynamic_smem<Kernel>(ctx, g.smem);
    const ClusterLaunch launch(g);
    int clusters = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, Kernel, &launch.config));
    return clusters;
  });
}

// ---- the same for a KernelRef (a kernel compiled on first use, or ahead of time) ----

inline void allow_dynamic_smem(const Context& ctx, const KernelRef& k, std::size_t bytes) {
  ctx.cached(k.facts + 0, [&] {
    GEMMKIT_CUDA_CHECK(cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    return 1;
  });
}

inline int blocks_per_sm(const Context& ctx, const KernelRef& k, const Geometry& g) {
  return ctx.cached(k.facts + 1, [&] {
    if (g.smem > 0) allow_dynamic_smem(ctx, k, g.smem);
    int blocks = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, k.function, int(g.block.x * g.block.y * g.block.z), g.smem));
    return blocks;
  });
}

inline int active_clusters(const Context& ctx, const KernelRef& k, const Geometry& g) {
  const unsigned size = std::min(g.cluster.x * g.cluster.y * g.cluster.z, 16u);
  return ctx.cached(k.facts + 2 + size, [&] {
    if (g.smem > 0) allow_dynamic_smem(ctx, k, g.smem);
    const ClusterLaunch launch(g);
    int clusters = 0;
    GEMMKIT_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, k.function, &launch.config));
    return clusters;
  });
}

// The arguments of a launch, converted to exactly the parameter types of Parameters (a
// function type, void(P...), that the kernel's header declares beside it and the kernel
// checks it against): a kernel compiled on first use takes its arguments as bytes.
template <class Parameters>
struct Signature;
template <class... Params>
struct Signature<void(Params...)> {
  template <class... Args>
  struct Arguments {
    std::tuple<std::remove_cv_t<Params>...> values;
    explicit Arguments(const Args&... args) : values(args...) {}
  };
};

// Queues k in geometry g on `stream` with `args` (converted to Parameters), and checks the
// launch.
template <class Parameters, class... Args>
void launch_kernel(const Context& ctx, cudaStream_t stream, const Geometry& g, const KernelRef& k, const Args&... args) {
  typename Signature<Parameters>::template Arguments<Args...> arguments(args...);
  void* pointers[sizeof...(Args)];
  std::apply([&](auto&... values) {
    int i = 0;
    ((pointers[i++] = &values), ...);
  }, arguments.values);
  if (g.smem > 0) allow_dynamic_smem(ctx, k, g.smem);
  const ClusterLaunch launch(g, stream);
  cudaLaunchConfig_t config = launch.config;
  if (!has_clusters(g)) config.numAttrs = 0;
  GEMMKIT_CUDA_CHECK(cudaLaunchKernelExC(&config, k.function, pointers));
  check_launch(k.name->c_str());
}

// What a launch plan says besides the geometry: what the launch is for, and which elements
// of C a thread writes (in words, and as lattices for `explain --thread`).
struct Described {
  std::string purpose, mapping;
  std::function<std::vector<CElements>(Dim3, Dim3)> elements;
};

// A launcher written once against an emitter: LaunchEmit queues each launch on its stream,
// PlanEmit describes it (for KernelEntry::launches), JitListEmit lists the kernels compiled
// on first use it can launch, so none of them can disagree. One of
//   emit.template launch<kernel>(grid, block, smem, purpose, mapping, args...),
//   emit.template kernel<kernel>(geometry, describe, args...): the geometry's clusters and
//   dynamic shared memory included, `describe()` returning the Described, called only to
//   plan (so a launch builds no text), or
//   emit.template jit<Parameters>(jit_kernel, geometry, describe, args...): the same for a
//   kernel compiled on first use (runtime/cuda/jit_kernels.hpp), Parameters its signature.
struct LaunchEmit {
  cudaStream_t stream;
  const Context* context = nullptr;  // kernel<> with dynamic shared memory, and jit<>, need it
  template <auto Kernel, class... Args>
  void launch(dim3 grid, dim3 block, std::size_t smem, const char*, const char*, const Args&... args) const {
    Kernel<<<grid, block, smem, stream>>>(args...);
  }
  template <auto Kernel, class Describe, class... Args>
  void kernel(const Geometry& g, Describe&&, const Args&... args) const {
    launch_geometry<Kernel>(*context, stream, g, args...);
  }
  template <class Parameters, class Describe, class... Args>
  void jit(const JitKernel& k, const Geometry& g, Describe&&, const Args&... args) const {
    launch_kernel<Parameters>(*context, stream, g, jit_kernel(*context, k), args...);
  }
};

struct PlanEmit {
  std::vector<LaunchPlan>* out;
  const LaunchQueries* queries = nullptr;  // jit<> needs it
  template <auto Kernel, class... Args>
  void launch(dim3 grid, dim3 block, std::size_t smem, const char* purpose, const char* mapping, const Args&...) const {
    out->push_back(plan_of<Kernel>({grid, block, smem}, purpose, mapping));
  }
  template <auto Kernel, class Describe, class... Args>
  void kernel(const Geometry& g, Describe&& describe, const Args&...) const {
    Described d = describe();
    out->push_back(plan_of<Kernel>(g, std::move(d.purpose), std::move(d.mapping), std::move(d.elements)));
  }
  template <class Parameters, class Describe, class... Args>
  void jit(const JitKernel& k, const Geometry& g, Describe&& describe, const Args&...) const {
    Described d = describe();
    out->push_back(plan_of(jit_kernel(*queries, k), g, std::move(d.purpose), std::move(d.mapping), std::move(d.elements)));
  }
};

struct JitListEmit {
  std::vector<const JitKernel*>* out;  // each kernel once
  template <auto Kernel, class... Args>
  void launch(dim3, dim3, std::size_t, const char*, const char*, const Args&...) const {}
  template <auto Kernel, class Describe, class... Args>
  void kernel(const Geometry&, Describe&&, const Args&...) const {}
  template <class Parameters, class Describe, class... Args>
  void jit(const JitKernel& k, const Geometry&, Describe&&, const Args&...) const {
    if (std::find(out->begin(), out->end(), &k) == out->end()) out->push_back(&k);
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

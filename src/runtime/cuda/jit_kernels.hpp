// Internal: kernels compiled on first use (src/jit) as launchers see them. A launcher names an
// instantiation once per process (a JitKernel, a function's static), and asks its context for
// it at each call: the first call compiles it (or reads it from the cache) and loads it into the
// context's device (cudaLibraryLoadData); later calls find it in the context. What a launch needs
// of a kernel, compiled ahead of time or on first use alike, is a KernelRef (explain_launch.hpp
// has the helpers that take one).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "jit/jit.hpp"

namespace gemmkit {
class Context;
struct LaunchQueries;
}

namespace gemmkit::cuda {

// One instantiation, defined once per process.
struct JitKernel {
  jit::KernelSpec spec;
  std::string name;  // as explain names kernels: normalized_kernel_name(spec.expression)
  explicit JitKernel(jit::KernelSpec s);
};

inline constexpr int kKernelFacts = 2 + 17;

// A kernel as the launch helpers take it.
struct KernelRef {
  // For the runtime's launch, attribute and occupancy calls: a stub's address (ahead of time)
  // or a cudaKernel_t (on first use); null for a kernel planned without a device.
  const void* function = nullptr;
  const std::string* name = nullptr;
  // kKernelFacts distinct addresses, keys of Context::cached: the dynamic shared memory
  // opt-in, resident blocks, then resident clusters by cluster size (1 to 16 blocks; a
  // kernel is asked about one cluster shape per size).
  const char* facts = nullptr;
  const jit::CompiledKernel* compiled = nullptr;  // on first use: what ptxas reported
  int compute_capability = 0;                     // on first use: what it was compiled for
};

// The kernel loaded in ctx (compiled, or read from the cache, the first time).
KernelRef jit_kernel(const Context& ctx, const JitKernel& kernel);

// For a launch plan: loaded in q.context when live, else only compiled for
// q.compute_capability (function null) so that its resources are known.
KernelRef jit_kernel(const LaunchQueries& q, const JitKernel& kernel);

// Every kernel this build compiles on first use (ops/gemm/cuda/register.cu lists the parts).
std::vector<const JitKernel*> all_jit_kernels();

// "gemmkit::cuda::kernels::WgmmaWsConfig<__nv_bfloat16, 2, 4, ...>": a host type's full
// name as a template argument of an instantiation NVRTC compiles.
std::string type_name(const char* mangled);
template <class T>
std::string type_name() {
  return type_name(typeid(T).name());
}

// A template's value argument as a type, for instantiation<>: Value<true>, Value<128>.
template <auto V>
using Value = std::integral_constant<decltype(V), V>;

template <class A>
struct IsValue : std::false_type {};
template <class V, V v>
struct IsValue<std::integral_constant<V, v>> : std::true_type {};

// One template argument as NVRTC reads it: "true", "128", or a type's full name.
template <class A>
std::string template_argument() {
  if constexpr (IsValue<A>::value) {
    if constexpr (std::is_same_v<typename A::value_type, bool>) return A::value ? "true" : "false";
    else return std::to_string(A::value);
  } else {
    return type_name<A>();
  }
}

// "gemmkit::cuda::kernels::simt::coalesced_kernel<false, true, float>": a kernel template
// with its arguments (values as Value<v>).
template <class... A>
std::string instantiation(const std::string& kernel_template) {
  std::string out = kernel_template + "<";
  std::size_t i = 0;
  ((out += (i++ ? ", " : "") + template_argument<A>()), ...);
  return out + ">";
}

// A string literal as a template argument: jit_instance<"ops/...cuh", "gemmkit::...">.
template <std::size_t N>
struct Literal {
  char text[N];
  constexpr Literal(const char (&s)[N]) { std::copy_n(s, N, text); }
};

// The kernel `Template<A...>` of `Header`, defined on its first call (every call of one
// instantiation passes the same dtype and oldest architecture). Its label names the template
// and its arguments without the template's namespace, and the dtype: "wmma_kernel<float,
// false, true> tf32", "cp_async_kernel<WarpTileConfig<64, 64, ...>, ...> f32".
template <Literal Header, Literal Template, class... A>
const JitKernel& jit_instance(const char* dtype, int min_compute_capability) {
  static const JitKernel kernel([&] {
    const std::string full = instantiation<A...>(Template.text);
    const std::string name = Template.text;
    const std::string space = name.substr(0, name.rfind(':') + 1);  // "gemmkit::cuda::kernels::"
    std::string label = full;
    if (!space.empty())
      for (std::size_t at; (at = label.find(space)) != std::string::npos;) label.erase(at, space.size());
    return jit::KernelSpec{Header.text, full, label + " " + dtype, dtype, min_compute_capability};
  }());
  return kernel;
}

}  // namespace gemmkit::cuda

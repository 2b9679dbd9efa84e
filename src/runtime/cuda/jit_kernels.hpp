// Internal: kernels compiled on first use (src/jit) as launchers see them. A launcher names an
// instantiation once per process (a JitKernel, a function's static), and asks its context for
// it at each call: the first call compiles it (or reads it from the cache) and loads it into the
// context's device (cudaLibraryLoadData); later calls find it in the context. What a launch needs
// of a kernel, compiled ahead of time or on first use alike, is a KernelRef (explain_launch.hpp
// has the helpers that take one).
#pragma once

#include <string>
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

// A kernel as the launch helpers take it.
struct KernelRef {
  // For the runtime's launch, attribute and occupancy calls: a stub's address (ahead of time)
  // or a cudaKernel_t (on first use); null for a kernel planned without a device.
  const void* function = nullptr;
  const std::string* name = nullptr;
  // Three distinct addresses, keys of Context::cached: the dynamic shared memory opt-in,
  // resident blocks, resident clusters.
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

}  // namespace gemmkit::cuda

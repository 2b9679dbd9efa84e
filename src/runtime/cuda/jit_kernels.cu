#include "runtime/cuda/jit_kernels.hpp"

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "gemmkit/explain.hpp"
#include "gemmkit/launch_plan.hpp"
#include "runtime/context_impl.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"

namespace gemmkit::cuda {
namespace {

// A kernel loaded into one context's device.
struct Loaded {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  std::shared_ptr<const jit::CompiledKernel> compiled;
  char facts[kKernelFacts] = {};
  ~Loaded() {
    if (library) cudaLibraryUnload(library);  // never throws: at context close
  }
};

KernelRef ref_of(const JitKernel& k, const Loaded& loaded, int compute_capability) {
  return {reinterpret_cast<const void*>(loaded.kernel), &k.name, loaded.facts, loaded.compiled.get(),
          compute_capability};
}

}  // namespace

JitKernel::JitKernel(jit::KernelSpec s) : spec(std::move(s)), name(normalized_kernel_name(spec.expression)) {}

KernelRef jit_kernel(const Context& ctx, const JitKernel& kernel) {
  Context::Impl& impl = ctx.impl();
  const int cc = ctx.compute_capability();
  {
    const std::lock_guard lock(impl.mutex);
    if (auto it = impl.jit_kernels.find(&kernel); it != impl.jit_kernels.end())
      return ref_of(kernel, *static_cast<const Loaded*>(it->second.get()), cc);
  }
  // Compiled and loaded outside the lock: other kernels' calls go on meanwhile.
  auto loaded = std::make_shared<Loaded>();
  loaded->compiled = jit::compile(kernel.spec, cc);
  {
    const DeviceScope scope(ctx.device());
    GEMMKIT_CUDA_CHECK(cudaLibraryLoadData(&loaded->library, loaded->compiled->cubin.data(), nullptr, nullptr, 0,
                                           nullptr, nullptr, 0));
    GEMMKIT_CUDA_CHECK(cudaLibraryGetKernel(&loaded->kernel, loaded->library, loaded->compiled->lowered_name.c_str()));
  }
  const std::lock_guard lock(impl.mutex);
  // Another thread may have loaded it meanwhile: keep the first, so every call sees one kernel.
  const auto [it, added] = impl.jit_kernels.emplace(&kernel, std::shared_ptr<void>(loaded, loaded.get()));
  return ref_of(kernel, *static_cast<const Loaded*>(it->second.get()), cc);
}

KernelRef jit_kernel(const LaunchQueries& q, const JitKernel& kernel) {
  if (q.context) return jit_kernel(*q.context, kernel);
  // Planned only: the compiled kernel lives as long as the process keeps it (jit::compile).
  const auto compiled = jit::compile(kernel.spec, q.compute_capability);
  static const char facts[kKernelFacts] = {};  // never asked: there is no device
  return {nullptr, &kernel.name, facts, compiled.get(), q.compute_capability};
}

std::string type_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string text = demangled && status == 0 ? demangled : mangled;
  std::free(demangled);
  return text;
}

}  // namespace gemmkit::cuda

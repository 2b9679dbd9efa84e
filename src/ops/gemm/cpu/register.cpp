// The CPU backend's registry entries, in ladder order. A rung is one file, <name>.cpp, with
// its kernel and `KernelEntry cpu::<name>_entry()`, and one line in this list.
#include "gemmkit/registry.hpp"
#include "ops/gemm/cpu/cpu_kernels.hpp"

#define GEMMKIT_CPU_RUNGS(RUNG) \
  RUNG(openblas)                \
  RUNG(widened)                 \
  RUNG(naive)                   \
  RUNG(restrict)                \
  RUNG(interchanged)            \
  RUNG(blocked)

namespace gemmkit {
namespace cpu {
#define GEMMKIT_DECLARE_ENTRY(name) KernelEntry name##_entry();
GEMMKIT_CPU_RUNGS(GEMMKIT_DECLARE_ENTRY)
#undef GEMMKIT_DECLARE_ENTRY
}  // namespace cpu

void detail::register_cpu_kernels(Registry<GemmProblem>& registry) {
#define GEMMKIT_ADD_ENTRY(name) registry.add(cpu::name##_entry());
  GEMMKIT_CPU_RUNGS(GEMMKIT_ADD_ENTRY)
#undef GEMMKIT_ADD_ENTRY
}

}  // namespace gemmkit

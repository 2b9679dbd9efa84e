// Launchers and registry entries for rung 24, the int8 wgmma kernel (24_wgmma_i8.cuh): int8
// GEMM with int32 results, and the fused modular GEMM of gemmkit/modular.hpp.
#include "cuda/modular.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit::cuda {

bool fused_modular_gemm_available(const Context&) { return false; }

std::size_t fused_modular_gemm_workspace_bytes(const Context&, const ModularGemmProblem&) { return 0; }

void fused_modular_gemm(Context&, const ModularOperands&, Stream, Workspace) {
  fail(ErrorCategory::internal, "the fused modular GEMM is not in this build");
}

}  // namespace gemmkit::cuda

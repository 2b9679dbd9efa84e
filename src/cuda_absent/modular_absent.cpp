// The modular int8 GEMM in a build made without nvcc: the checks still run (usage errors
// first, then the CPU context is told the GEMM needs CUDA), then the device error says that
// this build has no CUDA.
#include "ops/modular/modular_validate.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/modular.hpp"

namespace gemmkit {

std::size_t modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p) {
  detail::validate_modular(p, false);
  detail::require_cuda_context(ctx);
  fail(ErrorCategory::device, no_device_message());
}

void modular_gemm(Context& ctx, const ModularGemmProblem& p, Stream, Workspace) {
  validate(p);
  detail::require_cuda_context(ctx);
  fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit

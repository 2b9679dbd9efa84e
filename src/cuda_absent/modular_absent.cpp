// The modular int8 GEMM in a build made without nvcc: the checks still run (usage errors
// first), then the device error says that this build has no CUDA.
#include "core/modular_validate.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/modular.hpp"

namespace gemmkit {

std::size_t modular_gemm_workspace_bytes(const Context&, const ModularGemmProblem& p) {
  detail::validate_modular(p, false);
  fail(ErrorCategory::device, no_device_message());
}

void modular_gemm(Context&, const ModularGemmProblem& p, Stream, Workspace) {
  validate(p);
  fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit

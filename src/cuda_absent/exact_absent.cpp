// The exact integer GEMM in a build made without nvcc: it says so instead of failing to link.
#include "gemmkit/device.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit {

std::size_t exact_integer_gemm_workspace_bytes(const Context&, const GemmProblem&) {
  require_cuda_device();  // throws: no CUDA in this build
  return 0;
}
ExactPlan exact_integer_gemm(Context&, const GemmProblem&, Stream, Workspace, const ExactLimbsOut*) {
  require_cuda_device();
  return {};
}
ExactGemmReport exact_gemm_report(const GemmProblem&, Stream, Workspace) {
  require_cuda_device();
  return {};
}
ExactPlan exact_integer_gemm(const GemmProblem&, const ExactLimbsOut*, Context*) {
  require_cuda_device();
  return {};
}

}  // namespace gemmkit

// INTERIM (branch exact): device halves of interfaces 1 and 2 of issue 19, refusing to run,
// so that this branch links before helper i8gemm's and the lead's commits are merged.
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"

namespace gemmkit {

std::size_t modular_gemm_workspace_bytes(const Context&, const ModularGemmProblem&) { return 0; }
void modular_gemm(Context&, const ModularGemmProblem&, Stream, Workspace) {
  fail(ErrorCategory::internal, "modular_gemm: branch i8gemm is not merged into this build");
}
}  // namespace gemmkit

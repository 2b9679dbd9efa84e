// Internal: what the modular int8 GEMM (modular_gemm.cu) asks of rung 24's launcher
// (hopper/24_wgmma_i8.cu), whose kernel runs the fused path.
#pragma once

#include <cstdint>

#include "gemmkit/modular.hpp"

namespace gemmkit::cuda {

// A validated, non-empty problem (K > 0) with the operands the GEMM reads: the caller's, or
// copies with rows on 16 bytes (then lda/ldb the padded K, stride 0 for a shared operand).
struct ModularOperands {
  const ModularGemmProblem& problem;  // sizes, moduli, outputs
  const std::int8_t* a;
  std::int64_t lda, stride_a;
  const std::int8_t* b;
  std::int64_t ldb, stride_b;
  std::int64_t k;  // K as read: the problem's, or the padded K when both are copies
};

// Its workspace (before the packed operands).
std::size_t fused_modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p);
// Queues the batch; A and B rows on 16 bytes.
void fused_modular_gemm(Context& ctx, const ModularOperands& o, Stream stream, Workspace workspace);

}  // namespace gemmkit::cuda

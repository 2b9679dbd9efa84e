// INTERIM (branch exact): interface 1 of issue 19 verbatim, until helper i8gemm's header is merged.
#pragma once

#include <cstdint>
#include <vector>

#include "gemmkit/context.hpp"

namespace gemmkit {
// The odd primes below 256, largest first (53): the moduli of int8 tensor-core arithmetic.
const std::vector<std::uint32_t>& int8_moduli();
// Largest K for which int32 sums of K products of centred int8 residues cannot overflow.
std::int64_t int8_k_limit();
// C_q = A_q B_q mod p_q for each modulus q of a batch, on centred int8 residues
// (entries in [-(p-1)/2, (p-1)/2]); results centred too.
struct ModularGemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> moduli;   // batch = moduli.size(); odd, 3..255
  const std::int8_t* a = nullptr; std::int64_t lda = 0, stride_a = 0;  // A_q: m x k row-major
  const std::int8_t* b = nullptr; std::int64_t ldb = 0, stride_b = 0;  // B_q^T: n x k row-major (B column-major)
  std::int8_t* c = nullptr;  std::int64_t ldc = 0,  stride_c = 0;   // C_q: m x n row-major, or null
  std::int8_t* ct = nullptr; std::int64_t ldct = 0, stride_ct = 0;  // C_q^T: n x m row-major, or null
};
std::size_t modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p);
void modular_gemm(Context& ctx, const ModularGemmProblem& p, Stream stream, Workspace workspace);
}  // namespace gemmkit

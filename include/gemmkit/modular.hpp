// Modular int8 GEMM: C_q = A_q B_q mod p_q for a batch of odd moduli p_q <= 255, on centred
// residues (entries in [-(p-1)/2, (p-1)/2], so int8 values), on int8 tensor cores with int32
// accumulation. The product of two residues mod p is at most ((p-1)/2)^2 in magnitude, so
// an int32 sum of K of them is exact while K ((p-1)/2)^2 < 2^31 (K <= int8_k_limit() for
// the int8 primes); each sum is then reduced mod p back to a centred residue. A longer K
// runs in chunks that short, whose residues are added mod p. This is the arithmetic of exact
// computation by residues (walk counts, exact integer GEMM): one product per modulus, the
// Chinese remainder theorem after.
//
// Both operands are K-major (A_q row-major m x k, B_q stored as B_q^T, n x k row-major:
// column-major B), the layout int8 tensor cores read; C_q can be written row-major (C) or
// transposed (C^T, n x m row-major) or both, which are the two layouts the next product of
// a chain of powers reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

// The odd primes below 256, largest first (53): the moduli of int8 tensor-core arithmetic.
const std::vector<std::uint32_t>& int8_moduli();
// Largest K for which int32 sums of K products of centred int8 residues cannot overflow:
// floor((2^31 - 1) / 125^2) = 137,438 for the int8 primes (residues in [-125, 125]). The
// composite moduli 253 and 255 allow a little less (validate checks each problem's own).
std::int64_t int8_k_limit();

// C_q = A_q B_q mod p_q for each modulus q of a batch, on centred int8 residues
// (entries in [-(p-1)/2, (p-1)/2]); results centred too. Matrix q of each operand starts
// q * stride elements after the first (stride 0: one matrix for every modulus).
struct ModularGemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<std::uint32_t> moduli;   // batch = moduli.size(); odd, 3..255
  const std::int8_t* a = nullptr; std::int64_t lda = 0, stride_a = 0;  // A_q: m x k row-major
  const std::int8_t* b = nullptr; std::int64_t ldb = 0, stride_b = 0;  // B_q^T: n x k row-major (B column-major)
  std::int8_t* c = nullptr;  std::int64_t ldc = 0,  stride_c = 0;   // C_q: m x n row-major, or null
  std::int8_t* ct = nullptr; std::int64_t ldct = 0, stride_ct = 0;  // C_q^T: n x m row-major, or null
  DType dtype = DType::i8;  // the residues' type, the only one (the registry's kernels say so)
};

// The modular GEMM's kernels (`gemmkit list modular`), one registry like every operation's:
//   cpu_reference        host pointers: int64 sums reduced once (any K), the CPU backend's
//   cuda_modular_cublas  per modulus one cuBLAS int8 GEMM (cublasGemmEx 8I -> 32I) into the
//                        workspace, then a kernel that reduces the products to residues:
//                        the reference, and the path of devices other than sm_90
//   cuda_modular_fused   rung 24's int8 wgmma kernel with the reduction in its epilogue,
//                        one launch for the whole batch (sm_90 only); auto's choice there
using ModularKernel = Kernel<ModularGemmProblem>;
const Registry<ModularGemmProblem>& modular_registry();

// Throws a usage error naming what is wrong: negative sizes, a modulus that is even or
// outside [3, 255], a leading dimension below its matrix's width,
// a negative stride, a null operand of a non-empty product, no output at all, or outputs
// of a batch that overlap (a nonzero stride below one matrix's span).
void validate(const ModularGemmProblem& problem);

// Device bytes of workspace a call needs for this problem on ctx's device (K beyond the
// int32 limit: also one m x n plane per modulus and output for the chunks' residues). Depends
// on the shapes only: the pointers may be null (sized as if every operand starts on 16 bytes, as
// cudaMalloc's memory does; operands off 16 bytes need more, and modular_gemm says how
// much), and an output counts as asked for when its leading dimension is set. The bytes for
// a problem also serve every smaller one of the same K and outputs (fewer moduli, rows or
// columns), so a caller may run its last, smaller batch or pass in the same workspace.
// `kernel` names the kernel the call would run ("auto": the fused kernel on sm_90, else
// cuBLAS's; on a CPU context the reference).
std::size_t modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p,
                                         std::string_view kernel = "auto");
// Queues the batch on `stream` (pointers in ctx's backend's memory: device pointers of its
// device, or host pointers on a CPU context, where it runs before returning), with
// `workspace` of at least modular_gemm_workspace_bytes() (aligned to kWorkspaceAlignment;
// empty: from the context's pool). Nothing is queued when a check fails. Returns the kernel
// that ran.
const ModularKernel& modular_gemm(Context& ctx, const ModularGemmProblem& p, Stream stream, Workspace workspace,
                                  std::string_view kernel = "auto");

}  // namespace gemmkit

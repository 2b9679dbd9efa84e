// FP64 (and FP32) GEMM emulated on int8 tensor cores: the Ozaki scheme II. Each
// row of op(A) and each column of op(B) is scaled by a power of two so that its
// largest entry has `bits` bits, and rounded to integers A', B' (|A'|, |B'| <=
// 2^bits). Their product C' = A' B' is an integer matrix with |C'| <= k 2^(2
// bits), computed exactly by residues modulo enough int8 primes (one modular
// int8 GEMM per prime, gemmkit/modular.hpp) and the Chinese remainder rebuild;
// each entry is then rounded once to a double and scaled back (f32: rounded to
// a float after alpha and beta). The only errors are the roundings of A and B
// to `bits` bits per row and column, and the final rounding: more moduli, more
// bits. docs/exact.md explains the scheme, its bound and its accuracy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit {

// How many primes, and so how many bits each row of op(A) and column of op(B)
// keeps.
struct OzakiPlan {
  int moduli = 0;
  int bits = 0;                  // the largest entry of each row of op(A) / column of op(B) in
                                 // [2^(bits-1), 2^bits)
  std::string describe() const;  // e.g. "14 int8 primes, 47 bits per row of A and column of B"
  GemmRunReport report() const;  // the same as the kernels' report: "ozaki", moduli, bits
};

// The most bits within 2 k 2^(2 bits) < P (P the product of the first `moduli`
// int8 primes, largest first). moduli == 0: the default, the fewest moduli that
// give the bits of the dtype's mantissa (53 for f64, 24 for f32) plus extra_bits
// (at most kOzakiMaxExtraBits, and 62 bits in all). ozaki_gemm's default passes
// the operands' spread: the most bits by which the mean |entry| of a row of
// op(A) or a column of op(B) sits below the power of two of its largest (0 for
// uniform magnitudes in [1, 2), 5 for exponents spread over +-2^30), so that
// the mean entries keep a full mantissa too. Measured in docs/exact.md: as accurate as native GEMM on every
// input class of the issue. Usage error for moduli outside [2, kCrtMaxModuli],
// too few for one bit at this k, or another dtype.
inline constexpr int kOzakiMaxExtraBits = 9;
OzakiPlan plan_ozaki(std::int64_t k, int moduli = 0, DType dtype = DType::f64, int extra_bits = 0);

// Device bytes of workspace ozaki_gemm takes for `problem` with `moduli` (0:
// the default, sized for the most extra bits it can take): the int8 planes of
// all of op(B), and those of op(A) and C for all of C's rows, or for a pass over
// part of them when all would take more than half the planes of op(B) and more
// than 1 GiB (so about 1.5 times op(B)'s planes: 31 GB for a 32768^3 FP64
// product, instead of 61 in one pass).
std::size_t ozaki_gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem, int moduli = 0);

// C = alpha op(A) op(B) + beta C0 on f64 or f32 device matrices of ctx's device
// (a CUDA context whose device has int8 tensor cores), any layout and
// transposes, batch 1; queued on `stream` with `workspace`, normally
// ozaki_gemm_workspace_bytes() of it. A smaller workspace is taken too: C's
// rows then go in more passes (the same results), down to passes of 64 rows;
// below that, a usage error saying how much is needed. It waits once, after
// scanning the operands (the default plan's extra bits; an Inf or NaN entry is
// a usage error naming the operand and its row or column: native DGEMM would
// spread it, this emulation has no integer for it, and nothing is written
// then). Returns the plan that ran. gemm()'s kernels cuda_ozaki_f64 and
// cuda_ozaki_f32 run it with GemmOptions::moduli (0: the default plan) and report it.
OzakiPlan ozaki_gemm(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace, int moduli = 0);

// The moduli of the emulation spread over `ranks` processes (dist::ozaki_gemm,
// gemmkit/distributed.hpp): rank r takes moduli [first[r], first[r + 1]) of the
// plan's (first has ranks + 1 entries), consecutive, as evenly as they go; the
// remainder goes to the last ranks (rank 0 also scans and rebuilds), and ranks
// beyond the moduli take none.
std::vector<int> ozaki_moduli_by_rank(int moduli, int ranks);

// Host API: the same on host matrices (copied to the device and back; C is written only when
// the call succeeds). `context`: a CUDA context to run in, or null for one made for the call.
OzakiPlan ozaki_gemm(const GemmProblem& host_problem, int moduli = 0, Context* context = nullptr);

}  // namespace gemmkit

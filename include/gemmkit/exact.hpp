// Exact integer arithmetic from int8 residues: the Chinese remainder rebuild that turns the
// residues of an integer matrix modulo several small moduli (what int8 tensor-core GEMMs
// produce, see gemmkit/modular.hpp) back into the integers, on the device. See docs/exact.md
// for the moduli, the bounds and why every step is exact. Below it, the exact integer GEMM
// built on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit {

// The most moduli one rebuild can take: pairwise coprime odd moduli below 256 each have an odd
// prime factor below 256 of their own, and there are 53 such primes. Their product P is at
// most 2^355 (the largest power below 256 of each of those primes).
inline constexpr int kCrtMaxModuli = 53;

// Integers X(r, c) from their centred residues modulo q moduli p_0..p_{q-1}. The rebuilt value
// is the one integer of (-P/2, P/2) with those residues, P = p_0 ... p_{q-1}: it equals X
// whenever |X| <= (P - 1) / 2, which the caller guarantees by choosing enough moduli for a
// bound on |X|.
struct CrtProblem {
  std::int64_t rows = 0, cols = 0;
  // Pairwise coprime odd moduli in [3, 255], at most kCrtMaxModuli (for example a prefix of
  // int8_moduli()).
  std::vector<std::uint32_t> moduli;
  // Plane q holds X mod p_q: entry (r, c) of plane q at residues[q * plane_stride + r * ld + c],
  // centred, in [-(p_q - 1)/2, (p_q - 1)/2].
  const std::int8_t* residues = nullptr;
  std::int64_t ld = 0, plane_stride = 0;
  // Optional gathers (device arrays of rows / cols indices, or null for the identity): entry
  // (r, c) of the result reads row row_index[r] and column col_index[c] of the planes.
  const std::int64_t* row_index = nullptr;
  const std::int64_t* col_index = nullptr;
  // Entry (r, c): `limbs` 64-bit words of two's complement, least significant first, at
  // out + (r * ld_out + c) * limbs. Words beyond crt_limbs(moduli) are the sign's extension;
  // fewer words keep the low ones (enough for any bound the caller's moduli were chosen for:
  // the words that hold that bound and its sign).
  std::uint64_t* out = nullptr;
  std::int64_t ld_out = 0;  // in entries, >= cols
  int limbs = 1;
};

// 64-bit words of two's complement that hold every integer of (-P/2, P/2).
int crt_limbs(const std::vector<std::uint32_t>& moduli);

// Rebuilds every entry, queued on `stream` (CPU context: on the calling thread, pointers in
// host memory). Needs no workspace. Usage error for an invalid problem (moduli not odd, not
// in [3, 255], not pairwise coprime, too many; strides that overlap; null pointers).
void crt_rebuild(Context& ctx, const CrtProblem& problem, Stream stream = nullptr);

// ---- Exact integer GEMM ------------------------------------------------------------------
// C = alpha op(A) op(B) + beta C0 for i32 and i64 problems (C in the input dtype, i64 for i32
// inputs, or exact as limbs), every entry exact: op(A) op(B) is computed modulo enough int8
// primes that their product P exceeds 2 |op(A) op(B)| + 1 everywhere (one modular int8 GEMM
// per prime), rebuilt exactly by the Chinese remainder theorem, and scaled and added in
// multi-word integers. An entry that does not fit C's dtype is reported, never wrapped.

// How the product is computed for a given bound.
struct ExactPlan {
  enum class Method { zero, residues, digits };
  // zero: op(A) op(B) == 0 (k == 0, alpha == 0 or a zero operand); no GEMM runs.
  // residues: modulo int8_moduli()[0 .. moduli).
  // digits: op(A), op(B) split into digits_a, digits_b balanced base-256 digits (int8 in
  //   [-128, 127]), one plain int8 GEMM (int32 sums) per pair of digits, summed with their
  //   weights in multi-word integers.
  Method method = Method::zero;
  int moduli = 0;
  int digits_a = 0, digits_b = 0;
  int gemms = 0;  // int8 GEMMs of order m x n x k the method runs
  int limbs = 1;  // 64-bit words that hold every value of op(A) op(B) the method can rebuild
  // max |op(A)| entry, max |op(B)| entry, and their product times k (as a decimal string:
  // up to 2^157), the bound on |op(A) op(B)| the plan covers.
  // (exact_integer_gemm plans the row-major form: for a column-major problem "a" is B.)
  std::uint64_t max_abs_a = 0, max_abs_b = 0;
  std::string bound;
  std::string describe() const;  // e.g. "residues mod 10 int8 primes (10 int8 GEMMs), |AB| <= 7.6e22"
  GemmRunReport report() const;  // the kernel's report: "exact", int8_gemms, moduli, bound
};

// The plan for |op(A) op(B)| <= max_abs_a * max_abs_b * k: residues modulo the fewest
// int8 primes whose product exceeds 2 * bound + 1, or digit slices when those take fewer
// GEMMs (small entries: |a|, |b| <= 127 take one). Usage error when even all 53 do not
// (i64 entries beyond what 417 bits cover) or k exceeds int8_k_limit().
// digits_allowed: digit slices are considered too (taken when they need fewer GEMMs).
ExactPlan plan_exact_gemm(std::uint64_t max_abs_a, std::uint64_t max_abs_b, std::int64_t k,
                          bool digits_allowed = true);
// The plan for the largest entries the dtype holds (2^31 for i32, 2^63 for i64): what the
// workspace is sized for.
ExactPlan worst_case_exact_plan(DType dtype, std::int64_t k);

// Where a result did not fit C's dtype: the first such entry of C in row-major order of the
// caller's C (column-major problems too), or -1, -1.
struct ExactGemmReport {
  std::int64_t overflow_row = -1, overflow_col = -1;
  std::string value;  // the exact result there, in decimal
  bool overflow() const { return overflow_row >= 0; }
};

// Exact output as limbs instead of C: ExactLimbsOut (gemmkit/gemm.hpp, GemmOptions::limbs).
// Words that hold every alpha op(A) op(B) + beta C0 of the problem's dtype and k.
int exact_output_limbs(const GemmProblem& problem);

// Device bytes of workspace exact_integer_gemm needs for `problem` (sized for the worst
// plan of its dtype and k).
std::size_t exact_integer_gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem);

// Device API: the problem's pointers in device memory of ctx's device (a CUDA context),
// i32 or i64 inputs, any layout and transposes, batch 1. Queues the work on `stream`; it
// waits once, for the 16 bytes of the bound (the plan needs it), before the GEMMs are
// queued. The report goes to the workspace: read it with exact_gemm_report() after the
// stream's work. Returns the plan that ran.
ExactPlan exact_integer_gemm(Context& ctx, const GemmProblem& problem, Stream stream,
                             Workspace workspace, const ExactLimbsOut* limbs_out = nullptr);
// Waits for `stream` and reads the report of the last exact_integer_gemm of `problem` that
// used `workspace`.
ExactGemmReport exact_gemm_report(const GemmProblem& problem, Stream stream, Workspace workspace);

// Host API: the same on host matrices (copied to the device and back). A C entry that does
// not fit is a numeric error naming it; nothing is copied back then. With `limbs_out`
// (host memory), the exact result goes there and C is not written.
ExactPlan exact_integer_gemm(const GemmProblem& host_problem, const ExactLimbsOut* limbs_out = nullptr,
                             Context* context = nullptr);

}  // namespace gemmkit

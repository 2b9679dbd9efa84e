// Verification of GEMM results against an independent oracle. Each check states what it
// guarantees (VerifyResult::check and ::guarantee; src/ops/gemm/verify/verify.cpp explains them):
//  - full: against the exact product (128-bit integers when the inputs are integers, else a
//    double-double reference): relative Frobenius error <= tolerance and every entry within
//    its Cauchy-Schwarz share of it; integer dtypes: every entry exact.
//  - freivalds: randomised (random sign vectors, double-double residuals): an estimate of the
//    same relative error, O(mn + mk + kn); reports the backward error relative to |A||B|.
//  - exact: integer-valued inputs only, any size: Freivalds in exact modular arithmetic;
//    every entry equals the exact product except with probability below 2^-92.
// Floating checks follow IEEE arithmetic: where the inputs hold Inf or NaN, the entries they
// reach must be the Inf or NaN that IEEE gives (checked entry by entry, Freivalds included),
// and an entry whose exact value (of finite terms) is beyond C's dtype fails as an overflow.
// Each entry may also be off by the rounding of subnormals (a floor below every relative
// bound unless products or entries underflow).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/gemm.hpp"

namespace gemmkit {

// 128-bit integers for exact reference sums (a GCC/Clang extension; __extension__ keeps
// -Wpedantic quiet).
__extension__ typedef __int128 int128_t;

enum class VerifyMode { none, automatic, full, freivalds, exact };
// "none|auto|full|freivalds|exact"; usage error otherwise.
VerifyMode parse_verify_mode(std::string_view text);
std::string_view verify_mode_name(VerifyMode mode);

// Relative Frobenius error allowed for a dtype at reduction length k. Grows like sqrt(k)
// past k = 1024 because rounding errors of a length-k sum grow like sqrt(k) on random data.
// Integer dtypes: 0 (exact).
double tolerance(DType dtype, std::int64_t k);

// The dtype whose tolerance applies to a result stored as `data` but computed in `accuracy`
// (a kernel's KernelEntry::accuracy, e.g. tf32 for TF32 tensor cores on f32 data): the less
// precise of the two, so an override can loosen the check but never tighten it. Integer data
// stays exact.
DType tolerance_dtype(DType data, std::optional<DType> accuracy);

// Problems with m*n*k up to this many multiply-adds are checked in full by `automatic`;
// larger ones with `exact` when the inputs are integers whose product the dtype holds
// exactly, else with `freivalds`.
inline constexpr double kFullVerifyLimit = 2.0e9;

// alpha * op(A) * op(B) + beta * C0, M x N, summed in double-double and rounded to double
// (correctly rounded unless the sums cancel by more than about 2^50), as IEEE arithmetic has it
// for Inf and NaN: an entry with a NaN term, Inf times 0, or Inf terms of both signs is NaN,
// one with Inf terms of one sign Inf of that sign; an exact value beyond C's dtype is Inf of
// its sign. c_before is C0 (ldc as in the problem) and may be null when beta == 0. Any dtype.
std::vector<double> reference_gemm(const GemmProblem& problem, const void* c_before);

// The same exactly, for i32/i64 problems: 128-bit accumulation, row-major M x N.
std::vector<int128_t> reference_gemm_exact(const GemmProblem& problem, const void* c_before);

// Whether every entry of A and B (when alpha != 0) and C0 (when beta != 0), alpha and beta
// are integers below 2^63 in magnitude: what `exact` needs. Integer dtypes always are.
bool integer_valued(const GemmProblem& problem, const void* c_before);

struct VerifyResult {
  VerifyMode method = VerifyMode::none;  // full, freivalds or exact (none if not checked)
  bool passed = true;
  double error = 0.0;      // relative Frobenius error (full), its estimate (freivalds)
  double tolerance = 0.0;  // 0 for exact checks
  // Backward error relative to |A||B| (freivalds: max over rows; full: at the largest
  // error); NaN when not computed.
  double backward_error = std::numeric_limits<double>::quiet_NaN();
  // A failed check whose backward error is within what rounding in the tolerance dtype
  // allows ((K + 2) unit roundoffs): the product is ill-conditioned, and a correct GEMM can
  // be as far from the exact one (the detail says so). Tests of kernels on random data may
  // accept it; the result still did not pass.
  bool within_rounding = false;
  std::string check;       // which check ran, e.g. "full, exact integer reference"
  std::string guarantee;   // what passing it means, with the figures
  std::string detail;      // why it failed, e.g. the first mismatching entry
};

// Checks problem.c (the result, host memory) against the oracle. c_before is C as it was
// before the GEMM (needed when beta != 0, else may be null). Integer dtypes are always
// checked exactly (full, or modular past kFullVerifyLimit or with freivalds/exact), and with
// `none` still screened for overflow: a wrapped product fails. `exact` with inputs that are
// not integer-valued (Inf and NaN are not) is a usage error.
// `accuracy`: the precision the kernel computed in when lower than the problem's dtype (pass
// KernelEntry::accuracy, e.g. tf32); the tolerance is then that of
// tolerance_dtype(problem.dtype, accuracy), and a failure message names that dtype.
VerifyResult verify(const GemmProblem& problem, const void* c_before, VerifyMode mode,
                    std::uint64_t seed = 0x5eed, std::optional<DType> accuracy = std::nullopt);

// The integer rule of the library (gemm.hpp): a host-memory GEMM of i8 (C in i32), i32 or
// i64 inputs returns the exact alpha op(A) op(B) + beta C0 or fails naming the entry. gemm()
// applies it with these two; they take one product (batch 1) of any layout in host memory.
// integer_result_bounded: whether |alpha| sum_q |a_iq| max_j |b_qj| + |beta| max_j |c0_ij|
// stays below C's range for every row i, which proves that no entry can leave it; O(mk + kn +
// mn), reading A, B and C0 (c_before; may be null when beta == 0).
bool integer_result_bounded(const GemmProblem& problem, const void* c_before);
// check_integer_result: the modular check of `exact` on the finished problem.c; returns when C
// is the exact result (except with probability below 2^-92), else throws an OverflowError
// naming the first entry, in the caller's layout, of the first wrong row whose exact value does
// not fit C's dtype, or a numeric Error naming a wrong entry that would have fit.
void check_integer_result(const GemmProblem& problem, const void* c_before, std::uint64_t seed = 0x5eed);

// Relative Frobenius error of `got` (rows x cols with leading dimension ld, any host
// dtype) against a row-major double reference. If the reference is all zero, the absolute
// Frobenius norm of the difference. NaN if `got` holds NaN or Inf where the reference does not.
double relative_frobenius_error(DType dtype, const void* got, std::int64_t rows,
                                std::int64_t cols, std::int64_t ld,
                                const std::vector<double>& reference);

// Checks an exact integer result held as limbs (entry (i, j): `limbs` 64-bit two's-complement
// words, least significant first, at words + (i * ld + j) * limbs; host memory) against
// alpha op(A) op(B) + beta C0 of a row-major i32/i64 problem (its C unused; c_before is C0):
// the modular Freivalds check of `exact`, any size.
VerifyResult verify_limbs(const GemmProblem& problem, const void* c_before, const std::uint64_t* words,
                          std::int64_t ld, int limbs, std::uint64_t seed = 0x5eed);

}  // namespace gemmkit

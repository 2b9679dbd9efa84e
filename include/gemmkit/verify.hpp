// Verification of GEMM results against an independent oracle: a naive reference that
// accumulates in double (floating dtypes) or exactly in 128-bit integers (integer dtypes),
// or, for problems too large for that, Freivalds' randomised check in double.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/gemm.hpp"

namespace gemmkit {

// 128-bit integers for exact reference sums (a GCC/Clang extension; __extension__ keeps
// -Wpedantic quiet).
__extension__ typedef __int128 int128_t;

enum class VerifyMode { none, automatic, full, freivalds };
VerifyMode parse_verify_mode(std::string_view text);  // "none|auto|full|freivalds"; usage error otherwise
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

// Problems with m*n*k up to this many multiply-adds are checked in full by `automatic`.
inline constexpr double kFullVerifyLimit = 2.0e9;

// alpha * op(A) * op(B) + beta * C0 in double, M x N. c_before is C0 (ldc as in the problem)
// and may be null when beta == 0. Any dtype; integers are converted exactly while |x| < 2^53.
std::vector<double> reference_gemm(const GemmProblem& problem, const void* c_before);

// The same exactly, for i32/i64 problems: 128-bit accumulation, row-major M x N.
std::vector<int128_t> reference_gemm_exact(const GemmProblem& problem, const void* c_before);

struct VerifyResult {
  VerifyMode method = VerifyMode::none;  // full or freivalds (none if not checked)
  bool passed = true;
  double error = 0.0;      // relative Frobenius error (full) or relative residual (freivalds)
  double tolerance = 0.0;
  std::string detail;      // e.g. the first mismatching entry for integers
};

// Checks problem.c (the result, host memory) against the oracle. c_before is C as it was
// before the GEMM (needed when beta != 0, else may be null). Integer problems are always
// checked exactly in full. `automatic` picks full up to kFullVerifyLimit, else freivalds.
// `accuracy`: the precision the kernel computed in when lower than the problem's dtype (pass
// KernelEntry::accuracy, e.g. tf32); the tolerance is then that of
// tolerance_dtype(problem.dtype, accuracy), and a failure message names that dtype.
VerifyResult verify(const GemmProblem& problem, const void* c_before, VerifyMode mode,
                    std::uint64_t seed = 0x5eed, std::optional<DType> accuracy = std::nullopt);

// Relative Frobenius error of `got` (rows x cols with leading dimension ld, any host
// dtype) against a row-major double reference. If the reference is all zero, the absolute
// Frobenius norm of the difference. NaN if `got` holds NaN or Inf where the reference does not.
double relative_frobenius_error(DType dtype, const void* got, std::int64_t rows,
                                std::int64_t cols, std::int64_t ld,
                                const std::vector<double>& reference);

}  // namespace gemmkit

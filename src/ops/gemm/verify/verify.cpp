// The verification oracle: which check a mode and a problem get, and the tolerances. It
// shares no code with the kernels it checks: its own loops, exact (128-bit or modular) integer
// arithmetic or double-double sums, and no BLAS. The checks, each in its own file:
//  - full (reference.cpp): every entry against a full reference, exact or double-double;
//  - freivalds (freivalds.cpp): random projections of C in double-double, for floating dtypes;
//  - exact (integer.cpp): Freivalds' check in exact modular arithmetic, for integer-valued
//    inputs; also the overflow screen of integer products and the integer rule of every GEMM.
// `auto` takes the full check while m n k is small enough (kFullVerifyLimit), else exact for
// integer dtypes, and for floating ones exact where integer inputs make the kernel's result
// exact (every partial sum an integer the dtype holds), else freivalds.
#include "gemmkit/verify.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/gemm/verify/common.hpp"

namespace gemmkit::verify_detail {
namespace {

constexpr std::string_view kExactNeedsIntegers =
    "--verify exact needs integer-valued inputs: integer dtypes, or float data whose entries "
    "(and alpha and beta) are all integers below 2^63; use full or freivalds";

template <class T>
bool all_integral(const T* s, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  if constexpr (std::is_integral_v<T>) return true;
  if (rows == 0 || cols == 0) return true;  // no entries (a loop over 2^63 empty rows would not end)
  bool all = true;
#pragma omp parallel for schedule(static) reduction(&& : all)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) all = all && integral(s[r * ld + c]);
  return all;
}

// Whether the product is a product of integers: every entry of A, B (read when alpha != 0)
// and C0 (read when beta != 0), and alpha and beta, integers below 2^63 in magnitude.
template <class T, class CT>
bool integer_valued_typed(const GemmProblem& p, const CT* c0) {
  if (!integral_scalar(p.alpha) || !integral_scalar(p.beta)) return false;
  if (p.alpha != 0 && (!all_integral(static_cast<const T*>(p.a), p.a_rows(), p.a_cols(), p.lda) ||
                       !all_integral(static_cast<const T*>(p.b), p.b_rows(), p.b_cols(), p.ldb)))
    return false;
  return p.beta == 0 || all_integral(c0, p.m, p.n, p.ldc);
}

// Whether a floating-point kernel must get integer inputs' product exactly: every partial sum
// is an integer the dtype holds (2^53 for f64, 2^24 for f32), whatever the order of the sums.
template <class T, class CT>
bool exact_expected(const GemmProblem& p, const CT* c0, std::optional<DType> accuracy) {
  const DType dtype = tolerance_dtype(p.dtype, accuracy);
  if (p.c_dtype() != p.dtype || (dtype != DType::f64 && dtype != DType::f32)) return false;
  const double limit = dtype == DType::f64 ? 0x1p53 : 0x1p24;
  const std::vector<double> bound = row_bounds<T, CT>(p, c0);
  return std::all_of(bound.begin(), bound.end(), [&](double b) { return b <= limit; });
}

template <class T, class CT>
VerifyResult verify_typed(const GemmProblem& p, const void* c_before, VerifyMode mode,
                          std::uint64_t seed, std::optional<DType> accuracy) {
  const auto* c0 = static_cast<const CT*>(c_before);
  const bool cheap = double(p.m) * double(p.n) * double(p.k) <= kFullVerifyLimit;
  if constexpr (std::is_integral_v<T>) {
    if (mode == VerifyMode::none) return screen_overflow(p, c_before, seed);
    if (mode == VerifyMode::full || (mode == VerifyMode::automatic && cheap))
      return verify_full_integer(p, c_before);
    return verify_modular(p, c_before, seed);
  } else {
    if (mode == VerifyMode::none) return {};
    const bool integer_data = integer_valued_typed<T, CT>(p, c0);
    if (mode == VerifyMode::exact) {
      if (!integer_data)
        fail(ErrorCategory::usage, std::string(kExactNeedsIntegers));
      return verify_modular(p, c_before, seed);
    }
    const DType tol_dtype = tolerance_dtype(p.dtype, accuracy);
    const double tol = tolerance(tol_dtype, p.k);
    if (mode == VerifyMode::full || (mode == VerifyMode::automatic && cheap))
      return verify_full_float(p, c_before, tol, tol_dtype, integer_data);
    if (mode == VerifyMode::automatic && integer_data && exact_expected<T, CT>(p, c0, accuracy))
      return verify_modular(p, c_before, seed);
    return verify_freivalds(p, c_before, tol, tol_dtype, seed, integer_data);
  }
}

}  // namespace

}  // namespace gemmkit::verify_detail

namespace gemmkit {

using namespace verify_detail;

VerifyMode parse_verify_mode(std::string_view text) {
  for (VerifyMode mode : {VerifyMode::none, VerifyMode::automatic, VerifyMode::full,
                          VerifyMode::freivalds, VerifyMode::exact})
    if (text == verify_mode_name(mode)) return mode;
  fail(ErrorCategory::usage, "unknown verification mode '" + std::string(text) +
                                 "' (expected none, auto, full, freivalds or exact)");
}

std::string_view verify_mode_name(VerifyMode mode) {
  switch (mode) {
    case VerifyMode::none: return "none";
    case VerifyMode::automatic: return "auto";
    case VerifyMode::full: return "full";
    case VerifyMode::freivalds: return "freivalds";
    case VerifyMode::exact: return "exact";
  }
  return "unknown";
}

double tolerance(DType dtype, std::int64_t k) {
  double base = 0;
  switch (dtype) {
    case DType::f64: base = 1e-12; break;
    case DType::f32: base = 1e-5; break;
    // tf32 keeps 10 of f32's 23 mantissa bits; the Hopper wgmma path truncates the rest
    // (up to 2^-10 relative per input, about 7e-4 relative Frobenius error seen on uniform
    // data), so the bound sits 3x above that.
    case DType::tf32: base = 2e-3; break;
    case DType::f16:
    case DType::bf16: base = 1e-2; break;
    case DType::i8:
    case DType::i32:
    case DType::i64: return 0.0;
  }
  return base * std::max(1.0, std::sqrt(static_cast<double>(k) / 1024.0));
}

DType tolerance_dtype(DType data, std::optional<DType> accuracy) {
  if (!accuracy || is_integer(data) || is_integer(*accuracy)) return data;
  return tolerance(*accuracy, 1) > tolerance(data, 1) ? *accuracy : data;
}

bool integer_valued(const GemmProblem& problem, const void* c_before) {
  check_problem(problem, c_before, "integer_valued");
  return visit_problem(problem, [&]<class T, class CT>() {
    return integer_valued_typed<T, CT>(problem, static_cast<const CT*>(c_before));
  });
}

VerifyResult verify(const GemmProblem& problem, const void* c_before, VerifyMode mode,
                    std::uint64_t seed, std::optional<DType> accuracy) {
  if (mode == VerifyMode::none && !is_integer(problem.dtype)) return {};
  check_problem(problem, c_before, "verify");
  // An empty C has no entry to check, and no work should scale with K (which may be 2^63 - 1).
  if (problem.m == 0 || problem.n == 0) {
    VerifyResult empty;
    if (mode == VerifyMode::none) return empty;
    empty.method = mode == VerifyMode::automatic ? VerifyMode::full : mode;
    empty.check = "empty result";
    empty.guarantee = "C is " + std::to_string(problem.m) + " x " + std::to_string(problem.n) +
                      ": it has no entries, so there is nothing to compare";
    return empty;
  }
  return visit_problem(problem, [&]<class T, class CT>() {
    return verify_typed<T, CT>(problem, c_before, mode, seed, accuracy);
  });
}

}  // namespace gemmkit

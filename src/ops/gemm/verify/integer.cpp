// Integer results checked exactly, without a full reference: Freivalds' check in exact modular
// arithmetic (`exact`, for integer-valued inputs of any dtype), 3 random vectors modulo
// 2^61 - 1 and 3 modulo 2^31 - 1. A wrong entry escapes only if every round misses it:
// probability below 2^-92 whatever the data. On it rest the check of results held as words
// (verify_limbs), the overflow screen of integer products that asked for no verification (a
// row bound, then the modular check where the bound reaches the dtype's range), and the
// integer rule of every host-memory GEMM (check_integer_result). `exact` refuses Inf and NaN
// inputs (they are not integers).
#include "gemmkit/verify.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "arith/int128.hpp"
#include "arith/splitmix.hpp"
#include "ops/gemm/verify/common.hpp"

namespace gemmkit::verify_detail {
namespace {

// Lanes 0..2: random vectors modulo 2^61 - 1; 3..5: modulo 2^31 - 1. An error vector escapes a
// lane with probability 1/p when it is nonzero modulo p; it is zero modulo both only if every
// error is a multiple of (2^61 - 1)(2^31 - 1) > 2^91.
constexpr int kRounds = 3;

constexpr int kLanes = 2 * kRounds;

constexpr int lane_bits(int lane) { return lane < kRounds ? 61 : 31; }

// x mod 2^bits - 1.
inline std::uint64_t mersenne_reduce(u128 x, int bits) {
  const u128 mask = (u128{1} << bits) - 1;
  while (x > mask) x = (x & mask) + (x >> bits);
  return x == mask ? 0 : static_cast<std::uint64_t>(x);
}

inline std::uint64_t residue(std::int64_t v, int bits) {
  const std::uint64_t r = mersenne_reduce(v < 0 ? -static_cast<u128>(v) : u128(v), bits);
  return v < 0 && r != 0 ? ((std::uint64_t{1} << bits) - 1) - r : r;
}

// An integer-valued entry modulo 2^bits - 1, of any magnitude: 2^e is 2^(e mod bits) there.
template <class T>
std::uint64_t residue_of(T x, int bits) {
  if constexpr (std::is_integral_v<T>) {
    return residue(std::int64_t{x}, bits);
  } else {
    const double d = to_double(x);
    if (std::fabs(d) < 0x1p63) return residue(static_cast<std::int64_t>(d), bits);
    int e = 0;
    const auto mantissa = static_cast<std::int64_t>(std::ldexp(std::frexp(d, &e), 53));
    return mersenne_reduce(u128(residue(mantissa, bits)) << ((e - 53) % bits), bits);
  }
}

// op(S) X modulo each lane's prime, for an operand stored (rows, cols); X is (columns of
// op(S), kLanes).
template <class T>
std::vector<std::uint64_t> op_times_mod(const T* s, bool transposed, std::int64_t rows,
                                        std::int64_t cols, std::int64_t ld,
                                        const std::vector<std::uint64_t>& x) {
  std::vector<std::uint64_t> y(static_cast<std::size_t>((transposed ? cols : rows) * kLanes), 0);
  if (!transposed) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      u128 acc[kLanes] = {};
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::uint64_t r61 = residue_of(s[r * ld + c], 61), r31 = residue_of(s[r * ld + c], 31);
        for (int t = 0; t < kLanes; ++t) acc[t] += u128(t < kRounds ? r61 : r31) * x[c * kLanes + t];
        if (c % 32 == 31)  // 32 products of 122 bits fit 127
          for (int t = 0; t < kLanes; ++t) acc[t] = mersenne_reduce(acc[t], lane_bits(t));
      }
      for (int t = 0; t < kLanes; ++t) y[r * kLanes + t] = mersenne_reduce(acc[t], lane_bits(t));
    }
  } else {
#pragma omp parallel
    {
      const std::int64_t threads = omp_get_num_threads(), t0 = omp_get_thread_num();
      const std::int64_t c_begin = cols * t0 / threads, c_end = cols * (t0 + 1) / threads;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = c_begin; c < c_end; ++c) {
          const std::uint64_t r61 = residue_of(s[r * ld + c], 61), r31 = residue_of(s[r * ld + c], 31);
          for (int t = 0; t < kLanes; ++t) {
            std::uint64_t& out = y[c * kLanes + t];
            out = mersenne_reduce(out + u128(t < kRounds ? r61 : r31) * x[r * kLanes + t], lane_bits(t));
          }
        }
    }
  }
  return y;
}

// Freivalds' random matrix X (n x kLanes): lane t's entries below its Mersenne prime.
std::vector<std::uint64_t> freivalds_vectors(std::int64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> x(static_cast<std::size_t>(n * kLanes));
  std::uint64_t state = seed;
  for (std::size_t e = 0; e < x.size(); ++e)
    x[e] = splitmix64_next(state) % ((std::uint64_t{1} << lane_bits(int(e % kLanes))) - 1);
  return x;
}

struct WrongRows {
  std::int64_t first = -1, count = 0;  // the first row of C X that differs, and how many do
};

// Compares cx = C X (m x kLanes, reduced) with alpha A (B X) + beta C0 X, lane by lane.
template <class T, class CT>
WrongRows freivalds_compare(const GemmProblem& p, const CT* c0, const std::vector<std::uint64_t>& x,
                            const std::vector<std::uint64_t>& cx) {
  const std::int64_t m = p.m, n = p.n;
  std::vector<std::uint64_t> abx(static_cast<std::size_t>(m * kLanes), 0), c0x(abx.size(), 0);
  if (p.alpha != 0)
    abx = op_times_mod(static_cast<const T*>(p.a), p.trans_a, p.a_rows(), p.a_cols(), p.lda,
                       op_times_mod(static_cast<const T*>(p.b), p.trans_b, p.b_rows(), p.b_cols(), p.ldb, x));
  if (p.beta != 0) c0x = op_times_mod(c0, false, m, n, p.ldc, x);
  WrongRows wrong;
  for (std::int64_t i = 0; i < m; ++i)
    for (int t = 0; t < kLanes; ++t) {
      const int bits = lane_bits(t);
      const auto at = static_cast<std::size_t>(i * kLanes + t);
      const std::uint64_t expected = mersenne_reduce(
          u128(residue_of(p.alpha, bits)) * abx[at] + u128(residue_of(p.beta, bits)) * c0x[at], bits);
      if (cx[at] != expected) {
        if (wrong.count++ == 0) wrong.first = i;
        break;
      }
    }
  return wrong;
}

template <class T, class CT>
VerifyResult verify_modular(const GemmProblem& p, const CT* c0, std::uint64_t seed) {
  VerifyResult result;
  result.method = VerifyMode::exact;
  result.check = "exact, modular Freivalds: 3 rounds mod 2^61-1 and 3 mod 2^31-1";
  result.guarantee = "every entry equals the exact product, except with probability below 2^-92";
  const std::int64_t m = p.m, n = p.n;
  const auto* got = static_cast<const CT*>(p.c);
  auto failed = [&](std::string detail) {
    result.passed = false;
    result.error = kInfinity;
    result.detail = std::move(detail);
    return result;
  };
  if constexpr (!std::is_integral_v<CT>)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double g = to_double(got[i * p.ldc + j]);
        if (std::isfinite(g) && g == std::trunc(g)) continue;
        // Inf where the exact value is beyond C's dtype is an overflow (the inputs are finite).
        std::vector<i128> row(static_cast<std::size_t>(n));
        const std::int64_t beyond_128_bits = exact_rows<T, CT>(p, c0, i, i + 1, row.data()).second;
        if (!std::isfinite(g) &&
            (beyond_128_bits == j || (beyond_128_bits < 0 && !(std::fabs(double(row[j])) < range_of<CT>().overflow))))
          return failed(overflow_detail(i, j, beyond_128_bits == j ? "at least 2^127" : i128_text(row[j]),
                                        p.c_dtype(), range_of<CT>().largest, g));
        return failed("entry " + entry_name(i, j) + " is " + number(g) +
                      ", not an integer (the exact product of integers is one)");
      }

  const std::vector<std::uint64_t> x = freivalds_vectors(n, seed);
  const std::vector<std::uint64_t> cx = op_times_mod(got, false, m, n, p.ldc, x);
  const auto [first, wrong_rows] = freivalds_compare<T, CT>(p, c0, x, cx);
  if (first < 0) return result;

  // Name the first wrong entry of the first wrong row from its exact values.
  std::vector<i128> row(static_cast<std::size_t>(n));
  const std::int64_t overflow_at = exact_rows<T, CT>(p, c0, first, first + 1, row.data()).second;
  const std::string rows_differ = " (" + std::to_string(wrong_rows) + " of " + std::to_string(m) + " rows differ)";
  for (std::int64_t j = 0; j < n; ++j) {
    if (j == overflow_at)
      return failed("numeric overflow: the exact result at " + entry_name(first, j) +
                    " overflows 128-bit integers" + rows_differ);
    const i128 expected = row[j];
    if constexpr (std::is_integral_v<CT>) {
      if (expected < std::numeric_limits<CT>::min() || expected > std::numeric_limits<CT>::max())
        return failed("numeric overflow: the exact result at " + entry_name(first, j) + " is " +
                      i128_text(expected) + ", which does not fit " + std::string(dtype_name(p.c_dtype())) +
                      rows_differ);
      if (got[first * p.ldc + j] != expected)
        return failed("entry " + entry_name(first, j) + " is " + i128_text(got[first * p.ldc + j]) +
                      ", expected " + i128_text(expected) + rows_differ);
    } else {
      const double g = to_double(got[first * p.ldc + j]);
      if (!(std::fabs(g) < 0x1p127) || static_cast<i128>(g) != expected)
        return failed("entry " + entry_name(first, j) + " is " + number(g) + ", expected " +
                      i128_text(expected) +
                      (std::fabs(double(expected)) > 0x1p53 ? " (not representable: the exact product "
                                                              "needs more bits than the dtype has)"
                                                            : "") + rows_differ);
    }
  }
  return failed("row " + std::to_string(first) + " of C x differs from alpha A (B x) + beta C0 x "
                "modulo a prime" + rows_differ);
}

// An exact result held as `limbs` words of two's complement per entry, modulo 2^bits - 1:
// 2^(64 w) is 2^(64 w mod bits) there, and a negative value is its words' value minus 2^(64 limbs).
std::uint64_t residue_of_limbs(const std::uint64_t* x, int limbs, int bits) {
  u128 acc = 0;
  for (int w = 0; w < limbs; ++w)
    acc += u128(mersenne_reduce(x[w], bits)) << ((64 * w) % bits);  // < limbs 2^122
  std::uint64_t r = mersenne_reduce(acc, bits);
  if (std::int64_t(x[limbs - 1]) < 0) {
    const std::uint64_t m = (std::uint64_t{1} << bits) - 1, wrap = std::uint64_t{1} << ((64 * limbs) % bits);
    r = mersenne_reduce(u128(r) + m - wrap, bits);
  }
  return r;
}

template <class T, class CT>
VerifyResult verify_limbs_typed(const GemmProblem& p, const CT* c0, const std::uint64_t* words, std::int64_t ld,
                                int limbs, std::uint64_t seed) {
  VerifyResult result;
  result.method = VerifyMode::exact;
  result.check = "exact, modular Freivalds on the limbs: 3 rounds mod 2^61-1 and 3 mod 2^31-1";
  result.guarantee = "every entry equals the exact product, except with probability below 2^-92";
  const std::int64_t m = p.m, n = p.n;
  const std::vector<std::uint64_t> x = freivalds_vectors(n, seed);
  std::vector<std::uint64_t> cx(static_cast<std::size_t>(m * kLanes));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    u128 acc[kLanes] = {};
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint64_t* e = words + (i * ld + j) * limbs;
      const std::uint64_t r61 = residue_of_limbs(e, limbs, 61), r31 = residue_of_limbs(e, limbs, 31);
      for (int t = 0; t < kLanes; ++t) acc[t] += u128(t < kRounds ? r61 : r31) * x[j * kLanes + t];
      if (j % 32 == 31)
        for (int t = 0; t < kLanes; ++t) acc[t] = mersenne_reduce(acc[t], lane_bits(t));
    }
    for (int t = 0; t < kLanes; ++t) cx[i * kLanes + t] = mersenne_reduce(acc[t], lane_bits(t));
  }
  const auto [first, wrong_rows] = freivalds_compare<T, CT>(p, c0, x, cx);
  if (first >= 0) {
    result.passed = false;
    result.error = kInfinity;
    result.detail = "row " + std::to_string(first) + " of C x differs from alpha A (B x) + beta C0 x modulo a prime (" +
                    std::to_string(wrong_rows) + " of " + std::to_string(m) + " rows differ)";
  }
  return result;
}

// Whether the row bounds prove that no entry of the exact result leaves C's dtype.
template <class T, class CT>
bool bounded_typed(const GemmProblem& p, const CT* c0) {
  const double limit = static_cast<double>(std::numeric_limits<CT>::max());
  const std::vector<double> bound = row_bounds<T, CT>(p, c0);
  return std::all_of(bound.begin(), bound.end(), [&](double b) { return b < limit; });
}

// With no verification asked for, integer products are still screened for overflow: a cheap
// bound on each row, and where it reaches the dtype's range, the exact modular check.
template <class T, class CT = T>
VerifyResult screen_overflow(const GemmProblem& p, const CT* c0, std::uint64_t seed) {
  VerifyResult result;
  result.check = "none (integer overflow screened)";
  result.guarantee = "not verified; no entry of the exact product exceeds " + std::string(dtype_name(p.c_dtype()));
  if (bounded_typed<T, CT>(p, c0)) return result;
  VerifyResult exact = verify_modular<T, CT>(p, c0, seed);
  if (exact.passed) return result;
  exact.method = VerifyMode::none;
  return exact;
}

// The first wrong row of C by the modular check, and in it the first entry whose exact value
// does not fit C (an OverflowError), else the first wrong entry (a kernel's fault). Entries
// are named in the caller's layout: (j, i) when p is the row-major form of a column-major C.
template <class T, class CT>
void check_integer_typed(const GemmProblem& p, const CT* c0, std::uint64_t seed, bool col_major) {
  const auto* got = static_cast<const CT*>(p.c);
  const std::vector<std::uint64_t> x = freivalds_vectors(p.n, seed);
  const WrongRows wrong_rows = freivalds_compare<T, CT>(p, c0, x, op_times_mod(got, false, p.m, p.n, p.ldc, x));
  const std::int64_t first = wrong_rows.first;
  if (first < 0) return;
  const auto at = [&](std::int64_t j) { return col_major ? std::pair{j, first} : std::pair{first, j}; };
  const std::string dtype(dtype_name(p.c_dtype()));
  std::vector<i128> row(static_cast<std::size_t>(p.n));
  if (const std::int64_t j = exact_rows<T, CT>(p, c0, first, first + 1, row.data()).second; j >= 0)
    throw OverflowError(at(j).first, at(j).second, "beyond +-2^127", dtype);
  std::int64_t wrong = -1;
  for (std::int64_t j = 0; j < p.n; ++j) {
    if (row[j] < std::numeric_limits<CT>::min() || row[j] > std::numeric_limits<CT>::max())
      throw OverflowError(at(j).first, at(j).second, i128_text(row[j]), dtype);
    if (wrong < 0 && got[first * p.ldc + j] != row[j]) wrong = j;
  }
  if (wrong < 0)  // every entry of the row is right: the modular check cannot say this
    fail(ErrorCategory::internal, "the modular check flagged row " + std::to_string(first) + ", which is exact");
  fail(ErrorCategory::numeric, "the kernel's result is wrong: entry " + entry_name(at(wrong).first, at(wrong).second) +
                                   " is " + i128_text(got[first * p.ldc + wrong]) + ", the exact result is " +
                                   i128_text(row[wrong]) + " (" + std::to_string(wrong_rows.count) + " of " +
                                   std::to_string(p.m) + " rows differ)");
}

// The row-major form of one integer product, for the two functions below.
GemmProblem integer_product(const GemmProblem& problem, const void* c_before, const char* what) {
  check_problem(problem, c_before, what);
  if (!is_integer(problem.dtype) || problem.batch > 1)
    fail(ErrorCategory::usage, std::string(what) + " takes one product of an integer dtype, not " +
                                   std::to_string(problem.batch) + " of " + std::string(dtype_name(problem.dtype)));
  return as_row_major(problem);
}

}  // namespace

VerifyResult verify_modular(const GemmProblem& p, const void* c_before, std::uint64_t seed) {
  return visit_problem(p, [&]<class T, class CT>() {
    return verify_modular<T, CT>(p, static_cast<const CT*>(c_before), seed);
  });
}

VerifyResult screen_overflow(const GemmProblem& p, const void* c_before, std::uint64_t seed) {
  return visit_problem(p, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>)
      return screen_overflow<T, CT>(p, static_cast<const CT*>(c_before), seed);
    else
      return VerifyResult{};
  });
}

}  // namespace gemmkit::verify_detail

namespace gemmkit {

using namespace verify_detail;

VerifyResult verify_limbs(const GemmProblem& problem, const void* c_before, const std::uint64_t* words,
                          std::int64_t ld, int limbs, std::uint64_t seed) {
  check_problem(problem, c_before, "verify_limbs");
  if (!is_integer(problem.dtype) || problem.layout != Layout::row_major || limbs < 1 || ld < problem.n)
    fail(ErrorCategory::usage, "verify_limbs: a row-major integer problem and limbs >= 1, ld >= n");
  if (problem.m == 0 || problem.n == 0) return verify(problem, c_before, VerifyMode::full, seed);  // nothing to compare
  return visit_problem(problem, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>)
      return verify_limbs_typed<T, CT>(problem, static_cast<const CT*>(c_before), words, ld, limbs, seed);
    else
      return VerifyResult{};
  });
}

bool integer_result_bounded(const GemmProblem& problem, const void* c_before) {
  const GemmProblem p = integer_product(problem, c_before, "integer_result_bounded");
  return visit_problem(p, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>) return bounded_typed<T, CT>(p, static_cast<const CT*>(c_before));
    else return false;
  });
}

void check_integer_result(const GemmProblem& problem, const void* c_before, std::uint64_t seed) {
  const GemmProblem p = integer_product(problem, c_before, "check_integer_result");
  visit_problem(p, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>)
      check_integer_typed<T, CT>(p, static_cast<const CT*>(c_before), seed, problem.layout == Layout::col_major);
  });
}

}  // namespace gemmkit

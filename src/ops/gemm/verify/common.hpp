// What the verification oracle's checks (src/ops/gemm/verify/) share: reading every storage type
// without the code under test, the IEEE special values an input's Inf and NaN make, the exact
// 128-bit reference, row bounds and norms, the floor that subnormal rounding needs, and the
// dispatch on a problem's storage types.
// IEEE values (floating dtypes): an entry that an Inf or NaN input reaches must be exactly the
// Inf or NaN that IEEE arithmetic gives (SpecialValues); full and freivalds check those entry by
// entry and the rest as their bounds say, without them. An entry whose terms are all finite but
// whose exact value is beyond C's dtype fails as a numeric overflow, naming the exact value.
// Every bound also allows the rounding of subnormals (UnderflowFloor), which relative bounds
// cannot.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "arith/double_double.hpp"
#include "arith/int128.hpp"
#include "runtime/host_matrix_type.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::verify_detail {

using detail::visit_storage;

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The 16-bit float dtypes are decoded here from their bits, not by their own conversions,
// so that the oracle reads every dtype without the code it checks.
inline double to_double(double x) { return x; }
inline double to_double(float x) { return x; }
inline double to_double(std::int8_t x) { return x; }
inline double to_double(std::int32_t x) { return x; }
inline double to_double(std::int64_t x) { return static_cast<double>(x); }
inline double to_double(Half h) {
  const int exponent = (h.bits >> 10) & 0x1f, mantissa = h.bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);  // subnormal
  } else if (exponent == 0x1f) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else {
    magnitude = std::ldexp(0x400 | mantissa, exponent - 25);
  }
  return (h.bits & 0x8000) ? -magnitude : magnitude;
}
inline double to_double(BFloat16 h) {
  const std::uint32_t bits = std::uint32_t{h.bits} << 16;  // bf16 is the top half of an f32
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// op(X)(r, c) of a row-major operand, whatever its transpose: data[r * row + c * col].
template <class T>
struct OpView {
  const T* data;
  std::int64_t row, col;
  T operator()(std::int64_t r, std::int64_t c) const { return data[r * row + c * col]; }
};

template <class T>
OpView<T> op_view(const void* data, bool transposed, std::int64_t ld) {
  const auto* typed = static_cast<const T*>(data);
  return transposed ? OpView<T>{typed, 1, ld} : OpView<T>{typed, ld, 1};
}

inline std::string entry_name(std::int64_t i, std::int64_t j) {
  std::string name = "(";  // appended piecewise: GCC 12 misfires -Wrestrict on "(" + ...
  name += std::to_string(i);
  name += ", ";
  name += std::to_string(j);
  name += ")";
  return name;
}

inline std::string number(double x) {
  if (std::isnan(x)) return "nan";  // whatever its sign bit
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// m 2^e, which may be far beyond the double range, in decimal.
inline std::string number(double m, int e) {
  if (m == 0 || !std::isfinite(m) || std::isfinite(std::ldexp(m, e))) return number(std::ldexp(m, e));
  const double decimal = std::log10(std::fabs(m)) + e * std::log10(2.0), exponent = std::floor(decimal);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.9ge%+d", m < 0 ? "-" : "", std::pow(10.0, decimal - exponent),
                static_cast<int>(exponent));
  return buf;
}

// The range of a floating storage type: its largest finite value, the magnitude from which
// rounding to nearest gives Inf, and its smallest normal and subnormal values.
struct Range {
  double largest, overflow, normal, subnormal;
};

template <class S>
constexpr Range range_of() {
  if constexpr (std::is_same_v<S, double>)
    return {std::numeric_limits<double>::max(), kInfinity, 0x1p-1022, 0x1p-1074};
  else if constexpr (std::is_same_v<S, float>)
    return {0x1.fffffep127, 0x1.ffffffp127, 0x1p-126, 0x1p-149};
  else if constexpr (std::is_same_v<S, Half>)
    return {65504.0, 65520.0, 0x1p-14, 0x1p-24};
  else if constexpr (std::is_same_v<S, BFloat16>)
    return {0x1.fep127, 0x1.ffp127, 0x1p-126, 0x1p-133};
  else
    return {kInfinity, kInfinity, 0, 0};  // integers: not used
}

// The smallest subnormal of the precision a kernel computes in (tf32: 10 mantissa bits below
// f32's smallest normal).
inline double smallest_subnormal(DType dtype) {
  switch (dtype) {
    case DType::f64: return 0x1p-1074;
    case DType::f32: return 0x1p-149;
    case DType::tf32: return 0x1p-136;
    case DType::bf16: return 0x1p-133;
    case DType::f16: return 0x1p-24;
    default: return 0;
  }
}

// Non-finite operands are read as 0 by the finite sums; SpecialValues supplies what they make.
inline double finite_or_zero(double x) { return std::isfinite(x) ? x : 0.0; }

// The same IEEE special value (NaN of any payload, or Inf of the same sign) or the same number.
inline bool same_value(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// How an entry whose exact value is beyond C's dtype is reported: as an overflow, with the
// exact value, like an integer product that does not fit.
inline std::string overflow_detail(std::int64_t i, std::int64_t j, const std::string& exact, DType dtype,
                                   double largest, double got) {
  return "numeric overflow: the exact result at " + entry_name(i, j) + " is " + exact + ", beyond " +
         std::string(dtype_name(dtype)) + " (largest finite " + number(largest) + "); the result holds " +
         number(got);
}

inline void check_problem(const GemmProblem& p, const void* c_before, const char* what) {
  validate(p);
  if (p.beta != 0 && p.m > 0 && p.n > 0 && c_before == nullptr)
    fail(ErrorCategory::usage, std::string(what) + ": beta is " + number(p.beta) +
                                   ", so C as it was before the GEMM is needed");
  checked_element_count(p.m, p.n, std::string(what) + " result");
}

// The rows of op(B) converted once are shared by every row of C a panel at a time: about
// this many elements, so that a panel stays in L2 while all rows stream past it.
inline constexpr std::int64_t kPanelElements = std::int64_t{1} << 16;

inline std::int64_t panel_rows(const GemmProblem& p) {
  return std::clamp<std::int64_t>(kPanelElements / std::max<std::int64_t>(p.n, 1), 1, p.k);
}

// ---- IEEE special values.

// The non-finite entries of a matrix line by line (the rows of op(A), or the columns of
// op(B)): whether a line holds a NaN, else where its Infs are.
struct NonFiniteLines {
  std::vector<char> nan;
  std::vector<std::int64_t> start, at;  // line l's Infs: at[start[l]] .. at[start[l + 1] - 1]
  bool holds(std::int64_t l) const { return !nan.empty() && (nan[l] || start[l + 1] > start[l]); }
};

template <class T>
bool all_finite(const T* s, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  bool all = true;
#pragma omp parallel for schedule(static) reduction(&& : all)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) all = all && std::isfinite(to_double(s[r * ld + c]));
  return all;
}

// get(l, q): entry q of line l. Only called once a matrix is known to hold a non-finite value.
template <class Get>
NonFiniteLines non_finite_lines(std::int64_t lines, std::int64_t length, Get get) {
  NonFiniteLines s;
  s.nan.assign(static_cast<std::size_t>(lines), 0);
  s.start.assign(static_cast<std::size_t>(lines + 1), 0);
  std::vector<std::int64_t> infs(static_cast<std::size_t>(lines), 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t q = 0; q < length && !s.nan[l]; ++q) {
      const double v = to_double(get(l, q));
      if (std::isnan(v)) s.nan[l] = 1;
      else if (std::isinf(v)) ++infs[l];
    }
  for (std::int64_t l = 0; l < lines; ++l) s.start[l + 1] = s.start[l] + (s.nan[l] ? 0 : infs[l]);
  s.at.resize(static_cast<std::size_t>(s.start[lines]));
#pragma omp parallel for schedule(static)
  for (std::int64_t l = 0; l < lines; ++l) {
    std::int64_t next = s.start[l];
    for (std::int64_t q = 0; q < length && next < s.start[l + 1]; ++q)
      if (std::isinf(to_double(get(l, q)))) s.at[next++] = q;
  }
  return s;
}

// Where IEEE arithmetic puts Inf and NaN in alpha op(A) op(B) + beta C0, from its non-finite
// operands (a finite sum that overflows is the reference's to find). With alpha != 0 and
// k > 0, a non-finite entry in row i of op(A) makes every entry of row i of C non-finite (Inf
// times anything is Inf or NaN, NaN times anything NaN), and one in column j of op(B) all of
// column j; a non-finite c0_ij (beta != 0) entry (i, j) alone. Such an entry is the IEEE sum of
// its non-finite terms, the finite ones changing nothing: NaN if a term is NaN or Inf times 0 or
// Infs of both signs meet, else Inf of their sign. Each costs a step per Inf in its row of op(A)
// and column of op(B); finding them reads A, B and C0 once more (twice where they hold one).
template <class T, class CT>
class SpecialValues {
 public:
  SpecialValues(const GemmProblem& p, const CT* c0)
      : p_(p), a_(op_view<T>(p.a, p.trans_a, p.lda)), b_(op_view<T>(p.b, p.trans_b, p.ldb)), c0_(c0) {
    if constexpr (!std::is_integral_v<T>) {
      const bool products = p.alpha != 0 && p.k > 0 && p.m > 0 && p.n > 0;
      if (products && !all_finite(static_cast<const T*>(p.a), p.a_rows(), p.a_cols(), p.lda))
        rows_ = non_finite_lines(p.m, p.k, [&](std::int64_t i, std::int64_t q) { return a_(i, q); });
      if (products && !all_finite(static_cast<const T*>(p.b), p.b_rows(), p.b_cols(), p.ldb))
        columns_ = non_finite_lines(p.n, p.k, [&](std::int64_t j, std::int64_t q) { return b_(q, j); });
      c0_special_ = p.beta != 0 && p.m > 0 && p.n > 0 && !all_finite(c0, p.m, p.n, p.ldc);
      any_ = !rows_.nan.empty() || !columns_.nan.empty() || c0_special_;
    }
  }

  bool any() const { return any_; }
  bool row(std::int64_t i) const { return rows_.holds(i); }        // row i of C all non-finite
  bool column(std::int64_t j) const { return columns_.holds(j); }  // column j likewise
  // Whether entry (i, j) is non-finite because c0_ij alone is.
  bool c0_only(std::int64_t i, std::int64_t j) const {
    return c0_special_ && !row(i) && !column(j) && !std::isfinite(to_double(c0_[i * p_.ldc + j]));
  }
  bool special(std::int64_t i, std::int64_t j) const {
    return any_ && (row(i) || column(j) || c0_only(i, j));
  }
  // What IEEE arithmetic makes entry (i, j): NaN or Inf, or 0 where every term is finite.
  double at(std::int64_t i, std::int64_t j) const {
    double s = 0;
    if (row(i) || column(j)) {
      if (rows_.holds(i) && rows_.nan[i]) return std::numeric_limits<double>::quiet_NaN();
      if (columns_.holds(j) && columns_.nan[j]) return std::numeric_limits<double>::quiet_NaN();
      // A term with both factors infinite may be added twice: the same Inf again, no change.
      if (rows_.holds(i))
        for (std::int64_t e = rows_.start[i]; e < rows_.start[i + 1]; ++e)
          s += to_double(a_(i, rows_.at[e])) * to_double(b_(rows_.at[e], j));
      if (columns_.holds(j))
        for (std::int64_t e = columns_.start[j]; e < columns_.start[j + 1]; ++e)
          s += to_double(a_(i, columns_.at[e])) * to_double(b_(columns_.at[e], j));
      s *= p_.alpha;
    }
    if (c0_special_) {
      const double c = to_double(c0_[i * p_.ldc + j]);
      if (!std::isfinite(c)) s += p_.beta * c;
    }
    return s;
  }

 private:
  const GemmProblem& p_;
  OpView<T> a_, b_;
  const CT* c0_;
  NonFiniteLines rows_, columns_;  // empty when A (or B) is all finite or not read
  bool c0_special_ = false, any_ = false;
};

// Entry (i, j) of alpha op(A) op(B) + beta C0, every term finite, as (hi + lo) 2^e: summed in
// double-double on operands scaled by powers of two, so that no product or partial sum can
// leave the double range, however large the operands (only terms far too small to count may
// underflow). For the sums the plain double-double reference cannot hold.
template <class T, class CT>
std::tuple<double, double, int> scaled_entry(const GemmProblem& p, const CT* c0, std::int64_t i, std::int64_t j) {
  const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
  double a_max = 0, b_max = 0;
  if (p.alpha != 0)
    for (std::int64_t q = 0; q < p.k; ++q) {
      a_max = std::max(a_max, std::fabs(to_double(a(i, q))));
      b_max = std::max(b_max, std::fabs(to_double(b(q, j))));
    }
  const double c = p.beta != 0 ? to_double(c0[i * p.ldc + j]) : 0;
  int ea = 0, eb = 0, e_alpha = 0, e_beta = 0, ec = 0;
  std::frexp(a_max, &ea);
  std::frexp(b_max, &eb);
  std::frexp(p.alpha, &e_alpha);
  std::frexp(p.beta, &e_beta);
  std::frexp(c, &ec);
  // Every scaled product is below 1, and alpha's and beta's parts below k and 1 times 2^e.
  int e = std::numeric_limits<int>::min() / 2;
  if (p.alpha != 0 && a_max > 0 && b_max > 0) e = ea + eb + e_alpha;
  if (p.beta != 0 && c != 0) e = std::max(e, e_beta + ec);
  if (e == std::numeric_limits<int>::min() / 2) return {0.0, 0.0, 0};  // every term zero
  double h = 0, l = 0;
  if (p.alpha != 0)
    for (std::int64_t q = 0; q < p.k; ++q)
      dd_add_product(h, l, std::ldexp(to_double(a(i, q)), -ea), std::ldexp(to_double(b(q, j)), -eb));
  const double alpha = std::ldexp(p.alpha, -e_alpha), beta = std::ldexp(p.beta, -e_beta);
  const int shift = ea + eb + e_alpha - e;  // <= 0
  double sh = 0, sl = alpha * std::ldexp(l, shift);
  dd_add_product(sh, sl, alpha, std::ldexp(h, shift));
  if (p.beta != 0) dd_add_product(sh, sl, beta, std::ldexp(c, e_beta - e));
  dd_normalise(sh, sl);
  return {sh, sl, e};
}

// ---- Integer-valued data.

template <class T>
bool integral(T x) {
  if constexpr (std::is_integral_v<T>) {
    return true;
  } else {
    const double d = to_double(x);
    return d == std::trunc(d) && std::fabs(d) < 0x1p63;
  }
}

template <class T>
std::int64_t to_int64(T x) {
  if constexpr (std::is_integral_v<T>) return x;
  else return static_cast<std::int64_t>(to_double(x));  // integral(x) holds
}

inline bool integral_scalar(double x) { return x == std::trunc(x) && std::fabs(x) < 0x1p63; }

// For each row i, an upper bound on |alpha (op(A) op(B))_ij + beta c0_ij| over j:
// |alpha| sum_q |a_iq| max_j |b_qj| + |beta| max_j |c0_ij|, in O(mk + kn + mn).
template <class T, class CT>
std::vector<double> row_bounds(const GemmProblem& p, const CT* c0) {
  std::vector<double> bound(static_cast<std::size_t>(p.m), 0.0);
  if (p.alpha != 0 && p.k > 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    std::vector<double> b_max(static_cast<std::size_t>(p.k), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t q = 0; q < p.k; ++q)
      for (std::int64_t j = 0; j < p.n; ++j) b_max[q] = std::max(b_max[q], std::fabs(to_double(b(q, j))));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < p.m; ++i) {
      double sum = 0;
      for (std::int64_t q = 0; q < p.k; ++q) sum += std::fabs(to_double(a(i, q))) * b_max[q];
      bound[i] = std::fabs(p.alpha) * sum;
    }
  }
  if (p.beta != 0) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < p.m; ++i) {
      double c_max = 0;
      for (std::int64_t j = 0; j < p.n; ++j) c_max = std::max(c_max, std::fabs(to_double(c0[i * p.ldc + j])));
      bound[i] += std::fabs(p.beta) * c_max;
    }
  }
  // Sums of non-negative terms are off by at most k u relative; this covers it.
  for (double& x : bound) x *= 1 + 1e-9;
  return bound;
}

// ---- The exact reference, a block of rows at a time.

// Rows [i0, i1) of the exact alpha op(A) op(B) + beta C0 of an integer-valued problem into
// `out` (row-major, (i1 - i0) x n). Returns the first (row, column) whose sum overflows 128
// bits, or (-1, -1). Nothing may be thrown out of an OpenMP region, hence the return value.
template <class T, class CT>
std::pair<std::int64_t, std::int64_t> exact_rows(const GemmProblem& p, const CT* c0,
                                                 std::int64_t i0, std::int64_t i1, i128* out) {
  const std::int64_t n = p.n, k = p.k, rows = i1 - i0;
  const auto alpha = static_cast<i128>(p.alpha), beta = static_cast<i128>(p.beta);
  std::fill(out, out + rows * n, i128{0});
  std::vector<std::int64_t> overflow_at(static_cast<std::size_t>(rows), -1);
  if (alpha != 0 && k > 0 && n > 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    const std::int64_t kb = panel_rows(p);
    std::vector<std::int64_t> panel(static_cast<std::size_t>(kb * n));
    for (std::int64_t p0 = 0; p0 < k; p0 += kb) {
      const std::int64_t prows = std::min(kb, k - p0);
#pragma omp parallel for schedule(static)
      for (std::int64_t q = 0; q < prows; ++q)
        for (std::int64_t j = 0; j < n; ++j) panel[q * n + j] = to_int64(b(p0 + q, j));
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r) {
        i128* acc = out + r * n;
        for (std::int64_t q = 0; q < prows && overflow_at[r] < 0; ++q) {
          const std::int64_t aiq = to_int64(a(i0 + r, p0 + q));
          if (aiq == 0) continue;  // adjacency matrices are mostly zeros
          const std::int64_t* brow = panel.data() + q * n;
          // |aiq * brow[j]| <= 2^126: the product cannot overflow, the sum is checked.
          for (std::int64_t j = 0; j < n; ++j)
            if (__builtin_add_overflow(acc[j], i128{aiq} * brow[j], &acc[j])) {
              overflow_at[r] = j;
              break;
            }
        }
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < n && overflow_at[r] < 0; ++j) {
      i128& x = out[r * n + j];
      i128 scaled_c0 = 0;
      if (__builtin_mul_overflow(x, alpha, &x) ||
          (beta != 0 &&
           __builtin_mul_overflow(i128{to_int64(c0[(i0 + r) * p.ldc + j])}, beta, &scaled_c0)) ||
          __builtin_add_overflow(x, scaled_c0, &x))
        overflow_at[r] = j;
    }
  for (std::int64_t r = 0; r < rows; ++r)
    if (overflow_at[r] >= 0) return {i0 + r, overflow_at[r]};
  return {-1, -1};
}

// ---- Norms, roundoff and the floor of subnormal rounding.

// The Euclidean norm, accumulated with scaling (LAPACK's lassq) so that it neither overflows
// nor underflows whatever the magnitudes.
struct Norm2 {
  double scale = 0, ssq = 1;
  void add(double x) {
    const double ax = std::fabs(x);
    if (ax == 0) return;
    if (scale < ax) {
      ssq = 1 + ssq * (scale / ax) * (scale / ax);
      scale = ax;
    } else {
      ssq += (ax / scale) * (ax / scale);
    }
  }
  void add(const Norm2& other) {
    if (other.scale == 0) return;
    if (scale < other.scale) {
      ssq = other.ssq + ssq * (scale / other.scale) * (scale / other.scale);
      scale = other.scale;
    } else {
      ssq += other.ssq * (other.scale / scale) * (other.scale / scale);
    }
  }
  double value() const { return scale * std::sqrt(ssq); }
};

// Euclidean norms of the rows (by_rows) or columns of a stored (rows, cols) matrix, non-finite
// entries read as 0, and by rows without the columns that `skip` marks. Squares are summed
// plainly, and again with scaling (Norm2) for a line whose sum left the range where that is
// exact enough: the squares of subnormal (or huge) entries underflow (overflow), and a bound
// relative to a norm computed as 0 would reject every rounding.
template <class T>
std::vector<double> line_norms(const T* s, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                               bool by_rows, const std::vector<char>* skip = nullptr) {
  const auto value = [&](std::int64_t r, std::int64_t c) {
    return skip && (*skip)[c] ? 0.0 : finite_or_zero(to_double(s[r * ld + c]));
  };
  const std::int64_t lines = by_rows ? rows : cols, length = by_rows ? cols : rows;
  std::vector<double> sq(static_cast<std::size_t>(lines), 0.0);
  if (by_rows) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) sq[r] += value(r, c) * value(r, c);
  } else {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) sq[c] += value(r, c) * value(r, c);
  }
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t l = 0; l < lines; ++l) {
    if (sq[l] > 0x1p-960 && sq[l] < 0x1p960) {
      sq[l] = std::sqrt(sq[l]);
      continue;
    }
    Norm2 norm;
    for (std::int64_t q = 0; q < length; ++q) norm.add(by_rows ? value(l, q) : value(q, l));
    sq[l] = norm.value();
  }
  return sq;
}

// Norms of the rows of op(A) and of the columns of op(B): the Cauchy-Schwarz bound
// |op(A) op(B)|_ij <= |a_i| |b_j| scales the error allowed in entry (i, j).
template <class T>
std::vector<double> op_a_row_norms(const GemmProblem& p) {
  return line_norms(static_cast<const T*>(p.a), p.a_rows(), p.a_cols(), p.lda, !p.trans_a);
}

template <class T>
std::vector<double> op_b_column_norms(const GemmProblem& p) {
  return line_norms(static_cast<const T*>(p.b), p.b_rows(), p.b_cols(), p.ldb, p.trans_b);
}

// Unit roundoff of the precision a kernel computes in.
inline double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f64: return 0x1p-53;
    case DType::f32: return 0x1p-24;
    case DType::tf32:
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    default: return 0;
  }
}

// What a backward error (the error over |alpha| |A||B| + |beta| |C0|) says about a result that
// failed: within rounding, the problem is ill-conditioned; beyond it, the result is wrong.
// The backward error a correct GEMM of this dtype can have over K terms.
inline double rounding_allowance(DType dtype, std::int64_t k) { return double(k + 2) * unit_roundoff(dtype); }

inline std::string backward_note(double backward, DType dtype, std::int64_t k) {
  const double rounding = rounding_allowance(dtype, k);
  std::string note = "backward error relative to |A||B| " + number(backward);
  if (backward <= rounding)
    return note + ", within what " + std::string(dtype_name(dtype)) + " rounding of " +
           std::to_string(k) + " terms allows (" + number(rounding) +
           "): the product is ill-conditioned, and a correct " + std::string(dtype_name(dtype)) +
           " GEMM can be this far from the exact product";
  return note + ", more than " + std::string(dtype_name(dtype)) + " rounding of " +
         std::to_string(k) + " terms explains (" + number(rounding) + ")";
}

// Below the normal range rounding is absolute, not relative: a correct result whose products
// or entries are subnormal can be further from the exact product than the tolerance's relative
// bounds allow. So entry (i, j) may also be off by this floor, which is below those bounds
// wherever nothing underflows (for f32 data, whenever |a_i| |b_j| > k 1e-40): the smallest
// subnormal of the precision the products are summed in (f32 for every dtype but f64) per
// product, scaled by |alpha|, and twice more (alpha's and beta's products), the f64
// reference's own underflow included; the smallest subnormal of a coarser precision the inputs
// are rounded to (tf32 or bf16 computing on f32 data) per input, times the other factors
// (Cauchy-Schwarz: sqrt(k) (|a_i| + |b_j|)); and, for an entry in C's subnormal range (below
// twice its smallest normal), one smallest subnormal of C's dtype for its roundings.
struct UnderflowFloor {
  double per_entry = 0, per_input = 0, c_normal = 0, c_subnormal = 0;
  bool small(double entry) const { return std::fabs(entry) < 2 * c_normal; }
  double at(double entry, double a_norm, double b_norm) const {
    return per_entry + per_input * (a_norm + b_norm) + (small(entry) ? c_subnormal : 0);
  }
  // A bound on the root sum of squares of the floors of `entries` entries of a row, `small` of
  // them in C's subnormal range (Minkowski): Freivalds' row bound adds its errors the same way.
  double row(double entries, double small, double a_norm, double b_frobenius) const {
    return std::sqrt(entries) * (per_entry + per_input * a_norm) + per_input * b_frobenius +
           std::sqrt(small) * c_subnormal;
  }
};

template <class T, class CT>
UnderflowFloor underflow_floor(const GemmProblem& p, DType tol_dtype) {
  UnderflowFloor f;
  const double sum_subnormal = smallest_subnormal(tol_dtype == DType::f64 ? DType::f64 : DType::f32);
  f.per_entry = (double(p.k) * std::max(1.0, std::fabs(p.alpha)) + 2) * sum_subnormal;
  if (p.alpha != 0 && smallest_subnormal(tol_dtype) > range_of<T>().subnormal)
    f.per_input = std::fabs(p.alpha) * std::sqrt(double(p.k)) * smallest_subnormal(tol_dtype);
  f.c_normal = range_of<CT>().normal;
  f.c_subnormal = range_of<CT>().subnormal;
  return f;
}

// Calls f.template operator()<T, CT>() with the input and C storage types of a problem.
template <class F>
decltype(auto) visit_problem(const GemmProblem& p, F&& f) {
  return visit_storage(p.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, std::int8_t>) {
      return f.template operator()<T, std::int32_t>();  // int8 in, int32 C
    } else {
      if constexpr (!std::is_integral_v<T>)
        if (p.c_dtype() != p.dtype) return f.template operator()<T, float>();  // f16/bf16 in, f32 C
      if constexpr (std::is_same_v<T, std::int32_t>)
        if (p.c_dtype() == DType::i64) return f.template operator()<T, std::int64_t>();  // i32 in, i64 C
      return f.template operator()<T, T>();
    }
  });
}

// ---- The checks, each for the storage types of p (c_before: C0, as the caller passed it).

// reference.cpp: against the full reference (double-double, or exact for integer data).
VerifyResult verify_full_float(const GemmProblem& p, const void* c_before, double tol, DType tol_dtype,
                               bool integer_data);
VerifyResult verify_full_integer(const GemmProblem& p, const void* c_before);
// freivalds.cpp: Freivalds' check in double-double.
VerifyResult verify_freivalds(const GemmProblem& p, const void* c_before, double tol, DType tol_dtype,
                              std::uint64_t seed, bool integer_data);
// integer.cpp: Freivalds' check in exact modular arithmetic, and the overflow screen of
// integer products.
VerifyResult verify_modular(const GemmProblem& p, const void* c_before, std::uint64_t seed);
VerifyResult screen_overflow(const GemmProblem& p, const void* c_before, std::uint64_t seed);

}  // namespace gemmkit::verify_detail

// The verification oracle. It shares no code with the kernels it checks: its own loops,
// exact (128-bit or modular) integer arithmetic or double-double sums, and no BLAS.
//
// The checks, and what passing each one means (t = tolerance(dtype, k), u = the unit
// roundoff of double):
//  - full, integer dtypes: every entry equals the exact product (128-bit reference).
//  - full, floating dtypes: against a reference that is exact (128-bit integers) when every
//    input is an integer, else double-double (about 106 bits, TwoProd/TwoSum), the relative
//    Frobenius error |C - C_exact|_F / |C_exact|_F is at most t, and every entry is within
//    2 t (|alpha| |a_i| |b_j| + |beta| |c0_ij|) of the exact one (a_i row i of op(A), b_j
//    column j of op(B)): the norm test alone would average a single wrong entry away.
//  - freivalds (floating): for 4 random sign vectors x, r = C x - (alpha A (B x) + beta C0 x)
//    in double-double. Passing: the randomised estimate |r| / |alpha A B x + beta C0 x| of the
//    relative Frobenius error is at most t, and every row of r is within
//    t (|alpha| |a_i| |B|_F + |beta| |c0_i|). The reference's own error, at most
//    eta = 2 ((n + k + 4) u)^2 (|alpha| |A| |B| |x| + |beta| |C0| |x| + |C| |x|), is counted
//    against the result: a check that cannot decide fails and says so. With integer inputs
//    and results r is an integer, exact once eta < 1/2.
//  - exact (integer-valued inputs, any dtype): Freivalds' check in exact modular arithmetic,
//    3 random vectors modulo 2^61 - 1 and 3 modulo 2^31 - 1. A wrong entry escapes only if
//    every round misses it: probability below 2^-92 whatever the data.
// The backward error max |r_i| / (|A| |B| |x|)_i is reported too: it tells a wrong result
// from a correctly rounded product of an ill-conditioned problem.
// IEEE values (floating dtypes): an entry that an Inf or NaN input reaches must be exactly the
// Inf or NaN that IEEE arithmetic gives (SpecialValues); full and freivalds check those entry by
// entry and the rest as above, without them. An entry whose terms are all finite but whose exact
// value is beyond C's dtype fails as a numeric overflow, naming the exact value. Every bound
// also allows the rounding of subnormals (UnderflowFloor), which relative bounds cannot.
// `exact` refuses Inf and NaN inputs (they are not integers).
#include "gemmkit/verify.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <vector>

#include "arith/double_double.hpp"
#include "arith/int128.hpp"
#include "arith/splitmix.hpp"
#include "core/host_matrix_type.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit {
namespace {

using detail::visit_storage;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::string_view kExactNeedsIntegers =
    "--verify exact needs integer-valued inputs: integer dtypes, or float data whose entries "
    "(and alpha and beta) are all integers below 2^63; use full or freivalds";

// The 16-bit float dtypes are decoded here from their bits, not by their own conversions,
// so that the oracle reads every dtype without the code it checks.

double to_double(double x) { return x; }
double to_double(float x) { return x; }
double to_double(std::int8_t x) { return x; }
double to_double(std::int32_t x) { return x; }
double to_double(std::int64_t x) { return static_cast<double>(x); }
double to_double(Half h) {
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
double to_double(BFloat16 h) {
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

std::string entry_name(std::int64_t i, std::int64_t j) {
  std::string name = "(";  // appended piecewise: GCC 12 misfires -Wrestrict on "(" + ...
  name += std::to_string(i);
  name += ", ";
  name += std::to_string(j);
  name += ")";
  return name;
}

std::string number(double x) {
  if (std::isnan(x)) return "nan";  // whatever its sign bit
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// m 2^e, which may be far beyond the double range, in decimal.
std::string number(double m, int e) {
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
double smallest_subnormal(DType dtype) {
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
std::string overflow_detail(std::int64_t i, std::int64_t j, const std::string& exact, DType dtype,
                            double largest, double got) {
  return "numeric overflow: the exact result at " + entry_name(i, j) + " is " + exact + ", beyond " +
         std::string(dtype_name(dtype)) + " (largest finite " + number(largest) + "); the result holds " +
         number(got);
}

void check_problem(const GemmProblem& p, const void* c_before, const char* what) {
  validate(p);
  if (p.beta != 0 && p.m > 0 && p.n > 0 && c_before == nullptr)
    fail(ErrorCategory::usage, std::string(what) + ": beta is " + number(p.beta) +
                                   ", so C as it was before the GEMM is needed");
  checked_element_count(p.m, p.n, std::string(what) + " result");
}

// The rows of op(B) converted once are shared by every row of C a panel at a time: about
// this many elements, so that a panel stays in L2 while all rows stream past it.
constexpr std::int64_t kPanelElements = std::int64_t{1} << 16;

std::int64_t panel_rows(const GemmProblem& p) {
  return std::clamp<std::int64_t>(kPanelElements / std::max<std::int64_t>(p.n, 1), 1, p.k);
}

// References are made and compared this many entries at a time, so that the check needs a
// few MiB beside the problem whatever its size.
std::int64_t block_rows(const GemmProblem& p) {
  return std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max<std::int64_t>(p.n, 1));
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

bool integral_scalar(double x) { return x == std::trunc(x) && std::fabs(x) < 0x1p63; }

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

// ---- The references, a block of rows at a time.

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

// Rows [i0, i1) of alpha op(A) op(B) + beta C0 in double-double (normalised) into hi and lo,
// following IEEE arithmetic: NaN and Inf where `specials` puts them (the sums read non-finite
// operands as 0), and Inf of its sign where the exact value is beyond the double range. The
// value is not rounded to C's dtype: one beyond it is the caller's to report.
template <class T, class CT>
void compensated_rows(const GemmProblem& p, const CT* c0, const SpecialValues<T, CT>& specials,
                      std::int64_t i0, std::int64_t i1, double* hi, double* lo) {
  const std::int64_t n = p.n, k = p.k, rows = i1 - i0;
  std::fill(hi, hi + rows * n, 0.0);
  std::fill(lo, lo + rows * n, 0.0);
  // alpha == 0: A and B are not read (the BLAS convention).
  if (p.alpha != 0 && k > 0 && n > 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    const std::int64_t kb = panel_rows(p);
    std::vector<double> panel(static_cast<std::size_t>(kb * n));
    for (std::int64_t p0 = 0; p0 < k; p0 += kb) {
      const std::int64_t prows = std::min(kb, k - p0);
      // (prows, n) panel of op(B), converted once.
#pragma omp parallel for schedule(static)
      for (std::int64_t q = 0; q < prows; ++q)
        for (std::int64_t j = 0; j < n; ++j) panel[q * n + j] = finite_or_zero(to_double(b(p0 + q, j)));
      // Row i of C += op(A)(i, p0:p0+prows) x panel, in i-p-j order: unit stride innermost.
#pragma omp parallel for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r) {
        double* __restrict h = hi + r * n;
        double* __restrict l = lo + r * n;
        for (std::int64_t q = 0; q < prows; ++q) {
          const double aiq = finite_or_zero(to_double(a(i0 + r, p0 + q)));
          const double* __restrict brow = panel.data() + q * n;
          dd_axpy(h, l, aiq, brow, n);
        }
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double& h = hi[r * n + j];
      double& l = lo[r * n + j];
      // alpha (h + l) + beta c0, in double-double.
      double sh = 0, sl = p.alpha * l;
      dd_add_product(sh, sl, p.alpha, h);
      if (p.beta != 0) dd_add_product(sh, sl, p.beta, finite_or_zero(to_double(c0[(i0 + r) * p.ldc + j])));
      dd_normalise(sh, sl);
      h = sh;
      l = sl;
      if (specials.special(i0 + r, j)) {
        h = specials.at(i0 + r, j), l = 0;
      } else if (!std::isfinite(h)) {
        // Finite terms whose products or partial sums left the double range (f64 operands
        // beyond 2^511, or a huge alpha): again with scaling.
        const auto [mh, ml, e] = scaled_entry<T, CT>(p, c0, i0 + r, j);
        h = std::ldexp(mh, e), l = std::isfinite(h) ? std::ldexp(ml, e) : 0;
      }
    }
}

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

template <class T>
double relative_frobenius_typed(const T* got, std::int64_t rows, std::int64_t cols,
                                std::int64_t ld, const std::vector<double>& reference) {
  // Per-row norms combined in row order: the same answer for any thread count.
  std::vector<Norm2> diff(static_cast<std::size_t>(rows)), ref(static_cast<std::size_t>(rows));
  std::vector<char> mismatch(static_cast<std::size_t>(rows), 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double g = to_double(got[i * ld + j]), e = reference[i * cols + j];
      if (std::isfinite(g) && std::isfinite(e)) {
        diff[i].add(g - e);
        ref[i].add(e);
      } else if (!(g == e || (std::isnan(g) && std::isnan(e)))) {
        mismatch[i] = 1;  // NaN or Inf on one side only, or Infs of opposite sign
      }
    }
  Norm2 d, r;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (mismatch[i]) return std::numeric_limits<double>::quiet_NaN();
    d.add(diff[i]);
    r.add(ref[i]);
  }
  return r.value() > 0 ? d.value() / r.value() : d.value();
}

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

// Entries may each be off by this many tolerances times their Cauchy-Schwarz scale: the
// worst single product of tf32 or bf16 inputs is off by twice their unit roundoff.
constexpr double kEntrySlack = 2.0;

// Unit roundoff of the precision a kernel computes in.
double unit_roundoff(DType dtype) {
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
double rounding_allowance(DType dtype, std::int64_t k) { return double(k + 2) * unit_roundoff(dtype); }

std::string backward_note(double backward, DType dtype, std::int64_t k) {
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

// The backward error of entry (i, j) off by `error`: error / (|alpha| |a_i| . |b_j| + |beta c0_ij|).
template <class T, class CT>
double entry_backward_error(const GemmProblem& p, const CT* c0, std::int64_t i, std::int64_t j,
                            double error) {
  double scale = 0;
  if (p.alpha != 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    for (std::int64_t q = 0; q < p.k; ++q) scale += std::fabs(to_double(a(i, q)) * to_double(b(q, j)));
    scale *= std::fabs(p.alpha);
  }
  if (p.beta != 0) scale += std::fabs(p.beta * to_double(c0[i * p.ldc + j]));
  return scale > 0 ? error / scale : (error == 0 ? 0.0 : kInfinity);
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

// The full check of a floating-point result, a block of rows at a time.
template <class T, class CT>
VerifyResult verify_full_float(const GemmProblem& p, const CT* c0, double tol, DType tol_dtype,
                               bool integer_data) {
  VerifyResult result;
  result.method = VerifyMode::full;
  result.tolerance = tol;
  const auto* got = static_cast<const CT*>(p.c);
  const std::int64_t m = p.m, n = p.n, block = std::min(block_rows(p), std::max<std::int64_t>(m, 1));
  std::vector<double> a_norms(m, 0.0), b_norms(n, 0.0);  // A and B unread if alpha == 0
  if (p.alpha != 0) a_norms = op_a_row_norms<T>(p), b_norms = op_b_column_norms<T>(p);
  const SpecialValues<T, CT> specials(p, c0);
  const UnderflowFloor floor = underflow_floor<T, CT>(p, tol_dtype);
  constexpr Range range = range_of<CT>();

  // Per row: the norms (of the errors beyond the underflow floor), the entry furthest outside
  // its own bound (or the first non-finite mismatch), the first entry whose exact value
  // overflows C's dtype, and the largest error.
  struct RowStats {
    Norm2 diff, ref;
    bool mismatch = false, floor_used = false;
    double worst = 0, largest = 0;
    std::int64_t worst_j = -1, largest_j = -1, overflow_j = -1;
  };
  bool exact = integer_data;
  std::vector<i128> exact_block(exact ? static_cast<std::size_t>(block * n) : 0);
  std::vector<double> hi(static_cast<std::size_t>(block * n)), lo(hi.size());
  std::vector<RowStats> stats(static_cast<std::size_t>(block));
  Norm2 diff, ref;
  bool mismatch = false, floor_used = false;
  double worst = 0, largest = 0, worst_expected = 0, largest_expected = 0, overflow_expected = 0;
  std::int64_t wi = -1, wj = -1, li = -1, lj = -1, oi = -1, oj = -1;
  for (std::int64_t i0 = 0; i0 < m; i0 += block) {
    const std::int64_t i1 = std::min(m, i0 + block), rows = i1 - i0;
    // Beyond 128 bits (integers near 2^63 times many terms): double-double from here on.
    if (exact && exact_rows<T, CT>(p, c0, i0, i1, exact_block.data()).first >= 0) exact = false;
    if (exact) {
#pragma omp parallel for schedule(static)
      for (std::int64_t e = 0; e < rows * n; ++e) int128_to_dd(exact_block[e], hi[e], lo[e]);
    } else {
      compensated_rows<T, CT>(p, c0, specials, i0, i1, hi.data(), lo.data());
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      RowStats s;
      const std::int64_t i = i0 + r;
      for (std::int64_t j = 0; j < n; ++j) {
        const double g = to_double(got[i * p.ldc + j]), h = hi[r * n + j], l = lo[r * n + j];
        const bool special = !std::isfinite(h) && specials.special(i, j);
        if (!special && !(std::fabs(h) < range.overflow)) {  // finite terms, a sum beyond C's dtype
          if (s.overflow_j < 0) s.overflow_j = j;
          continue;
        }
        if (special || !std::isfinite(g)) {
          if (!same_value(g, h) && !s.mismatch) {
            s.mismatch = true;  // NaN or Inf on one side only, or not the one IEEE gives
            s.worst = kInfinity;
            s.worst_j = j;
          }
          continue;
        }
        const double d = (g - h) - l, ad = std::fabs(d);
        const double c0_scale = p.beta != 0 ? std::fabs(p.beta * to_double(c0[i * p.ldc + j])) : 0;
        const double relative = kEntrySlack * tol * (std::fabs(p.alpha) * a_norms[i] * b_norms[j] + c0_scale);
        const double entry_floor = floor.at(h, a_norms[i], b_norms[j]), bound = relative + entry_floor;
        s.diff.add(std::max(ad - entry_floor, 0.0));
        s.ref.add(h);
        if (ad > bound) {
          const double excess = bound > 0 ? ad / bound : kInfinity;
          if (excess > s.worst) s.worst = excess, s.worst_j = j;
        } else if (ad > relative) {
          s.floor_used = true;
        }
        if (ad > s.largest) s.largest = ad, s.largest_j = j;
      }
      stats[r] = s;
    }
    // Combined in row order: the same answer for any thread count.
    for (std::int64_t r = 0; r < rows; ++r) {
      const RowStats& s = stats[r];
      mismatch = mismatch || s.mismatch;
      floor_used = floor_used || s.floor_used;
      diff.add(s.diff);
      ref.add(s.ref);
      if (s.worst > worst) {
        worst = s.worst, wi = i0 + r, wj = s.worst_j;
        worst_expected = hi[r * n + wj];
      }
      if (s.largest > largest) {
        largest = s.largest, li = i0 + r, lj = s.largest_j;
        largest_expected = hi[r * n + lj];
      }
      if (oi < 0 && s.overflow_j >= 0) oi = i0 + r, oj = s.overflow_j, overflow_expected = hi[r * n + oj];
    }
  }
  result.error = mismatch ? std::numeric_limits<double>::quiet_NaN()
                          : (ref.value() > 0 ? diff.value() / ref.value() : diff.value());
  const bool frobenius_ok = result.error <= tol;  // false for NaN
  result.passed = frobenius_ok && wi < 0 && oi < 0;
  result.check = exact ? "full, exact integer reference" : "full, double-double reference";
  result.guarantee = "relative Frobenius error against the exact product " + number(result.error) +
                     " <= " + number(tol) + ", and every entry within " + number(kEntrySlack * tol) +
                     " (|alpha| |a_i| |b_j| + |beta| |c0_ij|) of it" +
                     (floor_used ? " or, where it underflows, within the rounding of subnormals" : "") +
                     (exact ? "" : " (the reference is off by at most (k u)^2 |A||B|, u = 2^-53)");
  if (exact && diff.value() == 0 && !mismatch)
    result.guarantee = "every entry equals the exact product";
  if (specials.any()) result.guarantee += "; Inf and NaN exactly where IEEE arithmetic puts them";
  if (li >= 0) result.backward_error = entry_backward_error<T, CT>(p, c0, li, lj, largest);
  if (oi >= 0) {
    // The exact value beyond the double range too: again with scaling, to name it.
    std::string expected = number(overflow_expected);
    if (!std::isfinite(overflow_expected)) {
      const auto [mh, ml, e] = scaled_entry<T, CT>(p, c0, oi, oj);
      expected = number(mh + ml, e);
    }
    result.detail = overflow_detail(oi, oj, expected, p.c_dtype(), range.largest, to_double(got[oi * p.ldc + oj]));
    return result;
  }
  if (!result.passed) {
    if (!frobenius_ok)
      result.detail = "relative Frobenius error " + number(result.error) + " exceeds the " +
                      std::string(dtype_name(tol_dtype)) + " tolerance " + number(tol);
    if (wi >= 0) {
      const double g = to_double(got[wi * p.ldc + wj]);
      result.detail += std::string(result.detail.empty() ? "" : "; ") + "entry " +
                       entry_name(wi, wj) + " is " + number(g) + ", expected " + number(worst_expected);
      if (std::isfinite(worst)) {
        result.detail += " (off by " + number(std::fabs(g - worst_expected)) + ", " + number(worst) +
                         " times what rounding explains)";
      } else if (std::isfinite(worst_expected) && p.alpha != 0 &&
                 std::fabs(p.alpha) * a_norms[wi] * b_norms[wj] > range.largest) {
        // Cauchy-Schwarz: no partial sum of alpha a_i . b_j exceeds |alpha| |a_i| |b_j|.
        result.detail += " (its partial sums may reach " + number(std::fabs(p.alpha) * a_norms[wi] * b_norms[wj]) +
                         ", beyond " + std::string(dtype_name(p.c_dtype())) + ": one that overflows gives Inf)";
      }
    } else if (li >= 0) {
      result.detail += "; the largest error is at " + entry_name(li, lj) + ": " +
                       number(to_double(got[li * p.ldc + lj])) + ", expected " + number(largest_expected);
    }
    if (li >= 0 && std::isfinite(worst)) {
      result.detail += "; " + backward_note(result.backward_error, tol_dtype, p.k);
      result.within_rounding = result.backward_error <= rounding_allowance(tol_dtype, p.k);
    }
  }
  return result;
}

// The full check of an integer result: every entry equal to the exact one.
// CT: C's type (T, or int32 for int8 inputs).
template <class T, class CT = T>
VerifyResult verify_full_integer(const GemmProblem& p, const CT* c0) {
  VerifyResult result;
  result.method = VerifyMode::full;
  result.check = "full, exact 128-bit reference";
  result.guarantee = "every entry equals the exact product";
  const auto* got = static_cast<const CT*>(p.c);
  const std::int64_t m = p.m, n = p.n, block = std::min(block_rows(p), std::max<std::int64_t>(m, 1));
  std::vector<i128> exact(static_cast<std::size_t>(block * n));
  Norm2 diff, ref;
  std::int64_t mismatches = 0, fi = -1, fj = -1;
  i128 first_expected = 0;
  auto overflow = [&](const std::string& what) {
    result.passed = false;
    result.error = kInfinity;
    result.detail = "numeric overflow: the exact result at " + what;
    return result;
  };
  for (std::int64_t i0 = 0; i0 < m; i0 += block) {
    const std::int64_t i1 = std::min(m, i0 + block);
    const auto [oi, oj] = exact_rows<T, CT>(p, c0, i0, i1, exact.data());
    if (oi >= 0) return overflow(entry_name(oi, oj) + " overflows 128-bit integers");
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const i128 x = exact[(i - i0) * n + j], g = got[i * p.ldc + j];
        if (x < std::numeric_limits<CT>::min() || x > std::numeric_limits<CT>::max())
          return overflow(entry_name(i, j) + " is " + i128_text(x) + ", which does not fit " +
                          std::string(dtype_name(p.c_dtype())));
        diff.add(static_cast<double>(g - x));
        ref.add(static_cast<double>(x));
        if (g != x && mismatches++ == 0) fi = i, fj = j, first_expected = x;
      }
  }
  result.error = ref.value() > 0 ? diff.value() / ref.value() : diff.value();
  result.passed = mismatches == 0;
  if (!result.passed)
    result.detail = "entry " + entry_name(fi, fj) + " is " + i128_text(got[fi * p.ldc + fj]) +
                    ", expected " + i128_text(first_expected) + " (" + std::to_string(mismatches) +
                    " of " + std::to_string(m * n) + " entries differ)";
  return result;
}

// ---- Freivalds' check in floating point.

// This many random sign vectors x: a wrong entry (i, j) changes (C x)_i by its error times
// +-1, so a single wrong entry never escapes.
constexpr int kVectors = 4;

// (len, kVectors) double-double vectors, row-major.
struct DDVectors {
  std::vector<double> hi, lo;
  explicit DDVectors(std::int64_t len, double value = 0)
      : hi(static_cast<std::size_t>(len * kVectors), value), lo(hi.size(), 0.0) {}
};

// op(S) X in double-double for an operand stored (rows, cols) with leading dimension ld.
// Abs: |op(S)| X instead, in plain double (X >= 0: sums without cancellation). Non-finite
// entries of S count as 0: Freivalds' check leaves their rows and columns out (X is 0 there).
template <bool Abs, class T>
DDVectors op_times(const T* s, bool transposed, std::int64_t rows, std::int64_t cols,
                   std::int64_t ld, const DDVectors& x) {
  DDVectors y(transposed ? cols : rows);
  const auto add = [&](double* h, double* l, double v, std::int64_t at) {
    if (Abs) v = std::fabs(v);
    for (int t = 0; t < kVectors; ++t) {
      if constexpr (Abs) {
        h[t] += v * x.hi[at * kVectors + t];
      } else {
        dd_add_product(h[t], l[t], v, x.hi[at * kVectors + t]);
        l[t] += v * x.lo[at * kVectors + t];
      }
    }
  };
  if (!transposed) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        add(&y.hi[r * kVectors], &y.lo[r * kVectors], finite_or_zero(to_double(s[r * ld + c])), c);
  } else {
    // Each thread owns a range of columns and reads S row by row.
#pragma omp parallel
    {
      const std::int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
      const std::int64_t c_begin = cols * t / threads, c_end = cols * (t + 1) / threads;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = c_begin; c < c_end; ++c)
          add(&y.hi[c * kVectors], &y.lo[c * kVectors], finite_or_zero(to_double(s[r * ld + c])), r);
    }
  }
  if constexpr (!Abs)
    for (std::size_t e = 0; e < y.hi.size(); ++e) dd_normalise(y.hi[e], y.lo[e]);
  return y;
}

template <class T, class CT>
VerifyResult verify_freivalds(const GemmProblem& p, const CT* c0, double tol, DType tol_dtype,
                              std::uint64_t seed, bool integer_data) {
  VerifyResult result;
  result.method = VerifyMode::freivalds;
  result.tolerance = tol;
  result.check = "freivalds, 4 random sign vectors, double-double residuals";
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const auto* got = static_cast<const CT*>(p.c);
  auto failed = [&](std::string detail) {
    result.passed = false;
    result.error = kInfinity;
    result.detail = std::move(detail);
    return result;
  };
  const SpecialValues<T, CT> specials(p, c0);
  const UnderflowFloor floor = underflow_floor<T, CT>(p, tol_dtype);
  std::vector<double> a_norms(m, 0.0), b_norms(n, 0.0);  // A and B unread if alpha == 0
  if (p.alpha != 0) a_norms = op_a_row_norms<T>(p), b_norms = op_b_column_norms<T>(p);

  // Entry by entry: Inf and NaN exactly where IEEE arithmetic puts them, every other entry
  // finite. Per row: the first entry that is not, how many are non-finite, and how many of the
  // others are in C's subnormal range.
  std::vector<std::int64_t> bad(static_cast<std::size_t>(m), -1), row_specials(static_cast<std::size_t>(m), 0),
      row_small(static_cast<std::size_t>(m), 0);
  bool c_integral = true;
#pragma omp parallel for schedule(static) reduction(&& : c_integral)
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double g = to_double(got[i * p.ldc + j]);
      if (specials.special(i, j)) {
        if (bad[i] < 0 && !same_value(g, specials.at(i, j))) bad[i] = j;
        ++row_specials[i];
      } else if (!std::isfinite(g)) {
        if (bad[i] < 0) bad[i] = j;
      } else {
        c_integral = c_integral && g == std::trunc(g);
        row_small[i] += floor.small(g);
      }
    }
  for (std::int64_t i = 0; i < m; ++i) {
    if (bad[i] < 0) continue;
    const std::int64_t j = bad[i];
    const double g = to_double(got[i * p.ldc + j]);
    if (specials.special(i, j))
      return failed("entry " + entry_name(i, j) + " is " + number(g) + ", expected " + number(specials.at(i, j)) +
                    " (what IEEE arithmetic makes of the inputs' Inf and NaN)");
    // Every term finite: an overflow if the exact value is beyond C's dtype, else wrong.
    const auto [mh, ml, e] = scaled_entry<T, CT>(p, c0, i, j);
    if (!(std::fabs(std::ldexp(mh, e)) < range_of<CT>().overflow))
      return failed(overflow_detail(i, j, number(mh + ml, e), p.c_dtype(), range_of<CT>().largest, g));
    return failed("entry " + entry_name(i, j) + " is " + number(g) + ", expected " + number(mh + ml, e));
  }

  // The rest is compared as a whole. Rows and columns of C that hold no finite entry are left
  // out (x is 0 on those columns, those rows are not compared). Another entry that c0 alone
  // makes non-finite is read as 0 in C x and C0 x, and its alpha a_i . b_j x_j put back into
  // the residual by hand, in k steps.
  std::vector<char> skip_row(static_cast<std::size_t>(m)), skip_column(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) skip_row[i] = specials.row(i) || row_specials[i] == n;
  std::int64_t put_back_entries = 0;
  if (specials.any()) {
    std::vector<std::int64_t> column_specials(static_cast<std::size_t>(n), 0);  // in the rows kept
    for (std::int64_t i = 0; i < m; ++i)
      if (!skip_row[i] && row_specials[i] > 0)
        for (std::int64_t j = 0; j < n; ++j) column_specials[j] += specials.special(i, j);
    const auto kept_rows = std::count(skip_row.begin(), skip_row.end(), 0);
    for (std::int64_t j = 0; j < n; ++j) skip_column[j] = specials.column(j) || column_specials[j] == kept_rows;
    for (std::int64_t i = 0; i < m; ++i)
      if (!skip_row[i] && row_specials[i] > 0)
        for (std::int64_t j = 0; j < n; ++j) put_back_entries += !skip_column[j] && specials.special(i, j);
  }
  if (p.alpha != 0 && double(put_back_entries) * double(k) > kFullVerifyLimit)
    return failed("inconclusive: " + std::to_string(put_back_entries) + " scattered entries of C0 are Inf or NaN, "
                  "and leaving each out of Freivalds' check takes k = " + std::to_string(k) +
                  " steps (use --verify full)");
  DDVectors x(n), ones(std::max(n, k), 1.0);
  std::uint64_t state = seed;
  for (double& v : x.hi) v = (splitmix64_next(state) >> 63) ? 1.0 : -1.0;
  for (std::int64_t j = 0; j < n; ++j)
    if (skip_column[j])
      for (int t = 0; t < kVectors; ++t) x.hi[j * kVectors + t] = ones.hi[j * kVectors + t] = 0;
  const DDVectors cx = op_times<false>(got, false, m, n, p.ldc, x);
  const DDVectors c_abs = op_times<true>(got, false, m, n, p.ldc, ones);
  // A and B are not read when alpha == 0, nor C0 when beta == 0.
  DDVectors abx(m), ab_abs(m), c0x(m), c0_abs(m), put_back(m);
  std::vector<double> c0_norms(m, 0.0);
  Norm2 b_frobenius;
  if (p.alpha != 0) {
    const auto* a = static_cast<const T*>(p.a);
    const auto* b = static_cast<const T*>(p.b);
    abx = op_times<false>(a, p.trans_a, p.a_rows(), p.a_cols(), p.lda,
                          op_times<false>(b, p.trans_b, p.b_rows(), p.b_cols(), p.ldb, x));
    ab_abs = op_times<true>(a, p.trans_a, p.a_rows(), p.a_cols(), p.lda,
                            op_times<true>(b, p.trans_b, p.b_rows(), p.b_cols(), p.ldb, ones));
    for (std::int64_t j = 0; j < n; ++j)
      if (!skip_column[j]) b_frobenius.add(b_norms[j]);
  }
  if (p.beta != 0) {
    c0x = op_times<false>(c0, false, m, n, p.ldc, x);
    c0_abs = op_times<true>(c0, false, m, n, p.ldc, ones);
    c0_norms = line_norms(c0, m, n, p.ldc, true, &skip_column);
  }
  std::vector<double> row_floor(static_cast<std::size_t>(m), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    row_floor[i] = floor.row(double(n - row_specials[i]), double(row_small[i]), a_norms[i], b_frobenius.value());
  if (put_back_entries > 0 && p.alpha != 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
#pragma omp parallel for schedule(dynamic)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n && !skip_row[i] && row_specials[i] > 0; ++j) {
        if (skip_column[j] || !specials.special(i, j)) continue;
        double h = 0, l = 0;
        for (std::int64_t q = 0; q < k; ++q) dd_add_product(h, l, to_double(a(i, q)), to_double(b(q, j)));
        for (int t = 0; t < kVectors; ++t) {
          const double alpha_x = p.alpha * x.hi[j * kVectors + t];  // exact: x is +-1
          double& ph = put_back.hi[i * kVectors + t];
          double& pl = put_back.lo[i * kVectors + t];
          dd_add_product(ph, pl, alpha_x, h);
          pl += alpha_x * l;
        }
      }
  }

  // The reference side's own error bound (two double-double products in a row).
  const double gamma = double(n + k + 4) * 0x1p-53;
  Norm2 residual, low, high, reference;
  bool undecided = false;
  std::int64_t worst_row = -1;
  double worst = 0, worst_residual = 0, worst_allowed = 0, backward = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    if (skip_row[i]) continue;
    const double magnitude = std::fabs(p.alpha) * ab_abs.hi[i * kVectors] +
                             std::fabs(p.beta) * c0_abs.hi[i * kVectors];
    const double eta = 2 * gamma * gamma * (magnitude + c_abs.hi[i * kVectors]);
    const double allowed =
        tol * (std::fabs(p.alpha) * a_norms[i] * b_frobenius.value() + std::fabs(p.beta) * c0_norms[i]) + row_floor[i];
    for (int t = 0; t < kVectors; ++t) {
      const std::size_t at = static_cast<std::size_t>(i * kVectors + t);
      double h = cx.hi[at], l = cx.lo[at];
      dd_add_product(h, l, -p.alpha, abx.hi[at]);
      l -= p.alpha * abx.lo[at];
      if (p.beta != 0) {
        dd_add_product(h, l, -p.beta, c0x.hi[at]);
        l -= p.beta * c0x.lo[at];
      }
      double th, tl;
      two_sum(h, put_back.hi[at], th, tl);
      h = th, l += tl + put_back.lo[at];
      double r = h + l, e = eta + 0x1p-52 * std::fabs(r);
      // Integers in, integers out: the residual is an integer, known exactly once e < 1/2.
      if (integer_data && c_integral && e < 0.5) r = std::nearbyint(r), e = 0;
      const double ar = std::fabs(r);
      // What is left beyond the underflow floor of the row's entries.
      residual.add(std::max(ar - row_floor[i], 0.0));
      low.add(std::max(ar - e - row_floor[i], 0.0));
      high.add(std::max(ar + e - row_floor[i], 0.0));
      reference.add(p.alpha * abx.hi[at] + p.beta * c0x.hi[at] - put_back.hi[at]);
      backward = std::max(backward, magnitude > 0 ? ar / magnitude : (ar == 0 ? 0.0 : kInfinity));
      double excess = 0;
      if (!std::isfinite(r)) excess = kInfinity;
      else if (ar - e > allowed) excess = allowed > 0 ? (ar - e) / allowed : kInfinity;
      else if (ar + e > allowed) undecided = true;
      if (excess > worst) worst = excess, worst_row = i, worst_residual = r, worst_allowed = allowed;
    }
  }
  const double norm = reference.value();
  const auto relative = [&](const Norm2& v) { return norm > 0 ? v.value() / norm : v.value(); };
  result.error = relative(residual);
  result.backward_error = backward;
  const bool fails = !(relative(low) <= tol) || worst_row >= 0;
  result.passed = !fails && relative(high) <= tol && !undecided;
  result.guarantee =
      "randomised: for 4 random sign vectors x, |C x - A B x| / |A B x| = " + number(result.error) +
      " <= " + number(tol) + " (an estimate of the relative Frobenius error against the exact "
      "product) and every row within " + number(tol) + " (|alpha| |a_i| |B|_F + |beta| |c0_i|); "
      "backward error relative to |A||B| " + number(backward);
  if (specials.any())
    result.guarantee += "; Inf and NaN exactly where IEEE arithmetic puts them, checked entry by entry";
  if (fails) {
    if (!(relative(low) <= tol))
      result.detail = "estimated relative Frobenius error " + number(result.error) + " exceeds the " +
                      std::string(dtype_name(tol_dtype)) + " tolerance " + number(tol);
    if (worst_row >= 0)
      result.detail += std::string(result.detail.empty() ? "" : "; ") + "row " +
                       std::to_string(worst_row) + " of C x differs from alpha A (B x) + beta C0 x by " +
                       number(std::fabs(worst_residual)) + ", more than the " + number(worst_allowed) +
                       " that rounding explains" +
                       (std::isfinite(worst_residual) ? "" : " (its sums leave the double range: use --verify full)");
    if (std::isfinite(backward)) {
      result.detail += "; " + backward_note(backward, tol_dtype, k);
      result.within_rounding = backward <= rounding_allowance(tol_dtype, k);
    }
  } else if (!result.passed) {
    result.detail = "inconclusive: the residual " + number(result.error) + " is within the error of "
                    "the double-double reference itself (up to " + number(relative(high)) +
                    "), more than the tolerance " + number(tol) + ": |A||B| is far larger than |A B| "
                    "(use --verify full, or --verify exact for integer data)";
  }
  return result;
}

// ---- Freivalds' check in exact modular arithmetic.

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

// ---- The integer rule of every host-memory GEMM (check_integer_result in verify.hpp).

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
    if (mode == VerifyMode::none) return screen_overflow<T, CT>(p, c0, seed);
    if (mode == VerifyMode::full || (mode == VerifyMode::automatic && cheap))
      return verify_full_integer<T, CT>(p, c0);
    return verify_modular<T, CT>(p, c0, seed);
  } else {
    if (mode == VerifyMode::none) return {};
    const bool integer_data = integer_valued_typed<T, CT>(p, c0);
    if (mode == VerifyMode::exact) {
      if (!integer_data)
        fail(ErrorCategory::usage, std::string(kExactNeedsIntegers));
      return verify_modular<T, CT>(p, c0, seed);
    }
    const DType tol_dtype = tolerance_dtype(p.dtype, accuracy);
    const double tol = tolerance(tol_dtype, p.k);
    if (mode == VerifyMode::full || (mode == VerifyMode::automatic && cheap))
      return verify_full_float<T, CT>(p, c0, tol, tol_dtype, integer_data);
    if (mode == VerifyMode::automatic && integer_data && exact_expected<T, CT>(p, c0, accuracy))
      return verify_modular<T, CT>(p, c0, seed);
    return verify_freivalds<T, CT>(p, c0, tol, tol_dtype, seed, integer_data);
  }
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

}  // namespace

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

std::vector<double> reference_gemm(const GemmProblem& problem, const void* c_before) {
  check_problem(problem, c_before, "reference GEMM");
  std::vector<double> hi(static_cast<std::size_t>(problem.m * problem.n)), lo(hi.size());
  visit_problem(problem, [&]<class T, class CT>() {
    const auto* c0 = static_cast<const CT*>(c_before);
    compensated_rows<T, CT>(problem, c0, SpecialValues<T, CT>(problem, c0), 0, problem.m, hi.data(), lo.data());
    // What IEEE rounding to C's dtype makes of an exact value beyond it: Inf of its sign.
    if constexpr (!std::is_integral_v<CT>)
      for (double& x : hi)
        if (!(std::fabs(x) < range_of<CT>().overflow) && !std::isnan(x)) x = std::copysign(kInfinity, x);
  });
  return hi;
}

std::vector<int128_t> reference_gemm_exact(const GemmProblem& problem, const void* c_before) {
  check_problem(problem, c_before, "exact reference GEMM");
  if (!is_integer(problem.dtype))
    fail(ErrorCategory::usage, "the exact reference takes integer dtypes, not " +
                                   std::string(dtype_name(problem.dtype)));
  std::vector<i128> out(static_cast<std::size_t>(problem.m * problem.n));
  visit_problem(problem, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>) {
      if (!integral_scalar(problem.alpha) || !integral_scalar(problem.beta))
        fail(ErrorCategory::usage, "exact reference: alpha and beta must be integers below 2^63");
      const auto [i, j] = exact_rows<T, CT>(problem, static_cast<const CT*>(c_before), 0, problem.m, out.data());
      if (i >= 0)
        fail(ErrorCategory::numeric, "exact reference: entry " + entry_name(i, j) +
                                         " overflows 128-bit integers");
    }
  });
  return out;
}

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

namespace {
// The row-major form of one integer product, for the two functions below.
GemmProblem integer_product(const GemmProblem& problem, const void* c_before, const char* what) {
  check_problem(problem, c_before, what);
  if (!is_integer(problem.dtype) || problem.batch > 1)
    fail(ErrorCategory::usage, std::string(what) + " takes one product of an integer dtype, not " +
                                   std::to_string(problem.batch) + " of " + std::string(dtype_name(problem.dtype)));
  return as_row_major(problem);
}
}  // namespace

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

bool integer_valued(const GemmProblem& problem, const void* c_before) {
  check_problem(problem, c_before, "integer_valued");
  return visit_problem(problem, [&]<class T, class CT>() {
    return integer_valued_typed<T, CT>(problem, static_cast<const CT*>(c_before));
  });
}

double relative_frobenius_error(DType dtype, const void* got, std::int64_t rows,
                                std::int64_t cols, std::int64_t ld,
                                const std::vector<double>& reference) {
  if (rows < 0 || cols < 0 || ld < std::max<std::int64_t>(cols, 1) ||
      static_cast<std::size_t>(rows * cols) != reference.size())
    fail(ErrorCategory::usage, "relative_frobenius_error: a " + std::to_string(rows) + "x" +
                                   std::to_string(cols) + " result (ld " + std::to_string(ld) +
                                   ") against a reference of " +
                                   std::to_string(reference.size()) + " entries");
  return visit_storage(dtype, [&]<class T>(std::type_identity<T>) {
    return relative_frobenius_typed(static_cast<const T*>(got), rows, cols, ld, reference);
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

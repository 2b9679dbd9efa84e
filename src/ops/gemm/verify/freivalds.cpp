// Freivalds' check in floating point, for floating dtypes too large for the full check: for 4
// random sign vectors x, r = C x - (alpha A (B x) + beta C0 x) in double-double. Passing
// (t = tolerance(dtype, k), u = the unit roundoff of double): the randomised estimate
// |r| / |alpha A B x + beta C0 x| of the relative Frobenius error is at most t, and every row of
// r is within t (|alpha| |a_i| |B|_F + |beta| |c0_i|). The reference's own error, at most
// eta = 2 ((n + k + 4) u)^2 (|alpha| |A| |B| |x| + |beta| |C0| |x| + |C| |x|), is counted
// against the result: a check that cannot decide fails and says so. With integer inputs and
// results r is an integer, exact once eta < 1/2. The backward error max |r_i| / (|A| |B| |x|)_i
// is reported too: it tells a wrong result from a correctly rounded product of an
// ill-conditioned problem.
#include "gemmkit/verify.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "arith/splitmix.hpp"
#include "ops/gemm/verify/common.hpp"

namespace gemmkit::verify_detail {
namespace {

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

}  // namespace

VerifyResult verify_freivalds(const GemmProblem& p, const void* c_before, double tol, DType tol_dtype,
                              std::uint64_t seed, bool integer_data) {
  return visit_problem(p, [&]<class T, class CT>() {
    if constexpr (!std::is_integral_v<T>)
      return verify_freivalds<T, CT>(p, static_cast<const CT*>(c_before), tol, tol_dtype, seed, integer_data);
    else
      return VerifyResult{};
  });
}

}  // namespace gemmkit::verify_detail

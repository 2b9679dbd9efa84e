// The full check: every entry of C against a reference made a block of rows at a time. For
// integer dtypes every entry must equal the exact product (128-bit reference). For floating
// dtypes the reference is exact (128-bit integers) when every input is an integer, else
// double-double (about 106 bits, TwoProd/TwoSum); with t = tolerance(dtype, k) the relative
// Frobenius error |C - C_exact|_F / |C_exact|_F must be at most t, and every entry within
// 2 t (|alpha| |a_i| |b_j| + |beta| |c0_ij|) of the exact one (a_i row i of op(A), b_j column
// j of op(B)): the norm test alone would average a single wrong entry away. Also the public
// references (reference_gemm, reference_gemm_exact) and relative_frobenius_error.
#include "gemmkit/verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ops/gemm/verify/common.hpp"

namespace gemmkit::verify_detail {
namespace {

// References are made and compared this many entries at a time, so that the check needs a
// few MiB beside the problem whatever its size.
std::int64_t block_rows(const GemmProblem& p) {
  return std::max<std::int64_t>(1, (std::int64_t{1} << 18) / std::max<std::int64_t>(p.n, 1));
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

// Entries may each be off by this many tolerances times their Cauchy-Schwarz scale: the
// worst single product of tf32 or bf16 inputs is off by twice their unit roundoff.
constexpr double kEntrySlack = 2.0;

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

}  // namespace

VerifyResult verify_full_float(const GemmProblem& p, const void* c_before, double tol, DType tol_dtype,
                               bool integer_data) {
  return visit_problem(p, [&]<class T, class CT>() {
    if constexpr (!std::is_integral_v<T>)
      return verify_full_float<T, CT>(p, static_cast<const CT*>(c_before), tol, tol_dtype, integer_data);
    else
      return VerifyResult{};
  });
}

VerifyResult verify_full_integer(const GemmProblem& p, const void* c_before) {
  return visit_problem(p, [&]<class T, class CT>() {
    if constexpr (std::is_integral_v<T>)
      return verify_full_integer<T, CT>(p, static_cast<const CT*>(c_before));
    else
      return VerifyResult{};
  });
}

}  // namespace gemmkit::verify_detail

namespace gemmkit {

using namespace verify_detail;

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

}  // namespace gemmkit

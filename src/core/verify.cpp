// The verification oracle. It shares no code with the kernels it checks: its own loops,
// accumulation in double (or exactly in 128-bit integers), and no BLAS.
//
// What passing means, for floating dtypes with tolerance t = tolerance(dtype, k):
//  - full: the relative Frobenius error is at most t, and every entry is within
//    2 t (|alpha| |a_i| |b_j| + |beta| |c0_ij|) of the reference, where a_i is row i of op(A)
//    and b_j column j of op(B). The second test catches a single wrong entry that the norm of
//    a large matrix would average away; its scale bounds |alpha (A B)_ij + beta c0_ij| by
//    Cauchy-Schwarz, so cancellation in C does not make it fail.
//  - freivalds: for random sign vectors x, every row of C x - beta C0 x - alpha A (B x) is
//    within t (|alpha| |a_i| |B|_F + |beta| |c0_i|): what the same per-entry allowance adds up
//    to, in root mean square, once mixed by random signs. Again a scale of magnitudes, not of C.
#include "gemmkit/verify.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gemmkit/error.hpp"

namespace gemmkit {
namespace {

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

// Calls f(std::type_identity<T>{}) with the storage type of `dtype`.
template <class F>
decltype(auto) visit_storage(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return f(std::type_identity<double>{});
    case DType::f32:
    case DType::tf32: return f(std::type_identity<float>{});
    case DType::f16: return f(std::type_identity<Half>{});
    case DType::bf16: return f(std::type_identity<BFloat16>{});
    case DType::i8: return f(std::type_identity<std::int8_t>{});
    case DType::i32: return f(std::type_identity<std::int32_t>{});
    case DType::i64: return f(std::type_identity<std::int64_t>{});
  }
  fail(ErrorCategory::internal, "verify: unknown dtype");
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

std::string to_string(int128_t x) {
  if (x == 0) return "0";
  const bool negative = x < 0;
  std::string digits;
  while (x != 0) {
    const int digit = static_cast<int>(x % 10);  // in (-10, 10), sign of x
    digits.push_back(static_cast<char>('0' + (digit < 0 ? -digit : digit)));
    x /= 10;
  }
  if (negative) digits.push_back('-');
  return {digits.rbegin(), digits.rend()};
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

void check_problem(const GemmProblem& p, const void* c_before, const char* what) {
  validate(p);
  if (p.beta != 0 && p.m > 0 && p.n > 0 && c_before == nullptr)
    fail(ErrorCategory::usage, std::string(what) + ": beta is " + number(p.beta) +
                                   ", so C as it was before the GEMM is needed");
  checked_element_count(p.m, p.n, std::string(what) + " result");
}

// The rows of op(B) converted to Acc are shared by every row of C a panel at a time:
// about this many elements, so that a panel stays in L2 while all rows stream past it.
constexpr std::int64_t kPanelElements = std::int64_t{1} << 16;

std::int64_t panel_rows(const GemmProblem& p) {
  return std::clamp<std::int64_t>(kPanelElements / std::max<std::int64_t>(p.n, 1), 1, p.k);
}

// T: the inputs' storage; CT: C's (T, or float for f16/bf16 inputs with C in f32).
template <class T, class CT>
std::vector<double> reference_typed(const GemmProblem& p, const CT* c0) {
  const std::int64_t m = p.m, n = p.n, k = p.k;
  std::vector<double> out(static_cast<std::size_t>(m * n), 0.0);
  // alpha == 0: A and B are not read (the BLAS convention).
  if (p.alpha != 0 && k > 0 && n > 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    const std::int64_t kb = panel_rows(p);
    std::vector<double> panel(static_cast<std::size_t>(kb * n));
    for (std::int64_t p0 = 0; p0 < k; p0 += kb) {
      const std::int64_t rows = std::min(kb, k - p0);
      // (rows, n) panel of op(B), converted once.
#pragma omp parallel for schedule(static)
      for (std::int64_t q = 0; q < rows; ++q)
        for (std::int64_t j = 0; j < n; ++j) panel[q * n + j] = to_double(b(p0 + q, j));
      // Row i of C += op(A)(i, p0:p0+rows) x panel, in i-p-j order: unit stride innermost.
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < m; ++i) {
        double* __restrict acc = out.data() + i * n;
        for (std::int64_t q = 0; q < rows; ++q) {
          const double aiq = to_double(a(i, p0 + q));
          const double* __restrict brow = panel.data() + q * n;
          for (std::int64_t j = 0; j < n; ++j) acc[j] += aiq * brow[j];
        }
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double& x = out[i * n + j];
      x = p.alpha * x + (p.beta != 0 ? p.beta * to_double(c0[i * p.ldc + j]) : 0.0);
    }
  return out;
}

// An integer-valued alpha or beta as a 128-bit integer.
int128_t exact_scalar(double x, const char* name) {
  if (x != std::trunc(x) || !(std::fabs(x) < 0x1p126))
    fail(ErrorCategory::usage, std::string("exact reference: ") + name + " = " + number(x) +
                                   " is not an integer of at most 126 bits");
  return static_cast<int128_t>(x);
}

template <class T>
std::vector<int128_t> reference_exact_typed(const GemmProblem& p, const T* c0) {
  const std::int64_t m = p.m, n = p.n, k = p.k;
  const int128_t alpha = exact_scalar(p.alpha, "alpha"), beta = exact_scalar(p.beta, "beta");
  std::vector<int128_t> out(static_cast<std::size_t>(m * n), 0);
  // Column of the first 128-bit overflow in each row, -1 if none (checked after the loops:
  // nothing may be thrown out of an OpenMP region).
  std::vector<std::int64_t> overflow_at(static_cast<std::size_t>(m), -1);
  if (alpha != 0 && k > 0 && n > 0) {
    const OpView<T> a = op_view<T>(p.a, p.trans_a, p.lda), b = op_view<T>(p.b, p.trans_b, p.ldb);
    const std::int64_t kb = panel_rows(p);
    std::vector<std::int64_t> panel(static_cast<std::size_t>(kb * n));
    for (std::int64_t p0 = 0; p0 < k; p0 += kb) {
      const std::int64_t rows = std::min(kb, k - p0);
#pragma omp parallel for schedule(static)
      for (std::int64_t q = 0; q < rows; ++q)
        for (std::int64_t j = 0; j < n; ++j) panel[q * n + j] = b(p0 + q, j);
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < m; ++i) {
        int128_t* acc = out.data() + i * n;
        for (std::int64_t q = 0; q < rows && overflow_at[i] < 0; ++q) {
          const std::int64_t aiq = a(i, p0 + q);
          if (aiq == 0) continue;  // adjacency matrices are mostly zeros
          const std::int64_t* brow = panel.data() + q * n;
          // |aiq * brow[j]| <= 2^126: the product cannot overflow, the sum is checked.
          for (std::int64_t j = 0; j < n; ++j)
            if (__builtin_add_overflow(acc[j], int128_t{aiq} * brow[j], &acc[j])) {
              overflow_at[i] = j;
              break;
            }
        }
      }
    }
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n && overflow_at[i] < 0; ++j) {
      int128_t& x = out[i * n + j];
      int128_t scaled_c0 = 0;
      if (__builtin_mul_overflow(x, alpha, &x) ||
          (beta != 0 && __builtin_mul_overflow(int128_t{c0[i * p.ldc + j]}, beta, &scaled_c0)) ||
          __builtin_add_overflow(x, scaled_c0, &x))
        overflow_at[i] = j;
    }
  for (std::int64_t i = 0; i < m; ++i)
    if (overflow_at[i] >= 0)
      fail(ErrorCategory::numeric, "exact reference: entry " + entry_name(i, overflow_at[i]) +
                                       " overflows 128-bit integers");
  return out;
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

// Euclidean norms of the rows (by_rows) or columns of a stored (rows, cols) matrix.
template <class T>
std::vector<double> line_norms(const T* s, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                               bool by_rows) {
  std::vector<double> sq(static_cast<std::size_t>(by_rows ? rows : cols), 0.0);
  if (by_rows) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) sq[r] += to_double(s[r * ld + c]) * to_double(s[r * ld + c]);
  } else {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) sq[c] += to_double(s[r * ld + c]) * to_double(s[r * ld + c]);
  }
  for (double& x : sq) x = std::sqrt(x);
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

template <class T, class CT>
VerifyResult verify_full(const GemmProblem& p, const void* c_before, double tol,
                         DType tol_dtype) {
  VerifyResult result;
  result.method = VerifyMode::full;
  result.tolerance = tol;
  const std::vector<double> ref = reference_gemm(p, c_before);
  const auto* got = static_cast<const CT*>(p.c);
  const auto* c0 = static_cast<const CT*>(c_before);
  result.error = relative_frobenius_typed(got, p.m, p.n, p.ldc, ref);

  // The entry furthest outside its own bound (or the first non-finite mismatch).
  std::vector<double> a_norms(p.m, 0.0), b_norms(p.n, 0.0);  // A and B unread if alpha == 0
  if (p.alpha != 0) a_norms = op_a_row_norms<T>(p), b_norms = op_b_column_norms<T>(p);
  double worst = 0;
  std::int64_t wi = -1, wj = -1;
  for (std::int64_t i = 0; i < p.m && worst != std::numeric_limits<double>::infinity(); ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double g = to_double(got[i * p.ldc + j]), e = ref[i * p.n + j];
      const double c0_scale = p.beta != 0 ? std::fabs(p.beta * to_double(c0[i * p.ldc + j])) : 0;
      const double bound =
          kEntrySlack * tol * (std::fabs(p.alpha) * a_norms[i] * b_norms[j] + c0_scale);
      double excess = 0;
      if (!std::isfinite(g) || !std::isfinite(e)) {
        if (!(g == e || (std::isnan(g) && std::isnan(e))))
          excess = std::numeric_limits<double>::infinity();
      } else if (std::fabs(g - e) > bound) {
        excess = bound > 0 ? std::fabs(g - e) / bound : std::numeric_limits<double>::infinity();
      }
      if (excess > worst) {
        worst = excess;
        wi = i;
        wj = j;
        if (excess == std::numeric_limits<double>::infinity()) break;
      }
    }
  const bool frobenius_ok = result.error <= tol;  // false for NaN
  result.passed = frobenius_ok && wi < 0;
  if (!result.passed) {
    if (!frobenius_ok)
      result.detail = "relative Frobenius error " + number(result.error) + " exceeds the " +
                      std::string(dtype_name(tol_dtype)) + " tolerance " + number(tol);
    if (wi >= 0) {
      const double g = to_double(got[wi * p.ldc + wj]), e = ref[wi * p.n + wj];
      result.detail += std::string(result.detail.empty() ? "" : "; ") + "entry " +
                       entry_name(wi, wj) + " is " + number(g) + ", expected " + number(e);
      if (std::isfinite(worst))
        result.detail += " (off by " + number(std::fabs(g - e)) + ", " + number(worst) +
                         " times what rounding explains)";
    }
  }
  return result;
}

// Freivalds' check with this many random sign vectors x: a wrong entry (i, j) changes
// (C x)_i by its error times +-1, so a single wrong entry never escapes.
constexpr int kVectors = 4;

// (rows, kVectors) = S X for a stored (rows, cols) matrix S and X of (cols, kVectors).
template <class T>
std::vector<double> times(const T* s, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(rows * kVectors), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    double acc[kVectors] = {};
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = to_double(s[r * ld + c]);
      for (int t = 0; t < kVectors; ++t) acc[t] += v * x[c * kVectors + t];
    }
    std::copy(acc, acc + kVectors, y.begin() + r * kVectors);
  }
  return y;
}

// (cols, kVectors) = S^T X for X of (rows, kVectors). Each thread owns a range of columns and
// reads S row by row.
template <class T>
std::vector<double> times_transposed(const T* s, std::int64_t rows, std::int64_t cols,
                                     std::int64_t ld, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(cols * kVectors), 0.0);
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const std::int64_t c_begin = cols * t / threads, c_end = cols * (t + 1) / threads;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = c_begin; c < c_end; ++c) {
        const double v = to_double(s[r * ld + c]);
        for (int q = 0; q < kVectors; ++q) y[c * kVectors + q] += v * x[r * kVectors + q];
      }
  }
  return y;
}

// (rows of op(S), kVectors) = op(S) X for an operand stored (rows, cols).
template <class T>
std::vector<double> op_times(const void* s, bool transposed, std::int64_t rows, std::int64_t cols,
                             std::int64_t ld, const std::vector<double>& x) {
  const auto* typed = static_cast<const T*>(s);
  return transposed ? times_transposed(typed, rows, cols, ld, x) : times(typed, rows, cols, ld, x);
}

template <class T, class CT>
VerifyResult verify_freivalds(const GemmProblem& p, const void* c_before, double tol,
                              std::uint64_t seed) {
  VerifyResult result;
  result.method = VerifyMode::freivalds;
  result.tolerance = tol;
  const std::int64_t m = p.m, n = p.n;
  const auto* got = static_cast<const CT*>(p.c);
  const auto* c0 = static_cast<const CT*>(c_before);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      if (!std::isfinite(to_double(got[i * p.ldc + j]))) {
        result.passed = false;
        result.error = std::numeric_limits<double>::infinity();
        result.detail = "entry " + entry_name(i, j) + " is " + number(to_double(got[i * p.ldc + j]));
        return result;
      }

  // X: (n, kVectors) random signs, from a SplitMix64 stream of the seed.
  std::vector<double> x(static_cast<std::size_t>(n * kVectors));
  std::uint64_t state = seed;
  for (double& v : x) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    v = ((z ^ (z >> 31)) >> 63) ? 1.0 : -1.0;
  }
  const std::vector<double> cx = times(got, m, n, p.ldc, x);
  // Entry (i, j) may be off by tol * (|alpha| |a_i| |b_j| + |beta| |c0_ij|); with random signs
  // the errors of row i add up in (C x)_i to at most tol * (|alpha| |a_i| |B|_F + |beta| |c0_i|)
  // in root mean square: a scale made of magnitudes, so cancellation in C causes no false alarm.
  // A and B are not read when alpha == 0, nor C0 when beta == 0.
  std::vector<double> abx(static_cast<std::size_t>(m * kVectors), 0.0), a_norms(m, 0.0);
  double b_frobenius = 0;
  if (p.alpha != 0) {
    const std::vector<double> bx = op_times<T>(p.b, p.trans_b, p.b_rows(), p.b_cols(), p.ldb, x);
    abx = op_times<T>(p.a, p.trans_a, p.a_rows(), p.a_cols(), p.lda, bx);
    a_norms = op_a_row_norms<T>(p);
    for (double b_norm : op_b_column_norms<T>(p)) b_frobenius += b_norm * b_norm;
    b_frobenius = std::sqrt(b_frobenius);
  }
  std::vector<double> c0x, c0_norms(static_cast<std::size_t>(m), 0.0);
  if (p.beta != 0) {
    c0x = times(c0, m, n, p.ldc, x);
    c0_norms = line_norms(c0, m, n, p.ldc, true);
  }

  std::int64_t worst_row = -1;
  double worst = 0, worst_residual = 0, worst_scale = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    const double scale = std::fabs(p.alpha) * a_norms[i] * b_frobenius + std::fabs(p.beta) * c0_norms[i];
    for (int t = 0; t < kVectors; ++t) {
      const std::size_t at = static_cast<std::size_t>(i * kVectors + t);
      const double residual =
          cx[at] - (p.beta != 0 ? p.beta * c0x[at] : 0.0) - p.alpha * abx[at];
      double ratio = std::fabs(residual) / scale;
      if (scale == 0) ratio = residual == 0 ? 0.0 : std::numeric_limits<double>::infinity();
      if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
      if (ratio > worst) {
        worst = ratio;
        worst_row = i;
        worst_residual = residual;
        worst_scale = scale;
      }
    }
  }
  result.error = worst;
  result.passed = worst <= tol;
  if (!result.passed)
    result.detail = "row " + std::to_string(worst_row) + " of C x differs from alpha A (B x) + "
                    "beta C0 x by " + number(std::fabs(worst_residual)) + ", more than the " +
                    number(tol * worst_scale) + " that rounding explains" +
                    (std::isfinite(worst_residual) ? "" : " (the inputs hold NaN or Inf)");
  return result;
}

template <class T>
VerifyResult verify_exact(const GemmProblem& p, const void* c_before) {
  VerifyResult result;
  result.method = VerifyMode::full;
  std::vector<int128_t> exact;
  try {
    exact = reference_gemm_exact(p, c_before);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::numeric) throw;
    result.passed = false;
    result.error = std::numeric_limits<double>::infinity();
    result.detail = std::string("numeric overflow: ") + e.what();
    return result;
  }
  const std::int64_t m = p.m, n = p.n;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const int128_t x = exact[i * n + j];
      if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
        result.passed = false;
        result.error = std::numeric_limits<double>::infinity();
        result.detail = "numeric overflow: the exact result at " + entry_name(i, j) + " is " +
                        to_string(x) + ", which does not fit " + std::string(dtype_name(p.dtype));
        return result;
      }
    }
  const auto* got = static_cast<const T*>(p.c);
  Norm2 diff, ref;
  std::int64_t mismatches = 0, fi = -1, fj = -1;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const int128_t g = got[i * p.ldc + j], x = exact[i * n + j];
      diff.add(static_cast<double>(g - x));
      ref.add(static_cast<double>(x));
      if (g != x && mismatches++ == 0) {
        fi = i;
        fj = j;
      }
    }
  result.error = ref.value() > 0 ? diff.value() / ref.value() : diff.value();
  result.passed = mismatches == 0;
  if (!result.passed)
    result.detail = "entry " + entry_name(fi, fj) + " is " + to_string(got[fi * p.ldc + fj]) +
                    ", expected " + to_string(exact[fi * n + fj]) + " (" +
                    std::to_string(mismatches) + " of " + std::to_string(m * n) +
                    " entries differ)";
  return result;
}

}  // namespace

VerifyMode parse_verify_mode(std::string_view text) {
  if (text == "none") return VerifyMode::none;
  if (text == "auto") return VerifyMode::automatic;
  if (text == "full") return VerifyMode::full;
  if (text == "freivalds") return VerifyMode::freivalds;
  fail(ErrorCategory::usage, "unknown verification mode '" + std::string(text) +
                                 "' (expected none, auto, full or freivalds)");
}

std::string_view verify_mode_name(VerifyMode mode) {
  switch (mode) {
    case VerifyMode::none: return "none";
    case VerifyMode::automatic: return "auto";
    case VerifyMode::full: return "full";
    case VerifyMode::freivalds: return "freivalds";
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
  return visit_storage(problem.dtype, [&]<class T>(std::type_identity<T>) {
    if (problem.c_dtype() != problem.dtype)  // f16/bf16 inputs, C in f32 (validated)
      return reference_typed<T>(problem, static_cast<const float*>(c_before));
    return reference_typed<T>(problem, static_cast<const T*>(c_before));
  });
}

std::vector<int128_t> reference_gemm_exact(const GemmProblem& problem, const void* c_before) {
  check_problem(problem, c_before, "exact reference GEMM");
  return visit_storage(problem.dtype, [&]<class T>(std::type_identity<T>) -> std::vector<int128_t> {
    if constexpr (std::is_integral_v<T>) {
      return reference_exact_typed<T>(problem, static_cast<const T*>(c_before));
    } else {
      fail(ErrorCategory::usage, "the exact reference takes integer dtypes, not " +
                                     std::string(dtype_name(problem.dtype)));
    }
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
  if (mode == VerifyMode::none) return {};
  check_problem(problem, c_before, "verify");
  return visit_storage(problem.dtype, [&]<class T>(std::type_identity<T>) -> VerifyResult {
    if constexpr (std::is_integral_v<T>) {
      return verify_exact<T>(problem, c_before);
    } else {
      const DType tol_dtype = tolerance_dtype(problem.dtype, accuracy);
      const double tol = tolerance(tol_dtype, problem.k);
      const double work = double(problem.m) * double(problem.n) * double(problem.k);
      const bool full =
          mode == VerifyMode::full || (mode == VerifyMode::automatic && work <= kFullVerifyLimit);
      if (problem.c_dtype() != problem.dtype)  // f16/bf16 inputs, C in f32 (validated)
        return full ? verify_full<T, float>(problem, c_before, tol, tol_dtype)
                    : verify_freivalds<T, float>(problem, c_before, tol, seed);
      return full ? verify_full<T, T>(problem, c_before, tol, tol_dtype)
                  : verify_freivalds<T, T>(problem, c_before, tol, seed);
    }
  });
}

}  // namespace gemmkit

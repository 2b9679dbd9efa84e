// Deterministic exercise matrices (generate.hpp). Integer kinds are computed exactly in
// 128-bit integers and stored only where the dtype holds the value exactly.
#include "gemmkit/generate.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "arith/int128.hpp"
#include "runtime/host_matrix_type.hpp"

namespace gemmkit {
namespace {

const std::vector<MatrixKindInfo> kKinds = {
    {MatrixKind::random, "random", "seeded random (--dist, --seed)", false},
    {MatrixKind::pascal, "pascal", "binom(i, j): lower triangular Pascal matrix", true},
    {MatrixKind::pascal_inverse, "pascal-inverse", "(-1)^(i-j) binom(i, j): the inverse of pascal", true},
    {MatrixKind::pascal_upper, "pascal-upper", "binom(j, i): the transpose of pascal", true},
    {MatrixKind::pascal_symmetric, "pascal-symmetric", "binom(i+j, i) = pascal x pascal-upper", true},
    {MatrixKind::sin_rows, "sin", "sin(i): each row constant", false},
    {MatrixKind::cos_cols, "cos", "cos(j): each column constant", false},
    {MatrixKind::identity, "identity", "1 if i = j, else 0", true},
    {MatrixKind::ones, "ones", "1", true},
    {MatrixKind::index, "index", "i * cols + j: the entry's row-major offset", true},
};

// Whether T holds v exactly; if so, stores it.
template <class T>
bool store_exact(T& out, i128 v) {
  if constexpr (std::is_integral_v<T>) {
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
    out = static_cast<T>(v);
    return true;
  } else {
    // Through double: a value T holds exactly is exact in double too, so this never
    // double-rounds a value that would be stored.
    const double d = static_cast<double>(v);
    if (!(std::fabs(d) < 0x1p126) || static_cast<i128>(d) != v) return false;
    const T t = static_cast<T>(d);
    if (static_cast<double>(t) != d) return false;
    out = t;
    return true;
  }
}

// tf32 keeps 10 of f32's 23 mantissa bits: the other 13 must be zero.
bool fits_tf32(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return (bits & 0x1fffu) == 0;
}

struct Misfit {
  std::int64_t i = -1, j = -1;
  i128 value = 0;
  bool beyond_128 = false;  // the exact value itself passed 2^127
};

// Fills m with an exact kind; returns the first entry (row-major) it cannot hold exactly.
template <class T>
std::optional<Misfit> fill_exact(MatrixKind kind, MatrixView<T> m, bool tf32) {
  const std::int64_t rows = m.rows(), cols = m.cols();
  constexpr i128 kOverflow = -1;  // marks a Pascal value past 2^127 (all others are >= 0)
  auto add = [](i128 a, i128 b) -> i128 {
    i128 s;
    if (a == kOverflow || b == kOverflow || __builtin_add_overflow(a, b, &s)) return kOverflow;
    return s;
  };
  std::vector<i128> prev(static_cast<std::size_t>(cols), 0), cur(static_cast<std::size_t>(cols), 0);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto ju = static_cast<std::size_t>(j);
      i128 v = 0;
      switch (kind) {
        case MatrixKind::pascal:  // binom(i, j) = binom(i-1, j-1) + binom(i-1, j)
        case MatrixKind::pascal_inverse:
          v = i == 0 ? (j == 0) : add(j > 0 ? prev[ju - 1] : 0, prev[ju]);
          break;
        case MatrixKind::pascal_upper:  // binom(j, i) = binom(j-1, i-1) + binom(j-1, i)
          v = i == 0 ? 1 : j == 0 ? 0 : add(prev[ju - 1], cur[ju - 1]);
          break;
        case MatrixKind::pascal_symmetric:  // binom(i+j, i) = S(i-1, j) + S(i, j-1)
          v = i == 0 || j == 0 ? 1 : add(prev[ju], cur[ju - 1]);
          break;
        case MatrixKind::identity: v = i == j; break;
        case MatrixKind::ones: v = 1; break;
        case MatrixKind::index: v = static_cast<i128>(i) * cols + j; break;
        default: fail(ErrorCategory::internal, "fill_exact: not an exact kind");
      }
      cur[ju] = v;
      if (v == kOverflow) return Misfit{i, j, 0, true};
      const i128 stored = kind == MatrixKind::pascal_inverse && (i - j) % 2 != 0 ? -v : v;
      bool ok = store_exact(m(i, j), stored);
      if constexpr (std::is_same_v<T, float>) ok = ok && (!tf32 || fits_tf32(m(i, j)));
      if (!ok) return Misfit{i, j, stored, false};
    }
    std::swap(prev, cur);
  }
  return std::nullopt;
}

// The largest n for which the n x n matrix of `kind` fits T exactly (0 if none is needed).
template <class T>
std::int64_t largest_square(MatrixKind kind, bool tf32) {
  if (kind == MatrixKind::identity || kind == MatrixKind::ones) return 0;
  if (kind == MatrixKind::index) {
    // Entries are 0 .. n^2 - 1, consecutive: the first misfit is the first integer T
    // cannot hold, 2^p + 1 for a p-bit significand.
    double top;
    if constexpr (std::is_integral_v<T>) top = static_cast<double>(std::numeric_limits<T>::max());
    else if constexpr (std::is_same_v<T, Half>) top = 0x1p11;
    else if constexpr (std::is_same_v<T, BFloat16>) top = 0x1p8;
    else top = std::ldexp(1.0, tf32 ? 11 : std::numeric_limits<T>::digits);
    auto n = static_cast<std::int64_t>(std::sqrt(top + 1.0));
    while (static_cast<double>(n) * n - 1 > top) --n;
    while (static_cast<double>(n + 1) * (n + 1) - 1 <= top) ++n;
    return n;
  }
  // Pascal kinds: every dtype fails before n = 130 (binom(128, 64) < 2^127).
  std::int64_t n = 1;
  for (; n < 130; ++n) {
    Matrix<T> scratch(n + 1, n + 1);
    if (fill_exact(kind, scratch.view(), tf32)) break;
  }
  return n;
}

template <class T>
AnyMatrix make_exact(MatrixKind kind, std::int64_t rows, std::int64_t cols, DType dtype) {
  Matrix<T> m(rows, cols);
  const bool tf32 = dtype == DType::tf32;
  const std::optional<Misfit> misfit = fill_exact(kind, m.view(), tf32);
  if (!misfit) return m;
  const std::string name(matrix_kind_info(kind).name), dt(dtype_name(dtype));
  std::string what = "entry (" + std::to_string(misfit->i) + ", " + std::to_string(misfit->j) + ") is ";
  what += misfit->beyond_128 ? "beyond 2^127" : i128_text(misfit->value);
  what += ", which " + dt + " cannot hold exactly";
  const std::int64_t n = largest_square<T>(kind, tf32);
  fail(ErrorCategory::usage, "gen: " + name + " " + std::to_string(rows) + " x " + std::to_string(cols) +
                                   " does not fit " + dt + " exactly: " + what +
                                   " (0-based; the largest square " + name + " exact in " + dt + " is " +
                                   std::to_string(n) + " x " + std::to_string(n) + ")");
}

template <class T>
AnyMatrix make_trig(MatrixKind kind, std::int64_t rows, std::int64_t cols) {
  Matrix<T> m(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      m(i, j) = static_cast<T>(kind == MatrixKind::sin_rows ? std::sin(static_cast<double>(i))
                                                            : std::cos(static_cast<double>(j)));
  return m;
}

}  // namespace

const std::vector<MatrixKindInfo>& matrix_kinds() { return kKinds; }

const MatrixKindInfo& matrix_kind_info(MatrixKind kind) {
  for (const MatrixKindInfo& k : kKinds)
    if (k.kind == kind) return k;
  fail(ErrorCategory::internal, "matrix_kind_info: unknown kind");
}

std::optional<MatrixKind> parse_matrix_kind(std::string_view name) {
  for (const MatrixKindInfo& k : kKinds)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

AnyMatrix generate_matrix(MatrixKind kind, std::int64_t rows, std::int64_t cols, DType dtype) {
  if (kind == MatrixKind::random)
    fail(ErrorCategory::usage, "generate_matrix: random matrices come from random_matrix");
  if (rows < 1 || cols < 1)
    fail(ErrorCategory::usage, "generate_matrix: the shape must be at least 1 x 1, not " +
                                   std::to_string(rows) + " x " + std::to_string(cols));
  checked_element_count(rows, cols, "generate_matrix");
  const bool trig = kind == MatrixKind::sin_rows || kind == MatrixKind::cos_cols;
  if (trig && is_integer(dtype))
    fail(ErrorCategory::usage, "gen: " + std::string(matrix_kind_info(kind).name) +
                                   " has fractional entries: choose a floating dtype, not " +
                                   std::string(dtype_name(dtype)));
  auto make = [&]<class T>(std::type_identity<T>) -> AnyMatrix {
    if (trig) {
      if constexpr (std::is_integral_v<T>) return AnyMatrix{};  // refused above
      else return make_trig<T>(kind, rows, cols);
    }
    return make_exact<T>(kind, rows, cols, dtype);
  };
  return detail::make_host_matrix(dtype, make);
}

}  // namespace gemmkit

#include "gemmkit/matrix.hpp"

#include "gemmkit/memory.hpp"
#include "runtime/host_matrix_type.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>

namespace gemmkit {

std::int64_t checked_element_count(std::int64_t rows, std::int64_t cols, const std::string& what) {
  if (rows < 0 || cols < 0)
    fail(ErrorCategory::input, what + ": negative size " + std::to_string(rows) + "x" +
                                   std::to_string(cols));
  std::int64_t count = 0;
  if (__builtin_mul_overflow(rows, cols, &count) ||
      count > std::numeric_limits<std::int64_t>::max() / 16)
    fail(ErrorCategory::input, what + ": " + std::to_string(rows) + "x" + std::to_string(cols) +
                                   " elements overflow the addressable size");
  return count;
}

template <class T>
Matrix<T>::Matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld)
    : rows_(rows), cols_(cols), ld_(ld < 0 ? std::max<std::int64_t>(cols, 1) : ld) {
  if (ld_ < cols_ || ld_ < 1)
    fail(ErrorCategory::usage, "matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                                   ": leading dimension " + std::to_string(ld) +
                                   " is smaller than the width");
  // An empty matrix stores nothing, however many rows it claims.
  const std::int64_t count = rows == 0 || cols == 0 ? 0 : checked_element_count(rows, ld_, "matrix");
  const auto what = [&] {
    return "a " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
           std::string(dtype_name(dtype_of<T>)) + " matrix";
  };
  const auto bytes = static_cast<std::uint64_t>(count) * sizeof(T);
  // Large matrices are checked against what the machine can give before asking for them, so
  // the error says how much is available (and sanitizers, which abort on huge requests
  // instead of throwing, see none).
  constexpr std::uint64_t kCheckedFrom = std::uint64_t{1} << 30;
  if (bytes >= kCheckedFrom) require_host_memory(bytes, what());
  try {
    storage_.assign(static_cast<std::size_t>(count), T{});
  } catch (const std::bad_alloc&) {
    require_host_memory(bytes, what());  // says how much is available when that is the reason
    fail(ErrorCategory::out_of_memory,
         "cannot allocate " + what() + " (" + std::to_string(bytes) + " bytes) in host memory");
  }
}

template class Matrix<double>;
template class Matrix<float>;
template class Matrix<std::int32_t>;
template class Matrix<std::int64_t>;
template class Matrix<Half>;
template class Matrix<BFloat16>;

DType dtype_of_any(const AnyMatrix& m) {
  return std::visit([](const auto& x) { return x.dtype(); }, m);
}
std::int64_t rows_of(const AnyMatrix& m) {
  return std::visit([](const auto& x) { return x.rows(); }, m);
}
std::int64_t cols_of(const AnyMatrix& m) {
  return std::visit([](const auto& x) { return x.cols(); }, m);
}

namespace {

// A value as its own type writes it: the shortest text that reads back exactly.
template <class T>
std::string value_text(T x) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(x);
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;  // halves: exact
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, static_cast<F>(x));
    return std::string(buffer, result.ptr);
  }
}

std::string position(std::int64_t i, std::int64_t j) {
  return "row " + std::to_string(i + 1) + ", column " + std::to_string(j + 1);
}

// Converts one value, failing for values the target integer type cannot hold exactly.
template <class To, class From>
To convert_value(From x, std::int64_t i, std::int64_t j) {
  if constexpr (is_half_v<From> && std::is_integral_v<To>) {
    const double wide = static_cast<double>(x);  // exact
    if (!(std::isfinite(wide) && wide == std::trunc(wide)))
      fail(ErrorCategory::numeric, position(i, j) + ": " + value_text(x) + " is not an integer, " +
                                       "so not an " + std::string(dtype_name(dtype_of<To>)) +
                                       " value");
    return convert_value<To>(wide, i, j);
  } else if constexpr (is_half_v<From>) {
    return static_cast<To>(static_cast<double>(x));  // exact
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<double>(x));  // one rounding, whatever the source
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(std::isfinite(x) && x == std::trunc(x)))
      fail(ErrorCategory::numeric, position(i, j) + ": " + value_text(x) + " is not an integer, " +
                                       "so not an " + std::string(dtype_name(dtype_of<To>)) +
                                       " value");
    // 2^63 is exactly representable; anything at or past it does not fit an int64.
    if (!(x >= static_cast<From>(std::numeric_limits<To>::min()) &&
          x < -static_cast<From>(std::numeric_limits<To>::min())))
      fail(ErrorCategory::numeric, position(i, j) + ": " + value_text(x) + " does not fit " +
                                       std::string(dtype_name(dtype_of<To>)));
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    if (x < std::numeric_limits<To>::min() || x > std::numeric_limits<To>::max())
      fail(ErrorCategory::numeric, position(i, j) + ": " + value_text(x) + " does not fit " +
                                       std::string(dtype_name(dtype_of<To>)));
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

// Whether the floating-point value `y` is exactly the integer `x`.
bool same_integer(std::int64_t x, double y) {
  return y >= -9223372036854775808.0 && y < 9223372036854775808.0 &&
         static_cast<std::int64_t>(y) == x;
}

template <class To, class From>
Matrix<To> convert_reporting(MatrixView<const From> from, ConversionReport* report) {
  Matrix<To> to(from.rows(), from.cols());
  if (to.size() == 0) return to;  // no loop over the rows of an empty (2^63 - 1) x 0 matrix
  for (std::int64_t i = 0; i < from.rows(); ++i)
    for (std::int64_t j = 0; j < from.cols(); ++j) {
      const From x = from(i, j);
      const To y = convert_value<To>(x, i, j);
      to(i, j) = y;
      if constexpr (!std::is_integral_v<To>) {
        if (report && std::isinf(static_cast<double>(y)) && std::isfinite(static_cast<double>(x)) &&
            report->overflowed++ == 0) {
          report->overflow_row = i;
          report->overflow_col = j;
          report->overflow_from = value_text(x);
        }
      }
      if constexpr (std::is_integral_v<From> && !std::is_integral_v<To>) {
        // Overflows to infinity (f16) are counted above, not as rounded.
        const auto wide = static_cast<double>(y);
        if (report && std::isfinite(wide) && !same_integer(x, wide) && report->rounded++ == 0) {
          report->row = i;
          report->col = j;
          report->from = value_text(x);
          report->to = value_text(y);
        }
      }
    }
  return to;
}

}  // namespace

template <class To, class From>
Matrix<To> convert_matrix(MatrixView<const From> from) {
  return convert_reporting<To, From>(from, nullptr);
}

// Every pair of host element types, To x From (the header promises them all).
template Matrix<double> convert_matrix<double, double>(MatrixView<const double>);
template Matrix<double> convert_matrix<double, float>(MatrixView<const float>);
template Matrix<double> convert_matrix<double, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<double> convert_matrix<double, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<double> convert_matrix<double, Half>(MatrixView<const Half>);
template Matrix<double> convert_matrix<double, BFloat16>(MatrixView<const BFloat16>);
template Matrix<float> convert_matrix<float, double>(MatrixView<const double>);
template Matrix<float> convert_matrix<float, float>(MatrixView<const float>);
template Matrix<float> convert_matrix<float, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<float> convert_matrix<float, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<float> convert_matrix<float, Half>(MatrixView<const Half>);
template Matrix<float> convert_matrix<float, BFloat16>(MatrixView<const BFloat16>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, double>(MatrixView<const double>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, float>(MatrixView<const float>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, Half>(MatrixView<const Half>);
template Matrix<std::int32_t> convert_matrix<std::int32_t, BFloat16>(MatrixView<const BFloat16>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, double>(MatrixView<const double>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, float>(MatrixView<const float>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, Half>(MatrixView<const Half>);
template Matrix<std::int64_t> convert_matrix<std::int64_t, BFloat16>(MatrixView<const BFloat16>);
template Matrix<Half> convert_matrix<Half, double>(MatrixView<const double>);
template Matrix<Half> convert_matrix<Half, float>(MatrixView<const float>);
template Matrix<Half> convert_matrix<Half, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<Half> convert_matrix<Half, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<Half> convert_matrix<Half, Half>(MatrixView<const Half>);
template Matrix<Half> convert_matrix<Half, BFloat16>(MatrixView<const BFloat16>);
template Matrix<BFloat16> convert_matrix<BFloat16, double>(MatrixView<const double>);
template Matrix<BFloat16> convert_matrix<BFloat16, float>(MatrixView<const float>);
template Matrix<BFloat16> convert_matrix<BFloat16, std::int32_t>(MatrixView<const std::int32_t>);
template Matrix<BFloat16> convert_matrix<BFloat16, std::int64_t>(MatrixView<const std::int64_t>);
template Matrix<BFloat16> convert_matrix<BFloat16, Half>(MatrixView<const Half>);
template Matrix<BFloat16> convert_matrix<BFloat16, BFloat16>(MatrixView<const BFloat16>);

AnyMatrix convert(const AnyMatrix& m, DType to, ConversionReport* report) {
  return std::visit(
      [to, report](const auto& x) -> AnyMatrix {
        using From = typename std::decay_t<decltype(x)>::value_type;
        return detail::make_host_matrix(to, [&]<class To>(std::type_identity<To>) -> AnyMatrix {
          return convert_reporting<To, From>(x.view(), report);
        });
      },
      m);
}

DType common_dtype(DType a, DType b) {
  if (a == b) return a;
  const bool a_float = !is_integer(a), b_float = !is_integer(b);
  if (a_float && b_float) {
    // The wider one; two different formats of one width (f16, bf16; f32, tf32) meet in f32.
    if (dtype_size(a) != dtype_size(b)) return dtype_size(a) > dtype_size(b) ? a : b;
    return dtype_size(a) == 8 ? DType::f64 : DType::f32;
  }
  if (!a_float && !b_float) return DType::i64;
  // Mixed: f64 holds i32 exactly; i64 needs f64 and f32 is too narrow for either.
  return DType::f64;
}

}  // namespace gemmkit

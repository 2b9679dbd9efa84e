#include "gemmkit/random.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <type_traits>

#include "arith/splitmix.hpp"
#include "runtime/host_matrix_type.hpp"

namespace gemmkit {
namespace {

// splitmix64 as a counter-based generator, so entry (i, j) depends only on the seed and its
// index. Generation is then parallel and the same for any thread count.
std::uint64_t draw(std::uint64_t seed, std::uint64_t index, std::uint64_t stream) {
  return splitmix64(splitmix64(seed) ^ splitmix64(2 * index + stream));
}

// Uniform in [0, 1) with 53 random bits.
double unit(std::uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

double parse_number(std::string_view text, std::string_view whole) {
  double x = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(x))
    fail(ErrorCategory::usage, "distribution '" + std::string(whole) + "': '" +
                                   std::string(text) + "' is not a number");
  return x;
}

}  // namespace

Distribution Distribution::parse(std::string_view text) {
  Distribution d;
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (kind == "uniform") {
    d.kind = Kind::uniform;
  } else if (kind == "normal") {
    d.kind = Kind::normal;
    d.lo = 0.0;  // mean
    d.hi = 1.0;  // standard deviation
  } else if (kind == "ints") {
    d.kind = Kind::ints;
    if (colon == std::string_view::npos)
      fail(ErrorCategory::usage, "distribution 'ints' needs bounds, e.g. ints:-9:9");
  } else {
    fail(ErrorCategory::usage, "unknown distribution '" + std::string(text) +
                                   "' (expected uniform, uniform:LO:HI, normal, "
                                   "normal:MEAN:STD or ints:LO:HI)");
  }
  if (colon != std::string_view::npos) {
    const std::string_view rest = text.substr(colon + 1);
    const auto colon2 = rest.find(':');
    if (colon2 == std::string_view::npos)
      fail(ErrorCategory::usage, "distribution '" + std::string(text) + "' needs two parameters");
    d.lo = parse_number(rest.substr(0, colon2), text);
    d.hi = parse_number(rest.substr(colon2 + 1), text);
  }
  if (d.kind == Kind::ints &&
      (d.lo != std::trunc(d.lo) || d.hi != std::trunc(d.hi) || std::fabs(d.lo) > 0x1p62 ||
       std::fabs(d.hi) > 0x1p62))
    fail(ErrorCategory::usage, "distribution '" + std::string(text) +
                                   "': bounds must be integers of magnitude below 2^62");
  if ((d.kind == Kind::normal && !(d.hi > 0)) || (d.kind != Kind::normal && !(d.lo <= d.hi)))
    fail(ErrorCategory::usage, "distribution '" + std::string(text) + "' has an empty range");
  return d;
}

std::string Distribution::to_string() const {
  auto num = [](double x) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, end);
  };
  switch (kind) {
    case Kind::uniform: return "uniform:" + num(lo) + ":" + num(hi);
    case Kind::normal: return "normal:" + num(lo) + ":" + num(hi);
    case Kind::ints: return "ints:" + num(lo) + ":" + num(hi);
  }
  return "?";
}

template <class T>
void fill_random(MatrixView<T> m, const Distribution& d, std::uint64_t seed) {
  if (std::is_integral_v<T> && d.kind != Distribution::Kind::ints)
    fail(ErrorCategory::usage, "an integer matrix (" + std::string(dtype_name(dtype_of<T>)) +
                                   ") needs an integer distribution, e.g. --dist ints:-9:9");
  const std::int64_t rows = m.rows(), cols = m.cols();
  const auto lo_int = static_cast<std::int64_t>(d.lo);
  const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(d.hi) - lo_int) + 1;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto index = static_cast<std::uint64_t>(i * cols + j);
      double x = 0;
      switch (d.kind) {
        case Distribution::Kind::uniform:
          x = d.lo + (d.hi - d.lo) * unit(draw(seed, index, 0));
          break;
        case Distribution::Kind::normal: {
          // Box-Muller; 1 - u keeps the logarithm finite.
          const double u1 = 1.0 - unit(draw(seed, index, 0)), u2 = unit(draw(seed, index, 1));
          x = d.lo + d.hi * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
          break;
        }
        case Distribution::Kind::ints: {
          // The modulo bias is below span / 2^64: irrelevant for test data.
          const std::int64_t v = lo_int + static_cast<std::int64_t>(draw(seed, index, 0) % span);
          if constexpr (is_half_v<T>) m(i, j) = T(static_cast<double>(v));
          else m(i, j) = static_cast<T>(v);
          continue;
        }
      }
      if constexpr (!std::is_integral_v<T>) m(i, j) = static_cast<T>(x);  // (checked above)
    }
  }
}

template void fill_random<double>(MatrixView<double>, const Distribution&, std::uint64_t);
template void fill_random<float>(MatrixView<float>, const Distribution&, std::uint64_t);
template void fill_random<std::int32_t>(MatrixView<std::int32_t>, const Distribution&, std::uint64_t);
template void fill_random<std::int64_t>(MatrixView<std::int64_t>, const Distribution&, std::uint64_t);
template void fill_random<Half>(MatrixView<Half>, const Distribution&, std::uint64_t);
template void fill_random<BFloat16>(MatrixView<BFloat16>, const Distribution&, std::uint64_t);

namespace {

double largest_finite(DType dtype) {
  switch (dtype) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
    case DType::f32:
    case DType::tf32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// The largest magnitude a distribution can draw: a bound of its range, or for the normal the
// mean plus the deviations Box-Muller reaches from 53-bit uniforms (sqrt(-2 ln 2^-53) < 8.58).
double largest_draw(const Distribution& d) {
  if (d.kind == Distribution::Kind::normal) return std::fabs(d.lo) + 8.58 * d.hi;
  return std::max(std::fabs(d.lo), std::fabs(d.hi));
}

// Draws a floating dtype cannot hold would silently become infinite: refuse the range instead.
void check_fits_float(const Distribution& d, DType dtype) {
  auto num = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return std::string(buf);
  };
  const double reach = largest_draw(d), limit = largest_finite(dtype);
  const bool normal = d.kind == Distribution::Kind::normal;
  if (!(reach <= limit))
    fail(ErrorCategory::usage, "distribution " + d.to_string() + " reaches " + num(reach) +
                                   (normal ? " (mean + 8.58 deviations)" : "") +
                                   ", beyond the largest finite " + std::string(dtype_name(dtype)) +
                                   " " + num(limit) + ": those values would become infinite");
  if (d.kind == Distribution::Kind::uniform && !std::isfinite(d.hi - d.lo))
    fail(ErrorCategory::usage, "distribution " + d.to_string() +
                                   ": the width of the range overflows a double");
}

}  // namespace

AnyMatrix random_matrix(std::int64_t rows, std::int64_t cols, DType dtype,
                        const Distribution& distribution, std::uint64_t seed) {
  auto make = [&]<class T>(std::type_identity<T>) -> AnyMatrix {
    if constexpr (std::is_integral_v<T>) {
      // The whole range, the minimum included (ints:-2147483648:2147483647 for i32).
      if (distribution.lo < double(std::numeric_limits<T>::min()) ||
          distribution.hi > double(std::numeric_limits<T>::max()))
        fail(ErrorCategory::usage, "distribution " + distribution.to_string() + " does not fit " +
                                       std::string(dtype_name(dtype)));
    } else {
      check_fits_float(distribution, dtype);
    }
    Matrix<T> m(rows, cols);
    fill_random(m.view(), distribution, seed);
    return m;
  };
  return detail::make_host_matrix(dtype, make);
}

}  // namespace gemmkit

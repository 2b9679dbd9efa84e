#include "gemmkit/half.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace gemmkit {
namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

}  // namespace

std::uint16_t to_bfloat16_bits(float x) {
  const std::uint32_t b = bits_of(x);
  if (std::isnan(x)) return std::uint16_t((b >> 16) | 0x40);  // keep it a (quiet) NaN
  // Round the low 16 bits away, to nearest, ties to the even upper half.
  return std::uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

float bfloat16_bits_to_float(std::uint16_t bits) { return float_of(std::uint32_t{bits} << 16); }

std::uint16_t to_half_bits(float x) {
  const std::uint32_t b = bits_of(x);
  const std::uint16_t sign = std::uint16_t((b >> 16) & 0x8000);
  if (std::isnan(x)) return sign | 0x7e00;
  const float a = std::fabs(x);
  if (a >= 65520.0f) return sign | 0x7c00;  // rounds past the largest half, 65504: infinity
  if (a < 0x1p-14f) {
    // Subnormal (or zero): a multiple of 2^-24; nearbyint rounds ties to even.
    return sign | std::uint16_t(std::nearbyint(a * 0x1p24f));
  }
  // Normal: keep 10 of the 23 mantissa bits, rounding the other 13 to nearest even; a
  // carry out of the mantissa correctly bumps the exponent.
  const std::uint32_t exponent = ((b >> 23) & 0xff) - 127 + 15;
  std::uint32_t h = (exponent << 10) | ((b >> 13) & 0x3ff);
  const std::uint32_t rest = b & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return sign | std::uint16_t(h);
}

namespace {

// x rounded to an f32 toward zero, with the last bit set when that dropped anything: "round
// to odd". Rounding this to 16 bits gives what rounding x directly would, because the f32
// keeps more than two extra bits and a dropped remainder can no longer look like a tie.
float round_to_odd(double x) {
  const float nearest = static_cast<float>(x);
  if (!std::isfinite(x) || static_cast<double>(nearest) == x) return nearest;
  std::uint32_t b = bits_of(nearest);
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(x)) --b;  // toward zero
  return float_of(b | 1u);
}

}  // namespace

std::uint16_t to_half_bits(double x) { return to_half_bits(round_to_odd(x)); }
std::uint16_t to_bfloat16_bits(double x) { return to_bfloat16_bits(round_to_odd(x)); }

float half_bits_to_float(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(float(mantissa), -24);
  else if (exponent == 0x1f)
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else magnitude = std::ldexp(float(0x400 | mantissa), exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

}  // namespace gemmkit

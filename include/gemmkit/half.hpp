// The 16-bit float formats: f16 (IEEE binary16) and bf16 (the top half of an f32), as raw
// bits and as the host storage types Half and BFloat16 that Matrix<T> holds. Conversions
// round to nearest, ties to even, as the GPU's cvt.rn does; from double they round once
// (through an f32 rounded to odd, which cannot create a false tie).
#pragma once

#include <cstdint>
#include <type_traits>

namespace gemmkit {

std::uint16_t to_half_bits(float x);      // overflow gives +-inf; NaN stays NaN
std::uint16_t to_bfloat16_bits(float x);  // NaN stays NaN
std::uint16_t to_half_bits(double x);
std::uint16_t to_bfloat16_bits(double x);
float half_bits_to_float(std::uint16_t bits);
float bfloat16_bits_to_float(std::uint16_t bits);

// One stored f16. Arithmetic happens after widening: float(h) is exact.
struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  explicit Half(float x) : bits(to_half_bits(x)) {}
  explicit Half(double x) : bits(to_half_bits(x)) {}
  explicit operator float() const { return half_bits_to_float(bits); }
  explicit operator double() const { return half_bits_to_float(bits); }
  static Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

// One stored bf16.
struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float x) : bits(to_bfloat16_bits(x)) {}
  explicit BFloat16(double x) : bits(to_bfloat16_bits(x)) {}
  explicit operator float() const { return bfloat16_bits_to_float(bits); }
  explicit operator double() const { return bfloat16_bits_to_float(bits); }
  static BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "stored as two bytes, as in files");

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// Float storage of any width: double, float, Half, BFloat16.
template <class T>
inline constexpr bool is_float_storage_v = std::is_floating_point_v<T> || is_half_v<T>;

}  // namespace gemmkit

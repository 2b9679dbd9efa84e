// The arithmetic of the Chinese remainder rebuild (gemmkit/exact.hpp), shared by the CPU path
// (src/ops/exact/crt.cpp) and the CUDA kernel (src/ops/exact/cuda/crt.cu).
//
// For moduli p_i with product P, M_i = P / p_i and w_i = M_i^-1 mod p_i, an integer with
// residues r_i is congruent mod P to
//     raw = sum_i y_i M_i,   y_i = r_i w_i mod p_i in [0, p_i),
// and raw / P = sum_i y_i / p_i exactly, so raw - round(sum_i y_i / p_i) P is the centred
// value. The sum of fractions is taken in doubles (q < 64 terms below 1: off by far less
// than 10^-12), so the rounding can miss only when the true fraction is within that of
// one half; the result is then one P outside (-P/2, P/2), and a comparison with (P - 1) / 2
// brings it back. Every other step is integer arithmetic:
//   - y_i M_i < 2^8 * 2^32 per 32-bit word, and q <= 53 of them summed per word stay below
//     2^46 in a 64-bit accumulator: carries are propagated once at the end;
//   - raw < 53 P, and the work values stay within +-2 P: `words` 32-bit words hold them
//     with their sign (words >= (bits(P) + 7) / 32).
// Cost per entry: q (W + 3) multiply-adds for W words, against q^2 / 2 for Garner's
// mixed-radix digits.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "runtime/host_device.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::crt_detail {

// 32-bit words of the widest work value: raw < 53 P < 2^361 (P < 2^355), and a sign bit.
inline constexpr int kMaxWords = 12;

// Everything one rebuild needs, made on the host once per call and passed by value to the
// kernel (about 3.5 KB of kernel parameters: no device state).
struct CrtConstants {
  int moduli = 0;
  std::uint32_t p[kCrtMaxModuli] = {};
  std::uint32_t w[kCrtMaxModuli] = {};                 // (P / p_i)^-1 mod p_i
  std::uint32_t barrett[kCrtMaxModuli] = {};           // floor((2^32 - 1) / p_i)
  double inv_p[kCrtMaxModuli] = {};                    // 1 / p_i
  std::uint32_t m[kCrtMaxModuli][kMaxWords] = {};      // P / p_i, least significant word first
  std::uint32_t modulus[kMaxWords] = {};               // P
  std::uint32_t half[kMaxWords] = {};                  // (P - 1) / 2
};

// The constants for these moduli; usage error if they are not valid (see CrtProblem).
CrtConstants make_constants(const std::vector<std::uint32_t>& moduli);

// x / divisor (x of kMaxWords words) into quotient; returns the remainder.
std::uint32_t divide_words(const std::uint32_t* x, std::uint32_t divisor, std::uint32_t* quotient);

// a^-1 mod p for gcd(a, p) = 1 (p need not be prime).
std::uint32_t inverse_mod(std::uint32_t a, std::uint32_t p);

// The work width the kernels are instantiated for: the smallest of 3, 6, 9, 12 words that
// holds raw sums and signs for these constants.
int work_words(const CrtConstants& k);

// a - b < 0, over W words of two's complement.
template <int W>
GEMMKIT_HOST_DEVICE inline bool difference_negative(const std::uint32_t* a, const std::uint32_t* b) {
  std::uint64_t borrow = 0;
  std::uint32_t top = 0;
  for (int j = 0; j < W; ++j) {
    const std::uint64_t d = std::uint64_t(a[j]) - b[j] - borrow;
    top = std::uint32_t(d);
    borrow = d >> 63;
  }
  return (top >> 31) != 0;
}

// x += sign * y over W words (sign +1 or -1), modulo 2^(32 W).
template <int W>
GEMMKIT_HOST_DEVICE inline void add_signed(std::uint32_t* x, const std::uint32_t* y, bool subtract) {
  std::uint64_t carry = subtract ? 1 : 0;  // x - y = x + ~y + 1
  for (int j = 0; j < W; ++j) {
    carry += std::uint64_t(x[j]) + (subtract ? ~y[j] : y[j]);
    x[j] = std::uint32_t(carry);
    carry >>= 32;
  }
}

// u mod p for any 32-bit u, without a division: Barrett with m = floor((2^32 - 1) / p), whose
// quotient estimate is at most one low (one correction). A division by a p known only at run
// time costs the device about twenty instructions; this, four.
GEMMKIT_HOST_DEVICE inline std::uint32_t reduce_mod(std::uint32_t u, std::uint32_t p, std::uint32_t m) {
  const std::uint32_t r = u - std::uint32_t((std::uint64_t(u) * m) >> 32) * p;  // in [0, 2p)
  return r >= p ? r - p : r;
}

// The centred integer with residues residue[i * plane_stride] (centred mod p_i), as `limbs`
// 64-bit words of two's complement at out.
template <int W>
GEMMKIT_HOST_DEVICE inline void rebuild_entry(const CrtConstants& k, const std::int8_t* residue,
                                              std::int64_t plane_stride, std::uint64_t* out,
                                              int limbs) {
  std::uint64_t acc[W] = {};
  double fraction = 0;
  for (int i = 0; i < k.moduli; ++i) {
    const std::uint32_t p = k.p[i];
    const int centred = residue[i * plane_stride];
    const std::uint32_t r = std::uint32_t(centred < 0 ? centred + int(p) : centred);
    const std::uint32_t y = reduce_mod(r * k.w[i], p, k.barrett[i]);  // r, w < 2^8
    fraction += double(y) * k.inv_p[i];
    for (int j = 0; j < W; ++j) acc[j] += std::uint64_t(y) * k.m[i][j];
  }
  // raw, carried into words; then x = raw - round(fraction) P.
  std::uint32_t x[W];
  std::uint64_t carry = 0;
  for (int j = 0; j < W; ++j) {
    carry += acc[j];
    x[j] = std::uint32_t(carry);
    carry >>= 32;
  }
  const auto multiple = std::uint64_t(fraction + 0.5);  // <= 64
  std::uint64_t product = 0, borrow = 0;
  for (int j = 0; j < W; ++j) {
    product += multiple * k.modulus[j];
    const std::uint64_t d = std::uint64_t(x[j]) - std::uint32_t(product) - borrow;
    product >>= 32;
    x[j] = std::uint32_t(d);
    borrow = d >> 63;
  }
  // Off by one P at most: x > (P-1)/2 means half - x < 0; x < -(P-1)/2 means x + half < 0.
  if (difference_negative<W>(k.half, x)) {
    add_signed<W>(x, k.modulus, true);
  } else {
    std::uint32_t t[W];
    for (int j = 0; j < W; ++j) t[j] = x[j];
    add_signed<W>(t, k.half, false);
    if ((t[W - 1] >> 31) != 0) add_signed<W>(x, k.modulus, false);
  }
  const std::uint32_t extension = (x[W - 1] >> 31) != 0 ? 0xffffffffu : 0u;
  for (int l = 0; l < limbs; ++l) {
    const std::uint32_t lo = 2 * l < W ? x[2 * l] : extension;
    const std::uint32_t hi = 2 * l + 1 < W ? x[2 * l + 1] : extension;
    out[l] = (std::uint64_t(hi) << 32) | lo;
  }
}

// Calls f(std::integral_constant<int, W>{}) for the work width `words` (one of work_words()).
template <class F>
void with_work_words(int words, F&& f) {
  switch (words) {
    case 3: f(std::integral_constant<int, 3>{}); return;
    case 6: f(std::integral_constant<int, 6>{}); return;
    case 9: f(std::integral_constant<int, 9>{}); return;
    default: f(std::integral_constant<int, 12>{}); return;
  }
}

}  // namespace gemmkit::crt_detail

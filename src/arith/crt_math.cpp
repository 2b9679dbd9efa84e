// The host half of the Chinese remainder arithmetic (src/arith/crt_math.hpp): the constants of
// a set of moduli, their validation, and the multi-word division and modular inverse they need.
#include "arith/crt_math.hpp"

#include <bit>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::crt_detail {

// x / divisor into quotient (long division from the top word); returns the remainder.
std::uint32_t divide_words(const std::uint32_t* x, std::uint32_t divisor, std::uint32_t* quotient) {
  std::uint64_t rest = 0;
  for (int j = kMaxWords; j-- > 0;) {
    rest = (rest << 32) | x[j];
    quotient[j] = std::uint32_t(rest / divisor);
    rest %= divisor;
  }
  return std::uint32_t(rest);
}

// a^-1 mod p for gcd(a, p) = 1 (extended Euclid; p need not be prime).
std::uint32_t inverse_mod(std::uint32_t a, std::uint32_t p) {
  std::int64_t r0 = p, r1 = a % p, s0 = 0, s1 = 1;
  while (r1 != 0) {
    const std::int64_t q = r0 / r1;
    std::tie(r0, r1) = std::pair{r1, r0 - q * r1};
    std::tie(s0, s1) = std::pair{s1, s0 - q * s1};
  }
  return std::uint32_t(((s0 % std::int64_t(p)) + p) % p);
}

namespace {

// x *= factor over kMaxWords words (P < 2^355 fits).
void multiply_words(std::uint32_t* x, std::uint32_t factor) {
  std::uint64_t carry = 0;
  for (int j = 0; j < kMaxWords; ++j) {
    carry += std::uint64_t(x[j]) * factor;
    x[j] = std::uint32_t(carry);
    carry >>= 32;
  }
}

int bit_length(const std::uint32_t* x) {
  for (int j = kMaxWords; j-- > 0;)
    if (x[j] != 0) return 32 * j + 32 - std::countl_zero(x[j]);
  return 0;
}

void validate_moduli(const std::vector<std::uint32_t>& moduli) {
  if (moduli.empty() || moduli.size() > std::size_t(kCrtMaxModuli))
    fail(ErrorCategory::usage, "crt_rebuild: " + std::to_string(moduli.size()) +
                                   " moduli; between 1 and " + std::to_string(kCrtMaxModuli) +
                                   " pairwise coprime odd moduli below 256 are taken");
  for (std::size_t i = 0; i < moduli.size(); ++i) {
    const std::uint32_t p = moduli[i];
    if (p < 3 || p > 255 || p % 2 == 0)
      fail(ErrorCategory::usage, "crt_rebuild: modulus " + std::to_string(i) + " is " + std::to_string(p) +
                                     "; moduli must be odd and in [3, 255] (centred residues are int8)");
    for (std::size_t j = 0; j < i; ++j)
      if (std::gcd(p, moduli[j]) != 1)
        fail(ErrorCategory::usage, "crt_rebuild: moduli " + std::to_string(moduli[j]) + " and " +
                                       std::to_string(p) + " share a factor; they must be pairwise coprime");
  }
}

}  // namespace

CrtConstants make_constants(const std::vector<std::uint32_t>& moduli) {
  validate_moduli(moduli);
  CrtConstants k;
  k.moduli = int(moduli.size());
  k.modulus[0] = 1;
  for (std::uint32_t p : moduli) multiply_words(k.modulus, p);
  // P is odd, so (P - 1) / 2 = P >> 1.
  for (int j = 0; j < kMaxWords; ++j)
    k.half[j] = (k.modulus[j] >> 1) | (j + 1 < kMaxWords ? k.modulus[j + 1] << 31 : 0);
  for (int i = 0; i < k.moduli; ++i) {
    const std::uint32_t p = moduli[i];
    k.p[i] = p;
    k.inv_p[i] = 1.0 / double(p);
    k.barrett[i] = 0xffffffffu / p;
    divide_words(k.modulus, p, k.m[i]);
    std::uint32_t unused[kMaxWords];
    k.w[i] = inverse_mod(divide_words(k.m[i], p, unused), p);
  }
  return k;
}

int work_words(const CrtConstants& k) {
  const int needed = (bit_length(k.modulus) + 7 + 31) / 32;
  for (int words : {3, 6, 9})
    if (needed <= words) return words;
  return kMaxWords;  // every valid set of moduli fits (P < 2^355)
}

}  // namespace gemmkit::crt_detail

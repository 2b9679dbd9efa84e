// Test data for the Chinese remainder rebuild (gemmkit/exact.hpp), shared by the host and GPU
// tests: moduli sets, integers spread over (-P/2, P/2) with its edges, their centred residues
// and their expected two's complement words, all computed with GMP.
#pragma once

#include <gmpxx.h>

#include <cstdint>
#include <random>
#include <vector>

namespace gemmkit::test {

// The odd primes below 256, largest first.
inline std::vector<std::uint32_t> odd_primes_below_256() {
  std::vector<std::uint32_t> primes;
  for (std::uint32_t n = 255; n >= 3; n -= 2) {
    bool prime = true;
    for (std::uint32_t d = 3; d * d <= n; d += 2) prime = prime && n % d != 0;
    if (prime) primes.push_back(n);
  }
  return primes;
}

inline mpz_class product_of(const std::vector<std::uint32_t>& moduli) {
  mpz_class p = 1;
  for (auto m : moduli) p *= m;
  return p;
}

// x as `limbs` 64-bit words of two's complement (x must fit).
inline std::vector<std::uint64_t> twos_complement_words(const mpz_class& x, int limbs) {
  mpz_class v = x;
  if (v < 0) {
    mpz_class wrap = 1;
    wrap <<= 64 * limbs;
    v += wrap;
  }
  std::vector<std::uint64_t> words(limbs, 0);
  std::size_t count = 0;
  mpz_export(words.data(), &count, -1, sizeof(std::uint64_t), 0, 0, v.get_mpz_t());
  return words;
}

// rows x cols integers in (-P/2, P/2): the first entries are the edges (0, +-1, +-(P-1)/2,
// +-((P-1)/2 - 1), +-P/4), the rest uniformly random.
inline std::vector<mpz_class> crt_test_values(const std::vector<std::uint32_t>& moduli, std::size_t count,
                                              unsigned seed) {
  const mpz_class p = product_of(moduli), half = (p - 1) / 2;
  std::vector<mpz_class> edges = {0, 1, -1, half, -half, half - 1, -(half - 1), half / 2, -(half / 2)};
  gmp_randclass random(gmp_randinit_default);
  random.seed(seed);
  std::vector<mpz_class> values;
  for (std::size_t i = 0; i < count; ++i)
    values.push_back(i < edges.size() ? edges[i] : mpz_class(random.get_z_range(p) - half));
  return values;
}

// Planes of centred residues: plane q, entry i at q * plane_stride + i.
inline std::vector<std::int8_t> centred_residues(const std::vector<mpz_class>& values,
                                                 const std::vector<std::uint32_t>& moduli,
                                                 std::size_t plane_stride) {
  std::vector<std::int8_t> planes(moduli.size() * plane_stride, 0);
  for (std::size_t q = 0; q < moduli.size(); ++q) {
    const long p = moduli[q];
    for (std::size_t i = 0; i < values.size(); ++i) {
      mpz_class r;
      mpz_fdiv_r_ui(r.get_mpz_t(), values[i].get_mpz_t(), static_cast<unsigned long>(p));  // [0, p)
      long c = r.get_si();
      if (c > (p - 1) / 2) c -= p;
      planes[q * plane_stride + i] = static_cast<std::int8_t>(c);
    }
  }
  return planes;
}

}  // namespace gemmkit::test

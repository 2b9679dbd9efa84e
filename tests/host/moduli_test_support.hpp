// Shared by the host tests of plans built on the int8 primes (exact GEMM, Ozaki emulation).
#pragma once

#include <gmpxx.h>

#include <cstddef>

#include "gemmkit/modular.hpp"

namespace gemmkit::test {

// The product of the first q int8 primes, exactly.
inline mpz_class product_of_first(int q) {
  mpz_class p = 1;
  for (int i = 0; i < q; ++i) p *= static_cast<unsigned long>(int8_moduli()[std::size_t(i)]);
  return p;
}

}  // namespace gemmkit::test

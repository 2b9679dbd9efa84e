// INTERIM (branch exact): host halves of interfaces 1 and 2 of issue 19 so that this branch
// links before helper i8gemm's and the lead's commits are merged; deleted at those merges.
#include <cmath>
#include <cstdint>
#include <vector>

#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"

namespace gemmkit {

const std::vector<std::uint32_t>& int8_moduli() {
  static const std::vector<std::uint32_t> primes = [] {
    std::vector<std::uint32_t> v;
    for (std::uint32_t p = 255; p >= 3; --p) {
      bool prime = true;
      for (std::uint32_t d = 2; d * d <= p; ++d) prime = prime && p % d != 0;
      if (prime) v.push_back(p);
    }
    return v;
  }();
  return primes;
}

std::int64_t int8_k_limit() { return (std::int64_t{1} << 31) / (125 * 125); }

}  // namespace gemmkit

#include "ops/walks/modular_int8.hpp"

#include <algorithm>
#include <cstring>

#include "gemmkit/device.hpp"
#include "ops/walks/modular.hpp"

namespace gemmkit::walks_detail {

std::optional<int> int8_primes_for_bound(const BigInt& bound) {
  // P > 2 bound + 1, multiplied out in 64-bit words.
  const std::vector<std::uint64_t>& b = bound.magnitude();
  std::vector<std::uint64_t> target(b.size() + 1, 0);  // 2 bound + 1
  std::uint64_t carry = 1;
  for (std::size_t i = 0; i < b.size(); ++i) {
    target[i] = (b[i] << 1) | carry;
    carry = b[i] >> 63;
  }
  target[b.size()] = carry;
  std::vector<std::uint64_t> product(target.size() + 1, 0);
  product[0] = 1;
  auto greater = [&] {  // product > target
    for (std::size_t i = product.size(); i-- > 0;) {
      const std::uint64_t t = i < target.size() ? target[i] : 0;
      if (product[i] != t) return product[i] > t;
    }
    return false;
  };
  const std::vector<std::uint32_t>& primes = int8_primes();
  for (std::size_t q = 0; q < primes.size(); ++q) {
    u128 c = 0;
    for (auto& w : product) {
      c += static_cast<u128>(w) * primes[q];
      w = static_cast<std::uint64_t>(c);
      c >>= 64;
    }
    if (c) product.push_back(static_cast<std::uint64_t>(c));
    if (greater()) return static_cast<int>(q + 1);
  }
  return std::nullopt;
}

bool gpu_int8_powers_available() { return cuda_device_available(); }  // false without CUDA

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t(1) << 20;
  const auto pieces = static_cast<std::int64_t>((bytes + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < pieces; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * kPiece;
    std::memcpy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, std::min(kPiece, bytes - at));
  }
}

}  // namespace gemmkit::walks_detail

// x mod p for integers x held as 64-bit words of two's complement, least significant first
// (the GPU walk engine's counts, reduced modulo each of the primes they were rebuilt from),
// for an odd p < 2^16, by multiplications only (Lemire's fastmod on 32-bit halves). One
// definition for the host (tested in CI) and the device (src/dist/nccl_walks.cu).
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace gemmkit::dist {

class WordsModulo {
 public:
  WordsModulo() = default;
  explicit WordsModulo(std::uint32_t p)
      : m_(~std::uint64_t{0} / p + 1), p_(p), c32_(std::uint32_t((std::uint64_t{1} << 32) % p)) {}

  GEMMKIT_HOST_DEVICE std::uint32_t p() const { return p_; }

  // x mod p in [0, p): r = (r 2^64 + word) mod p, a 32-bit half at a time (every argument of
  // reduce() stays below (p - 1)^2 + p < 2^32); a negative x is the unsigned value less
  // 2^(64 limbs).
  GEMMKIT_HOST_DEVICE std::uint32_t operator()(const std::uint64_t* words, int limbs) const {
    std::uint32_t r = 0, wrap = 1;  // wrap: 2^(64 limbs) mod p
    for (int i = limbs - 1; i >= 0; --i) {
      r = reduce(reduce(r * c32_ + reduce(std::uint32_t(words[i] >> 32))) * c32_ + reduce(std::uint32_t(words[i])));
      wrap = reduce(reduce(wrap * c32_) * c32_);
    }
    if (words[limbs - 1] >> 63) r = reduce(r + p_ - wrap);
    return r;
  }

  // The same as a centred residue, in [-(p-1)/2, (p-1)/2].
  GEMMKIT_HOST_DEVICE int centred(const std::uint64_t* words, int limbs) const {
    const std::uint32_t r = (*this)(words, limbs);
    return r > (p_ - 1) / 2 ? int(r) - int(p_) : int(r);
  }

 private:
  GEMMKIT_HOST_DEVICE std::uint32_t reduce(std::uint32_t a) const {  // a mod p
    const std::uint64_t low = m_ * a;
#ifdef __CUDA_ARCH__
    return std::uint32_t(__umul64hi(low, p_));
#else
    __extension__ typedef unsigned __int128 u128;
    return std::uint32_t((u128(low) * p_) >> 64);
#endif
  }

  std::uint64_t m_ = 0;        // 2^64 / p, rounded up
  std::uint32_t p_ = 1, c32_ = 0;  // p, 2^32 mod p
};

}  // namespace gemmkit::dist

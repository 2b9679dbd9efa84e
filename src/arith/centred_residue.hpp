// The centred residue of an int32 sum mod a small odd modulus without a division, shared by
// the CUDA kernels that reduce int8 products (src/ops/modular/cuda/modular_reduce.cuh, rung 24's
// modular epilogue) and the host test that checks it against %.
//
// With magic = ceil(2^32 / p) (below 2^31 for p >= 3), mulhi(x, magic) = floor(x magic /
// 2^32) is floor(x / p) or one off for |x| <= 2^31 (the error x (magic - 2^32 / p) / 2^32 is
// below 1/2 in size), so r = x - q p lies in [-p, 2p). r is small, so a second step is exact:
// y = r + p + (p - 1) / 2 lies in [0, 4p), and for y < 4 * 255 the same multiply-high gives
// floor(y / p) exactly (the error is below 2^-22, and y / p stays at least 1/p below the next
// integer), so y - floor(y / p) p - (p - 1) / 2 is the residue in [-(p-1)/2, (p-1)/2].
// Six integer instructions and no comparison, against about twelve with corrections by
// comparison and twenty for %.
#pragma once

#include <cstdint>

#include "runtime/host_device.hpp"

namespace gemmkit {

// floor(a * b / 2^32), the high word of the 64-bit product.
GEMMKIT_HOST_DEVICE inline int mul_high(int a, int b) {
#if defined(__CUDA_ARCH__)
  return __mulhi(a, b);
#else
  return int((std::int64_t(a) * std::int64_t(b)) >> 32);
#endif
}

// x mod p in [-(p-1)/2, (p-1)/2] for an odd modulus 3 <= p <= 255 and any int32 x.
// Written as t = r + p, y = t + half, t - floor(y / p) p, with -p kept: each product and its
// sum is one multiply-add, and no instruction negates a quotient (on the GPU the multiplies
// share the half-rate integer pipe, so two fewer instructions per residue count).
struct CentredResidue {
  int p = 3, neg_p = -3, half = 1, magic = 0;
  GEMMKIT_HOST_DEVICE explicit CentredResidue(int modulus)
      : p(modulus), neg_p(-modulus), half((modulus - 1) / 2), magic(int(0xFFFFFFFFu / unsigned(modulus) + 1u)) {}
  GEMMKIT_HOST_DEVICE int operator()(int x) const {
    // Wrapping arithmetic: x + p and the products may pass 2^31, the sums come back small.
    const int t = int(unsigned(x) + unsigned(p) + unsigned(mul_high(x, magic)) * unsigned(neg_p));  // r + p: [0, 3p)
    const int y = t + half;                                                                          // [0, 4p)
    return int(unsigned(t) + unsigned(mul_high(y, magic)) * unsigned(neg_p));
  }
};

}  // namespace gemmkit

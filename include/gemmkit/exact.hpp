// Exact integer arithmetic from int8 residues: the Chinese remainder rebuild that turns the
// residues of an integer matrix modulo several small moduli (what int8 tensor-core GEMMs
// produce, see gemmkit/modular.hpp) back into the integers, on the device. See docs/exact.md
// for the moduli, the bounds and why every step is exact.
#pragma once

#include <cstdint>
#include <vector>

#include "gemmkit/context.hpp"

namespace gemmkit {

// The most moduli one rebuild can take: pairwise coprime odd moduli below 256 each have an odd
// prime factor below 256 of their own, and there are 53 such primes. Their product P is at
// most 2^355 (the largest power below 256 of each of those primes).
inline constexpr int kCrtMaxModuli = 53;

// Integers X(r, c) from their centred residues modulo q moduli p_0..p_{q-1}. The rebuilt value
// is the one integer of (-P/2, P/2) with those residues, P = p_0 ... p_{q-1}: it equals X
// whenever |X| <= (P - 1) / 2, which the caller guarantees by choosing enough moduli for a
// bound on |X|.
struct CrtProblem {
  std::int64_t rows = 0, cols = 0;
  // Pairwise coprime odd moduli in [3, 255], at most kCrtMaxModuli (for example a prefix of
  // int8_moduli()).
  std::vector<std::uint32_t> moduli;
  // Plane q holds X mod p_q: entry (r, c) of plane q at residues[q * plane_stride + r * ld + c],
  // centred, in [-(p_q - 1)/2, (p_q - 1)/2].
  const std::int8_t* residues = nullptr;
  std::int64_t ld = 0, plane_stride = 0;
  // Optional gathers (device arrays of rows / cols indices, or null for the identity): entry
  // (r, c) of the result reads row row_index[r] and column col_index[c] of the planes.
  const std::int64_t* row_index = nullptr;
  const std::int64_t* col_index = nullptr;
  // Entry (r, c): `limbs` 64-bit words of two's complement, least significant first, at
  // out + (r * ld_out + c) * limbs. Words beyond crt_limbs(moduli) are the sign's extension;
  // fewer words keep the low ones (enough for any bound the caller's moduli were chosen for:
  // the words that hold that bound and its sign).
  std::uint64_t* out = nullptr;
  std::int64_t ld_out = 0;  // in entries, >= cols
  int limbs = 1;
};

// 64-bit words of two's complement that hold every integer of (-P/2, P/2).
int crt_limbs(const std::vector<std::uint32_t>& moduli);

// Rebuilds every entry, queued on `stream` (CPU context: on the calling thread, pointers in
// host memory). Needs no workspace. Usage error for an invalid problem (moduli not odd, not
// in [3, 255], not pairwise coprime, too many; strides that overlap; null pointers).
void crt_rebuild(Context& ctx, const CrtProblem& problem, Stream stream = nullptr);

}  // namespace gemmkit

// Exact arithmetic modulo small primes, and the Chinese remainder theorem that turns
// residues back into integers. The walk counter works modulo a set of primes below 2^21:
//   - dense products run as double-precision GEMMs on centred residues (|r| <= (p-1)/2 <
//     2^20). Every product is an integer below 2^40 in magnitude, and a sum of at most
//     `modular_chunk(p)` of them stays below 2^53, where every integer is a double: so
//     every partial sum any GEMM kernel forms, in any order, with or without FMA, is exact.
//     Longer K dimensions are cut into chunks and reduced between them.
//   - sparse products accumulate residues (< 2^21) times weight residues (< 2^21) in
//     unsigned 64-bit integers: each term is below 2^42, so 2^22 terms fit; rows that long
//     are reduced on the way.
#pragma once

#include <cstdint>
#include <vector>

#include "arith/int128.hpp"
#include "gemmkit/matrix.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit::walks_detail {

inline constexpr std::uint32_t kPrimeLimit = 1u << 21;  // every prime is below this
inline constexpr std::size_t kMaxPrimes = 4096;        // covers bounds up to 2^80,000
inline constexpr std::int64_t kSparseTermsBeforeReduce = std::int64_t{1} << 22;

// The `count` largest primes below 2^21, largest first.
std::vector<std::uint32_t> crt_primes(int count);

// The fewest primes (of crt_primes) whose product exceeds 2 * bound + 1, so that the
// symmetric residue range (-P/2, P/2) holds every integer of magnitude <= bound.
int primes_for_bound(const BigInt& bound);

// The longest K dimension whose sum of K products of centred residues mod p stays exact in
// a double, with room for one more centred residue (the accumulator): K (p-1)^2/4 + (p-1)/2
// <= 2^53.
std::int64_t modular_chunk(std::uint32_t p);

// x mod p in the centred range [-(p-1)/2, (p-1)/2], exactly, for any integer-valued double
// |x| <= 2^53 (p odd).
double reduce_centered(double x, double p, double inv_p);
void reduce_centered(double* x, std::size_t count, std::uint32_t p);

// C = A B mod p, on centred residues stored as doubles (A is m x k, B is k x n, C is m x n;
// C must not overlap A or B). Runs the CPU backend's f64 GEMM on K chunks of at most
// `chunk` (0: modular_chunk(p)), reducing after each.
void modular_gemm(MatrixView<const double> a, MatrixView<const double> b, MatrixView<double> c,
                  std::uint32_t p, std::int64_t chunk = 0);

// The graph's adjacency matrix (weights) as doubles: centred residues mod p, or the weights
// themselves for p = 0.
Matrix<double> dense_adjacency(const Graph& g, std::uint32_t p);

// Rebuilds integers from their residues modulo the first Q primes of crt_primes, in the
// symmetric range, as `out_limbs` 64-bit words of two's complement (Garner's mixed-radix
// algorithm, then Horner in multi-word arithmetic).
class CrtRebuilder {
 public:
  CrtRebuilder(std::vector<std::uint32_t> primes, int out_limbs);
  int primes() const { return static_cast<int>(primes_.size()); }
  int out_limbs() const { return out_limbs_; }
  // residues[q] in [0, primes[q]); writes out_limbs words to out.
  void rebuild(const std::uint32_t* residues, std::uint64_t* out) const;

 private:
  std::vector<std::uint32_t> primes_;
  std::vector<std::uint64_t> prefix_;   // prefix_[i * Q + j] = primes[0..j) product mod primes[i]
  std::vector<std::uint64_t> inverse_;  // inverse_[i] = primes[0..i) product^-1 mod primes[i]
  std::vector<std::uint64_t> modulus_, half_;  // P and (P - 1) / 2 in work_limbs_ words
  int work_limbs_ = 1, out_limbs_ = 1;
};

// Words of two's complement needed for every integer of magnitude <= bound.
int limbs_for_bound(const BigInt& bound);

// BigInt from two's complement words and back (width words; the value must fit).
BigInt bigint_from_words(const std::uint64_t* words, int width);

}  // namespace gemmkit::walks_detail

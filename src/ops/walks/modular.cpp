#include "ops/walks/modular.hpp"

#include <algorithm>
#include <cmath>

#include "gemmkit/gemm.hpp"

namespace gemmkit::walks_detail {
namespace {

bool is_prime(std::uint32_t n) {
  if (n < 2) return false;
  for (std::uint32_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exponent, std::uint64_t p) {
  std::uint64_t result = 1;
  base %= p;
  while (exponent) {
    if (exponent & 1) result = result * base % p;
    base = base * base % p;
    exponent >>= 1;
  }
  return result;
}

// out = out * factor + addend over `width` words; returns the carry out of the top word.
std::uint64_t mul_add_small(std::uint64_t* words, int width, std::uint64_t factor,
                            std::uint64_t addend) {
  u128 carry = addend;
  for (int i = 0; i < width; ++i) {
    carry += static_cast<u128>(words[i]) * factor;
    words[i] = static_cast<std::uint64_t>(carry);
    carry >>= 64;
  }
  return static_cast<std::uint64_t>(carry);
}

}  // namespace

std::vector<std::uint32_t> crt_primes(int count) {
  static const std::vector<std::uint32_t> all = [] {
    std::vector<std::uint32_t> primes;
    // 2^21 / ln(2^21) is about 144,000 primes below 2^21: far more than any bound needs
    // (4,000 of them cover a bound of 2^80,000). Collected on first use.
    for (std::uint32_t n = kPrimeLimit - 1; n > kPrimeLimit / 2 && primes.size() < kMaxPrimes; n -= 2)
      if (is_prime(n)) primes.push_back(n);
    return primes;
  }();
  if (count < 0 || count > static_cast<int>(all.size()))
    fail(ErrorCategory::usage,
         "walk counts this large need " + std::to_string(count) + " primes; at most " +
             std::to_string(all.size()) + " are supported (shorten the length)");
  return {all.begin(), all.begin() + count};
}

int primes_for_bound(const BigInt& bound) {
  // Exactly: multiply primes into P until P > 2 bound + 1, in multi-word arithmetic.
  std::vector<std::uint64_t> target = bound.magnitude();
  target.push_back(0);
  for (std::size_t i = target.size(); i-- > 0;)  // 2 bound + 1
    target[i] = (target[i] << 1) | (i > 0 ? target[i - 1] >> 63 : 1);
  std::vector<std::uint64_t> product(target.size() + 1, 0);
  product[0] = 1;
  auto greater = [&] {
    for (std::size_t i = product.size(); i-- > 0;) {
      const std::uint64_t t = i < target.size() ? target[i] : 0;
      if (product[i] != t) return product[i] > t;
    }
    return false;
  };
  const int most = static_cast<int>(bound.bit_length() / 20) + 2;  // each prime > 2^20
  const std::vector<std::uint32_t> primes = crt_primes(std::min(most, 4096));
  int count = 0;
  while (!greater()) {
    if (count == static_cast<int>(primes.size())) crt_primes(count + 1);  // throws
    mul_add_small(product.data(), static_cast<int>(product.size()), primes[count++], 0);
  }
  return count;
}

std::int64_t modular_chunk(std::uint32_t p) {
  const double h = (p - 1) / 2;  // largest centred residue magnitude
  const double limit = 9007199254740992.0;  // 2^53
  // floor((2^53 - h) / h^2); h^2 < 2^40 and the quotient < 2^53 are exact enough: both
  // operands are exact integers and the floor is checked below.
  auto k = static_cast<std::int64_t>(std::floor((limit - h) / (h * h)));
  while (k > 1 && static_cast<double>(k) * h * h + h > limit) --k;
  return std::max<std::int64_t>(k, 1);
}

double reduce_centered(double x, double p, double inv_p) {
  // q is within 1 of x/p (|x| <= 2^53, so x * inv_p is off by far less than 1/2), and the
  // true x - q p is below 2p in magnitude, so the fused multiply-add gives it exactly.
  const double q = std::nearbyint(x * inv_p);
  double r = std::fma(-q, p, x);
  const double h = (p - 1) / 2;
  while (r > h) r -= p;
  while (r < -h) r += p;
  return r;
}

void reduce_centered(double* x, std::size_t count, std::uint32_t p) {
  const double pd = p, inv = 1.0 / pd;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i)
    x[i] = reduce_centered(x[i], pd, inv);
}

void modular_gemm(MatrixView<const double> a, MatrixView<const double> b, MatrixView<double> c,
                  std::uint32_t p, std::int64_t chunk) {
  const std::int64_t m = a.rows(), k = a.cols(), n = b.cols();
  if (b.rows() != k || c.rows() != m || c.cols() != n)
    fail(ErrorCategory::internal, "modular_gemm: shape mismatch");
  if (chunk <= 0) chunk = modular_chunk(p);
  chunk = std::min(chunk, modular_chunk(p));
  for (std::int64_t i = 0; i < m; ++i) std::fill_n(&c(i, 0), n, 0.0);
  if (m == 0 || n == 0) return;
  GemmOptions options;
  options.backend = Backend::cpu;
  for (std::int64_t k0 = 0; k0 < k; k0 += chunk) {
    const std::int64_t kc = std::min(chunk, k - k0);
    // (m, kc) slice of A times (kc, n) slice of B, added to C (already reduced: |C| <= h).
    const MatrixView<const double> a_part(&a(0, k0), m, kc, a.ld());
    const MatrixView<const double> b_part(&b(k0, 0), kc, n, b.ld());
    gemm(make_problem<double>(a_part, false, b_part, false, c, 1.0, k0 == 0 ? 0.0 : 1.0),
         options);
    const double pd = p, inv = 1.0 / pd;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c(i, j) = reduce_centered(c(i, j), pd, inv);
  }
}

CrtRebuilder::CrtRebuilder(std::vector<std::uint32_t> primes, int out_limbs)
    : primes_(std::move(primes)), out_limbs_(out_limbs) {
  const std::size_t q = primes_.size();
  // prefix_[i * q + j] = p_0 ... p_{j-1} mod p_i (j < i); inverse_[i] = (p_0 ... p_{i-1})^-1.
  prefix_.assign(q * q, 0);
  inverse_.assign(q, 0);
  for (std::size_t i = 0; i < q; ++i) {
    std::uint64_t product = 1 % primes_[i];
    for (std::size_t j = 0; j < i; ++j) {
      prefix_[i * q + j] = product;
      product = product * primes_[j] % primes_[i];
    }
    inverse_[i] = pow_mod(product, primes_[i] - 2, primes_[i]);
  }
  // P < 2^(21 Q): one more word than that, for the sign.
  work_limbs_ = std::max(out_limbs_, static_cast<int>((21 * q) / 64) + 2);
  modulus_.assign(work_limbs_, 0);
  modulus_[0] = 1;
  for (std::uint32_t p : primes_) mul_add_small(modulus_.data(), work_limbs_, p, 0);
  // (P - 1) / 2: P is odd (a product of odd primes), so this is P >> 1.
  half_ = modulus_;
  for (int i = 0; i < work_limbs_; ++i)
    half_[i] = (half_[i] >> 1) | (i + 1 < work_limbs_ ? half_[i + 1] << 63 : 0);
}

void CrtRebuilder::rebuild(const std::uint32_t* residues, std::uint64_t* out) const {
  const std::size_t q = primes_.size();
  // Mixed-radix digits: x = d0 + d1 p0 + d2 p0 p1 + ..., each d_i in [0, p_i). Modulo
  // p_i, d_i p_0...p_{i-1} = r_i - sum_{j<i} d_j p_0...p_{j-1}; the sum's terms are below
  // 2^42 and there are fewer than 2^12 of them, so it is exact in 64 bits and needs one
  // reduction, not one per term.
  std::uint64_t digits[kMaxPrimes];
  for (std::size_t i = 0; i < q; ++i) {
    const std::uint64_t p = primes_[i];
    const std::uint64_t* prefix = &prefix_[i * q];
    std::uint64_t sum = 0;
    for (std::size_t j = 0; j < i; ++j) sum += digits[j] * prefix[j];
    digits[i] = (residues[i] % p + p - sum % p) % p * inverse_[i] % p;
  }
  // Horner from the top digit.
  std::uint64_t work[kMaxPrimes * 21 / 64 + 2];
  const int w = work_limbs_;
  std::fill_n(work, w, 0);
  for (std::size_t i = q; i-- > 0;) {
    if (i + 1 < q) mul_add_small(work, w, primes_[i], 0);
    mul_add_small(work, w, 1, digits[i]);
  }
  // work in [0, P); above (P-1)/2 it stands for work - P.
  bool above = false;
  for (int i = w; i-- > 0;)
    if (work[i] != half_[i]) {
      above = work[i] > half_[i];
      break;
    }
  if (above) {
    u128 borrow = 0;
    for (int i = 0; i < w; ++i) {
      const u128 sub = static_cast<u128>(modulus_[i]) + borrow;
      borrow = work[i] < sub ? 1 : 0;
      work[i] = static_cast<std::uint64_t>(work[i] - sub);
    }
  }
  std::copy_n(work, out_limbs_, out);
}

int limbs_for_bound(const BigInt& bound) {
  return static_cast<int>(bound.bit_length() / 64) + 1;  // one bit to spare for the sign
}

BigInt bigint_from_words(const std::uint64_t* words, int width) {
  const bool negative = width > 0 && (words[width - 1] >> 63) != 0;
  std::vector<std::uint64_t> magnitude(words, words + width);
  if (negative) {  // negate: invert and add one
    u128 carry = 1;
    for (auto& limb : magnitude) {
      carry += static_cast<std::uint64_t>(~limb);
      limb = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
  }
  return BigInt::from_limbs(std::move(magnitude), negative);
}

Matrix<double> dense_adjacency(const Graph& g, std::uint32_t p) {
  Matrix<double> a(g.n, g.n);
  const double pd = p, inv = 1.0 / pd;
  for (std::int64_t u = 0; u < g.n; ++u)
    for (std::int64_t e = g.row_start[u]; e < g.row_start[u + 1]; ++e) {
      const double w = p == 0 ? static_cast<double>(g.weight_at(e))
                              : static_cast<double>(g.weight_at(e) % static_cast<std::int64_t>(p));
      a(u, g.target[e]) = p == 0 ? w : reduce_centered(w, pd, inv);
    }
  return a;
}

}  // namespace gemmkit::walks_detail

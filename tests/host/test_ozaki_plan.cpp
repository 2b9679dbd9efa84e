// The host half of the Ozaki FP64 emulation (gemmkit/ozaki.hpp): the plan. Its
// bound, 2 k 2^(2 bits) < P with a margin for the rebuild, is what makes the
// integer product exact, so it is checked against GMP for every count of moduli
// and a spread of k, with bits as large as the bound allows; the default plan keeps a double's 53 bits with the
// fewest moduli. No GPU needed.
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "host/moduli_test_support.hpp"
#include "gemmkit/ozaki.hpp"

namespace gemmkit {
namespace {

using test::product_of_first;

// 2 k 2^(2 bits), the largest |C'| times two.
mpz_class twice_the_bound(std::int64_t k, int bits) {
  mpz_class b = static_cast<unsigned long>(k);
  b <<= 2 * bits + 1;
  return b;
}

TEST(OzakiPlan, BitsAreTheMostTheModuliHoldExactly) {
  for (std::int64_t k : {1LL, 2LL, 3LL, 100LL, 4096LL, 16383LL, 16384LL, 32768LL, 1000000LL})
    for (int moduli = 4; moduli <= 16; ++moduli) {
      const OzakiPlan plan = plan_ozaki(k, moduli);
      SCOPED_TRACE("k " + std::to_string(k) + ", moduli " + std::to_string(moduli));
      EXPECT_EQ(plan.moduli, moduli);
      ASSERT_GE(plan.bits, 1);
      const mpz_class p = product_of_first(moduli);
      // Exact, with the rebuild's margin: 2 k 2^(2 bits) <= P (1 - 2^-12).
      EXPECT_LE(twice_the_bound(k, plan.bits) * 4096, p * 4095);
      if (plan.bits < 62) {
        EXPECT_GE(twice_the_bound(k, plan.bits + 1) * 1000, p * 999);  // and no bit to spare
      }
    }
}

TEST(OzakiPlan, TheDefaultKeepsADoublesMantissaWithTheFewestModuli) {
  for (std::int64_t k : {1LL, 64LL, 1000LL, 4096LL, 16384LL, 32768LL, 131072LL}) {
    const OzakiPlan plan = plan_ozaki(k);
    SCOPED_TRACE("k " + std::to_string(k));
    EXPECT_GE(plan.bits, 53);
    EXPECT_LT(plan_ozaki(k, plan.moduli - 1).bits, 53);
    EXPECT_LT(twice_the_bound(k, plan.bits), product_of_first(plan.moduli));
  }
  // The sizes: 16 primes.
  EXPECT_EQ(plan_ozaki(16384).moduli, 16);
  EXPECT_EQ(plan_ozaki(32768).moduli, 16);
  EXPECT_EQ(plan_ozaki(16384).describe(), "16 int8 primes, 54 bits per row of A and column of B");
}

TEST(OzakiPlan, ExtraBitsForSpreadOperandsAndF32) {
  for (std::int64_t k : {64LL, 4096LL, 16384LL, 32768LL}) {
    SCOPED_TRACE("k " + std::to_string(k));
    for (int extra = 0; extra <= kOzakiMaxExtraBits; ++extra) {
      const OzakiPlan f64 = plan_ozaki(k, 0, DType::f64, extra), f32 = plan_ozaki(k, 0, DType::f32, extra);
      EXPECT_GE(f64.bits, 53 + extra);
      EXPECT_LT(plan_ozaki(k, f64.moduli - 1).bits, 53 + extra);
      EXPECT_GE(f32.bits, 24 + extra);
      EXPECT_LT(plan_ozaki(k, f32.moduli - 1).bits, 24 + extra);
    }
    // Beyond the cap, the cap's plan.
    EXPECT_EQ(plan_ozaki(k, 0, DType::f64, 40).moduli, plan_ozaki(k, 0, DType::f64, kOzakiMaxExtraBits).moduli);
  }
  EXPECT_EQ(plan_ozaki(16384, 0, DType::f32).moduli, 9);
  EXPECT_THROW(plan_ozaki(100, 0, DType::i32), Error);
}

TEST(OzakiPlan, ModuliOutOfRangeAreUsageErrors) {
  EXPECT_THROW(plan_ozaki(100, 1), Error);
  EXPECT_THROW(plan_ozaki(100, kCrtMaxModuli + 1), Error);
  EXPECT_THROW(plan_ozaki(-1), Error);
  // Two primes hold 2 k 2^(2 bits) < 251 * 241 only while k is small.
  EXPECT_EQ(plan_ozaki(1, 2).bits, 7);
  EXPECT_THROW(plan_ozaki(1 << 20, 2), Error);
}

// The moduli of the emulation over ranks (dist::ozaki_gemm): each rank a run of consecutive
// moduli, together all of them once, in order; shares differ by at most one, rank 0's no
// larger than any other's (it also scans and rebuilds); ranks beyond the moduli take none.
TEST(OzakiPlan, ModuliOverRanksAreConsecutiveEvenShares) {
  for (int moduli : {0, 1, 2, 7, 14, 16, 17, 53})
    for (int ranks : {1, 2, 3, 4, 5, 8, 16, 64}) {
      SCOPED_TRACE(std::to_string(moduli) + " moduli over " + std::to_string(ranks) + " ranks");
      const std::vector<int> first = ozaki_moduli_by_rank(moduli, ranks);
      ASSERT_EQ(first.size(), std::size_t(ranks) + 1);
      EXPECT_EQ(first.front(), 0);
      EXPECT_EQ(first.back(), moduli);
      int least = moduli, most = 0;
      for (int r = 0; r < ranks; ++r) {
        const int share = first[std::size_t(r) + 1] - first[std::size_t(r)];
        ASSERT_GE(share, 0);
        least = std::min(least, share), most = std::max(most, share);
        EXPECT_LE(first[1] - first[0], share) << "rank 0 takes more than rank " << r;
      }
      EXPECT_LE(most - least, 1);
      EXPECT_EQ(most, (moduli + ranks - 1) / ranks);
    }
  EXPECT_THROW(ozaki_moduli_by_rank(4, 0), Error);
}

}  // namespace
}  // namespace gemmkit

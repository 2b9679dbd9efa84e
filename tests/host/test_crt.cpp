// The Chinese remainder rebuild (gemmkit/exact.hpp) on the CPU context: every entry against
// GMP, over moduli sets from one modulus to all 53 odd primes below 256 and coprime composites, with (-P/2, P/2)'s
// edges, gathers, wider and narrower outputs, and the validation errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "crt_test_support.hpp"
#include "fault_injection.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"

using namespace gemmkit;

namespace {

// Rebuilds `count` entries of residue planes (plane q at q * stride) on the CPU context.
std::vector<std::uint64_t> rebuild_on_cpu(const std::vector<std::uint32_t>& moduli, const std::vector<std::int8_t>& planes,
                                          std::size_t count, std::size_t stride, int limbs) {
  std::vector<std::uint64_t> out(count * limbs, 0x5555555555555555ull);
  Context cpu(Backend::cpu);
  CrtProblem p;
  p.rows = 1;
  p.cols = std::int64_t(count);
  p.moduli = moduli;
  p.residues = planes.data();
  p.ld = p.cols;
  p.plane_stride = std::int64_t(stride);
  p.out = out.data();
  p.ld_out = p.cols;
  p.limbs = limbs;
  crt_rebuild(cpu, p);
  return out;
}

// Every word of `out` equals GMP's two's complement words of the values.
::testing::AssertionResult words_match(const std::vector<mpz_class>& values, const std::vector<std::uint64_t>& out,
                                       int limbs) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::vector<std::uint64_t> want = test::twos_complement_words(values[i], limbs);
    for (int l = 0; l < limbs; ++l)
      if (out[i * limbs + l] != want[l])
        return ::testing::AssertionFailure() << "value " << values[i].get_str() << " word " << l << " of " << limbs;
  }
  return ::testing::AssertionSuccess();
}

// Rebuilds `count` test values on the CPU context and compares every word with GMP's.
void check_rebuild(const std::vector<std::uint32_t>& moduli, std::size_t count, int extra_limbs,
                   unsigned seed) {
  const std::vector<mpz_class> values = test::crt_test_values(moduli, count, seed);
  const std::vector<std::int8_t> planes = test::centred_residues(values, moduli, count + 3);
  const int limbs = crt_limbs(moduli) + extra_limbs;
  ASSERT_TRUE(words_match(values, rebuild_on_cpu(moduli, planes, count, count + 3, limbs), limbs))
      << moduli.size() << " moduli";
}

TEST(Crt, EveryPrefixOfTheInt8PrimesAgainstGmp) {
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  ASSERT_EQ(primes.size(), 53u);
  for (std::size_t q = 1; q <= primes.size(); ++q)
    check_rebuild({primes.begin(), primes.begin() + q}, 300, 0, unsigned(q));
}

TEST(Crt, GreedyCoprimeOddModuliWithComposites) {
  // Pairwise coprime odd numbers taken greedily from 255 down: composites (255 = 3 5 17)
  // beside primes, and the widest product such moduli reach.
  std::vector<std::uint32_t> moduli;
  for (std::uint32_t n = 255; n >= 3 && moduli.size() < 64; n -= 2) {
    bool coprime = true;
    for (auto m : moduli) coprime = coprime && std::gcd(n, m) == 1;
    if (coprime) moduli.push_back(n);
  }
  ASSERT_GE(moduli.size(), 45u);
  check_rebuild(moduli, 500, 0, 7);
}

TEST(Crt, WiderOutputsAreSignExtendedAndNarrowerKeepLowWords) {
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  const std::vector<std::uint32_t> moduli(primes.begin(), primes.begin() + 20);  // P ~ 2^159
  check_rebuild(moduli, 200, 3, 11);
  // Values below 2^63 in magnitude come back whole in one word.
  const std::vector<std::uint32_t> small(primes.begin(), primes.begin() + 7);  // P ~ 2^55
  EXPECT_EQ(crt_limbs(small), 1);
  check_rebuild(small, 200, 0, 12);
}

TEST(Crt, GathersPickRowsAndColumns) {
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  const std::vector<std::uint32_t> moduli(primes.begin(), primes.begin() + 12);
  const std::int64_t rows = 5, ld = 9;  // planes of 5 x 9; the gathers read 3 x 2 of them
  const std::vector<mpz_class> values = test::crt_test_values(moduli, std::size_t(rows * ld), 3);
  const std::size_t stride = std::size_t(rows * ld);
  const std::vector<std::int8_t> planes = test::centred_residues(values, moduli, stride);
  const std::vector<std::int64_t> row_index = {4, 0, 2}, col_index = {6, 1};
  const int limbs = crt_limbs(moduli);
  std::vector<std::uint64_t> out(3 * 4 * limbs, 0);  // 3 x 2 inside ld_out 4
  Context cpu(Backend::cpu);
  CrtProblem p;
  p.rows = 3;
  p.cols = 2;
  p.moduli = moduli;
  p.residues = planes.data();
  p.ld = ld;
  p.plane_stride = std::int64_t(stride);
  p.row_index = row_index.data();
  p.col_index = col_index.data();
  p.out = out.data();
  p.ld_out = 4;
  p.limbs = limbs;
  crt_rebuild(cpu, p);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) {
      const auto want = test::twos_complement_words(values[std::size_t(row_index[r] * ld + col_index[c])], limbs);
      for (int l = 0; l < limbs; ++l) EXPECT_EQ(out[std::size_t((r * 4 + c) * limbs + l)], want[l]);
    }
  EXPECT_EQ(out[std::size_t(2 * limbs)], 0u) << "the padding of ld_out is not written";
}

// The word check fails on each planted fault: the rebuild reading one residue with the wrong
// sign, one as zero (dropped), one off by one; and
// the rebuilt words off by one, negated, or the last entry rebuilt as the one before it.
TEST(Crt, CatchesPlantedFaults) {
  const std::vector<std::uint32_t> primes = test::odd_primes_below_256();
  for (std::size_t q : {std::size_t(1), std::size_t(7), std::size_t(20), std::size_t(53)}) {
    SCOPED_TRACE(std::to_string(q) + " moduli");
    const std::vector<std::uint32_t> moduli(primes.begin(), primes.begin() + q);
    const std::size_t count = 40, stride = count + 3;
    const std::vector<mpz_class> values = test::crt_test_values(moduli, count, unsigned(q));
    const std::vector<std::int8_t> planes = test::centred_residues(values, moduli, stride);
    const int limbs = crt_limbs(moduli);
    std::vector<std::uint64_t> out = rebuild_on_cpu(moduli, planes, count, stride, limbs);
    // Entry 1 is the value 1: every residue 1, so each change of one shows.
    const auto misread = [&](std::function<void(std::vector<std::int8_t>&)> change) {
      return [&, change] {
        std::vector<std::int8_t> bad = planes;
        change(bad);
        const std::vector<std::uint64_t> misrebuilt = rebuild_on_cpu(moduli, bad, count, stride, limbs);
        std::copy(misrebuilt.begin(), misrebuilt.end(), out.begin());  // in place: the harness restores it
      };
    };
    const std::size_t last_plane = (q - 1) * stride;
    std::vector<test::PlantedFault> faults = {
        {"the residue of entry 1 in the last plane with the wrong sign", misread([&](auto& v) { v[last_plane + 1] *= -1; })},
        {"the residue of entry 1 in the first plane dropped", misread([&](auto& v) { v[1] = 0; })},
    };
    if (q > 1)
      faults.push_back({"the residue of entry 1 in plane 1 off by one", misread([&](auto& v) { v[stride + 1] += 1; })});
    for (test::PlantedFault& f : test::limb_table_faults(out.data(), 1, std::int64_t(count), std::int64_t(count), limbs))
      faults.push_back(std::move(f));
    EXPECT_EQ(test::expect_faults_caught(test::output_bytes(out), [&] { return words_match(values, out, limbs); }, faults),
              int(faults.size()));
  }
}

TEST(Crt, InvalidProblemsAreUsageErrors) {
  Context cpu(Backend::cpu);
  std::vector<std::int8_t> planes(16, 0);
  std::vector<std::uint64_t> out(16, 0);
  auto problem = [&](std::vector<std::uint32_t> moduli) {
    CrtProblem p;
    p.rows = 1;
    p.cols = 2;
    p.moduli = std::move(moduli);
    p.residues = planes.data();
    p.ld = 2;
    p.plane_stride = 2;
    p.out = out.data();
    p.ld_out = 2;
    return p;
  };
  auto message = [&](const CrtProblem& p) {
    try {
      crt_rebuild(cpu, p);
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(problem({})).find("between 1 and 53"), std::string::npos);
  EXPECT_NE(message(problem({251, 256})).find("odd"), std::string::npos);
  EXPECT_NE(message(problem({251, 1})).find("[3, 255]"), std::string::npos);
  EXPECT_NE(message(problem({255, 3})).find("share a factor"), std::string::npos);
  CrtProblem narrow = problem({251});
  narrow.ld_out = 1;
  EXPECT_NE(message(narrow).find("ld_out"), std::string::npos);
  CrtProblem no_output = problem({251});
  no_output.out = nullptr;
  EXPECT_NE(message(no_output).find("null"), std::string::npos);
  EXPECT_EQ(crt_limbs({251, 241}), 1);
}

}  // namespace

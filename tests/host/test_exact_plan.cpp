// The host half of the exact integer GEMM: the bound, the number of moduli (the fewest whose
// product exceeds 2 bound + 1, checked against GMP), digit slices, output limbs, and the
// validation of wider integer outputs. No GPU needed.
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <random>

#include "ops/exact/exact_text.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "host/moduli_test_support.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {
namespace {

using test::product_of_first;

mpz_class mpz_of(std::uint64_t x) {
  mpz_class r = static_cast<unsigned long>(x >> 32);
  r <<= 32;
  r += static_cast<unsigned long>(x & 0xffffffffu);
  return r;
}

TEST(ExactPlan, FewestModuliWhoseProductExceedsTwiceTheBound) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 2000; ++trial) {
    // Magnitudes of every size from 1 bit to 64, and k up to 16 times the int8 limit (beyond
    // it the modular GEMMs run in chunks).
    const std::uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    const std::int64_t k = std::int64_t(rng() % std::uint64_t(16 * int8_k_limit())) + 1;
    const ExactPlan plan = plan_exact_gemm(a, b, k, /*digits_allowed=*/false);
    const mpz_class bound = mpz_of(a) * mpz_of(b) * mpz_class(static_cast<unsigned long>(k));
    ASSERT_EQ(plan.bound, bound.get_str()) << a << " " << b << " " << k;
    if (bound == 0) {
      EXPECT_EQ(plan.method, ExactPlan::Method::zero);
      continue;
    }
    ASSERT_EQ(plan.method, ExactPlan::Method::residues);
    const mpz_class needed = 2 * bound + 1;
    EXPECT_GT(product_of_first(plan.moduli), needed) << plan.describe();
    EXPECT_LE(product_of_first(plan.moduli - 1), needed) << plan.describe();
    EXPECT_EQ(plan.gemms, plan.moduli);
    // The limbs hold (-P/2, P/2): P/2 < 2^(64 limbs - 1).
    EXPECT_LT(mpz_sizeinbase(mpz_class(product_of_first(plan.moduli) / 2).get_mpz_t(), 2), std::size_t(64 * plan.limbs));
  }
}

TEST(ExactPlan, TheIssuesShapes) {
  // i32 at 8192^3 (|a|, |b| <= 2^31): 2^75, 10 primes (79 bits), two words.
  const ExactPlan i32 = worst_case_exact_plan(DType::i32, 8192);
  EXPECT_EQ(i32.method, ExactPlan::Method::residues);
  EXPECT_EQ(i32.moduli, 10);
  EXPECT_EQ(i32.limbs, 2);
  EXPECT_EQ(i32.bound, "37778931862957161709568");
  // i64 (2^63) at k = 4096 and at the limit: 19 primes, three words.
  EXPECT_EQ(worst_case_exact_plan(DType::i64, 4096).moduli, 19);
  EXPECT_EQ(worst_case_exact_plan(DType::i64, int8_k_limit()).moduli, 19);
  EXPECT_EQ(worst_case_exact_plan(DType::i64, int8_k_limit()).limbs, 3);
  // 63-bit inputs at k = 1: 2^124 < P / 2 takes 17 primes (131 bits).
  EXPECT_EQ(plan_exact_gemm(std::uint64_t(1) << 62, std::uint64_t(1) << 62, 1, false).moduli, 17);
  EXPECT_NE(i32.describe().find("residues mod 10 int8 primes"), std::string::npos) << i32.describe();
}

TEST(ExactPlan, ZeroProductsRunNoGemm) {
  EXPECT_EQ(plan_exact_gemm(0, 5, 10).method, ExactPlan::Method::zero);
  EXPECT_EQ(plan_exact_gemm(7, 0, 10).method, ExactPlan::Method::zero);
  EXPECT_EQ(plan_exact_gemm(7, 5, 0).method, ExactPlan::Method::zero);
  EXPECT_EQ(plan_exact_gemm(7, 5, 0).gemms, 0);
}

TEST(ExactPlan, DigitSlicesWhenThoseTakeFewerGemms) {
  // |a|, |b| <= 127 at k = 1000: one int8 GEMM of the values themselves, against 4 primes.
  const ExactPlan small = plan_exact_gemm(127, 127, 1000);
  EXPECT_EQ(small.method, ExactPlan::Method::digits);
  EXPECT_EQ(small.gemms, 1);
  EXPECT_EQ(plan_exact_gemm(127, 127, 1000, false).moduli, 4);
  // 128 needs a second balanced digit (127 + 256 * 0 cannot reach it): 2 x 1 < 4.
  EXPECT_EQ(plan_exact_gemm(128, 127, 1000).digits_a, 2);
  EXPECT_EQ(plan_exact_gemm(128, 127, 1000).gemms, 2);
  // 16-bit entries: 3 x 3 digits (9 GEMMs) against 6 primes: residues.
  EXPECT_EQ(plan_exact_gemm(40000, 40000, 4096).method, ExactPlan::Method::residues);
  // Full-range i32 entries: residues (16 or 25 digit pairs against 10 primes).
  EXPECT_EQ(plan_exact_gemm(std::uint64_t(1) << 31, std::uint64_t(1) << 31, 8192).method,
            ExactPlan::Method::residues);
}

TEST(ExactPlan, RefusesWhatTheModuliCannotCover) {
  EXPECT_THROW(plan_exact_gemm(3, 3, -1), Error);
  EXPECT_THROW(worst_case_exact_plan(DType::f32, 10), Error);
  // No k is too long now (the modular GEMMs run in chunks): the widest bound of all,
  // (2^64 - 1)^2 (2^63 - 1) < 2^191, is still covered by a prefix of the primes.
  const ExactPlan widest = plan_exact_gemm(~std::uint64_t{0}, ~std::uint64_t{0}, INT64_MAX);
  EXPECT_EQ(widest.method, ExactPlan::Method::residues);
  EXPECT_GT(product_of_first(widest.moduli),
            2 * mpz_of(~std::uint64_t{0}) * mpz_of(~std::uint64_t{0}) * mpz_of(std::uint64_t(INT64_MAX)) + 1);
  // Digit slices only while their int32 sums hold: never past the int8 limit's k.
  EXPECT_EQ(plan_exact_gemm(3, 3, int8_k_limit() + 1).method, ExactPlan::Method::residues);
}

GemmProblem integer_problem(DType dtype, double alpha = 1, double beta = 0) {
  static std::int64_t storage[64];
  GemmProblem p;
  p.dtype = dtype;
  p.m = 3, p.n = 4, p.k = 5;
  p.a = storage, p.lda = 5;
  p.b = storage, p.ldb = 4;
  p.c = storage, p.ldc = 4;
  p.alpha = alpha, p.beta = beta;
  return p;
}

TEST(ExactPlan, OutputLimbsCoverAlphaAndBeta) {
  // i32, k = 5: |AB| <= 2^62 5 takes 9 primes (71 bits), two words.
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i32)), 2);
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i32, 3)), 3);
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i32, 1, 1)), 3);
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i64)), 3);
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i64, -1)), 3);
  EXPECT_EQ(exact_output_limbs(integer_problem(DType::i64, 1, -2)), 4);
}

TEST(ExactValidation, I64OutputOnlyForI32Inputs) {
  GemmProblem p = integer_problem(DType::i32);
  p.out_dtype = DType::i64;
  EXPECT_NO_THROW(validate(p));
  p.dtype = DType::i64;
  p.out_dtype = DType::i32;  // narrower: never
  EXPECT_THROW(validate(p), Error);
  p.dtype = DType::f32;
  p.out_dtype = DType::i64;
  EXPECT_THROW(validate(p), Error);
  p.dtype = DType::i32;
  p.out_dtype = DType::f64;
  EXPECT_THROW(validate(p), Error);
}

// i32 inputs with C in i64: cpu_blocked writes it (widening as it packs); the other CPU
// kernels refuse it clearly, and auto takes cpu_blocked.
TEST(ExactValidation, CpuKernelsWithoutWiderOutputsRefuseThemClearly) {
  GemmProblem p = integer_problem(DType::i32);
  p.out_dtype = DType::i64;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu)) {
    if (!e->supports(DType::i32)) continue;
    const auto why = e->rejects(p);
    if (e->wider_integer_output) {
      EXPECT_FALSE(why.has_value()) << e->name << ": " << *why;
      continue;
    }
    ASSERT_TRUE(why.has_value()) << e->name;
    EXPECT_NE(why->find("C in i64"), std::string::npos) << *why;
  }
  Context cpu(Backend::cpu);
  EXPECT_EQ(choose_gemm_kernel(cpu, p).name, "cpu_blocked");
}

}  // namespace
}  // namespace gemmkit

namespace gemmkit {
namespace {

// Two's complement words of an mpz value.
std::vector<std::uint64_t> words_of(mpz_class v, int limbs) {
  mpz_class m = 1;
  m <<= 64 * limbs;
  if (v < 0) v += m;
  std::vector<std::uint64_t> w(std::size_t(limbs), 0);
  for (int i = 0; i < limbs; ++i) {
    const mpz_class low = v & mpz_class("18446744073709551615");
    w[std::size_t(i)] = std::uint64_t(mpz_get_ui(mpz_class(low >> 32).get_mpz_t())) << 32 |
                        std::uint64_t(mpz_get_ui(mpz_class(low & 0xffffffffu).get_mpz_t()));
    v >>= 64;
  }
  return w;
}

TEST(ExactText, ValuesOfOverflowMessagesAgainstGmp) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    const int limbs = 1 + int(rng() % 4);
    mpz_class x = 0;
    for (int i = 0; i < limbs; ++i) x = (x << 64) + mpz_of(rng());
    x >>= 1 + int(rng() % 8);  // keep the sign bit free
    if (rng() % 2) x = -x;
    const std::int64_t alpha = std::int64_t(rng() >> 11) * (rng() % 2 ? -1 : 1);
    const std::int64_t beta = trial % 3 ? std::int64_t(rng() >> 12) * (rng() % 2 ? -1 : 1) : 0;
    const std::int64_t c0 = std::int64_t(rng());
    const std::vector<std::uint64_t> w = words_of(x, limbs);
    const mpz_class want = x * mpz_class(std::to_string(alpha)) + mpz_class(std::to_string(beta)) * mpz_class(std::to_string(c0));
    EXPECT_EQ(detail::exact_value_text(w.data(), limbs, alpha, beta, c0), want.get_str()) << trial;
  }
  EXPECT_EQ(detail::exact_value_text(nullptr, 0, 1, -3, 5), "-15");
}

TEST(ExactVerify, LimbsPassWhenExactAndFailWhenOneEntryIsOff) {
  // A 9 x 7 x 5 i64 problem with entries near 2^62: results beyond 128 bits.
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> a(9 * 5), b(5 * 7), c0(9 * 7);
  for (auto& x : a) x = std::int64_t(rng() >> 1) * (rng() % 2 ? -1 : 1);
  for (auto& x : b) x = std::int64_t(rng() >> 1) * (rng() % 2 ? -1 : 1);
  for (auto& x : c0) x = std::int64_t(rng());
  GemmProblem p;
  p.dtype = DType::i64;
  p.m = 9, p.n = 7, p.k = 5, p.a = a.data(), p.lda = 5, p.b = b.data(), p.ldb = 7, p.c = c0.data(), p.ldc = 7;
  p.alpha = -3, p.beta = 2;
  const int limbs = exact_output_limbs(p);
  std::vector<std::uint64_t> words;
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 7; ++j) {
      mpz_class s = 0;
      for (std::int64_t l = 0; l < 5; ++l)
        s += mpz_class(std::to_string(a[std::size_t(i * 5 + l)])) * mpz_class(std::to_string(b[std::size_t(l * 7 + j)]));
      s = s * -3 + mpz_class(std::to_string(c0[std::size_t(i * 7 + j)])) * 2;
      for (std::uint64_t w : words_of(s, limbs)) words.push_back(w);
    }
  EXPECT_TRUE(verify_limbs(p, c0.data(), words.data(), 7, limbs).passed);
  words[std::size_t((4 * 7 + 3) * limbs + 1)] ^= 1;  // entry (4, 3) off by 2^64
  const VerifyResult r = verify_limbs(p, c0.data(), words.data(), 7, limbs);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("row 4"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace gemmkit

// The verification oracle: modes, tolerances, the references, error norms, and verify()
// catching what it must (one wrong entry, NaN, an off-by-one integer, overflow) without
// crying wolf (correct results, cancellation).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#include "test_support.hpp"

namespace gemmkit {
namespace {

using test::ProblemSpec;
using test::TestProblem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `call` fails with a usage error whose message names every one of `parts`.
void expect_usage_error(const std::function<void()>& call, const std::vector<std::string>& parts = {}) {
  try {
    call();
    ADD_FAILURE() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    for (const std::string& part : parts) EXPECT_TRUE(contains(e.what(), part)) << e.what();
  }
}

ProblemSpec square(DType dtype, std::int64_t size) {
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.m = spec.n = spec.k = size;
  spec.seed = 77;
  return spec;
}

// A problem whose C holds cpu_blocked's (correct) result.
TestProblem computed(ProblemSpec spec) {
  TestProblem t(spec);
  gemm_registry().get("cpu_blocked").run(t.problem(), test::cpu_launch());
  return t;
}

// The (row, col) of the entry of largest magnitude of C.
template <class T>
std::pair<std::int64_t, std::int64_t> largest_entry(Matrix<T>& c) {
  std::pair<std::int64_t, std::int64_t> at{0, 0};
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j)
      if (std::fabs(c(i, j)) > std::fabs(c(at.first, at.second))) at = {i, j};
  return at;
}

TEST(VerifyMode, ParsesAndNamesEveryMode) {
  for (VerifyMode mode :
       {VerifyMode::none, VerifyMode::automatic, VerifyMode::full, VerifyMode::freivalds})
    EXPECT_EQ(parse_verify_mode(verify_mode_name(mode)), mode);
  EXPECT_EQ(parse_verify_mode("auto"), VerifyMode::automatic);
}

TEST(VerifyMode, RejectsUnknownModes) {
  expect_usage_error([] { parse_verify_mode("fast"); }, {"'fast'", "freivalds"});
}

TEST(Tolerance, PerDtypeGrowingLikeSqrtKPast1024) {
  EXPECT_DOUBLE_EQ(tolerance(DType::f64, 1), 1e-12);
  EXPECT_DOUBLE_EQ(tolerance(DType::f32, 0), 1e-5);
  EXPECT_DOUBLE_EQ(tolerance(DType::f32, 1024), 1e-5);
  EXPECT_DOUBLE_EQ(tolerance(DType::f32, 4096), 2e-5);
  EXPECT_DOUBLE_EQ(tolerance(DType::tf32, 100), 2e-3);
  EXPECT_DOUBLE_EQ(tolerance(DType::f16, 1024 * 9), 3e-2);
  EXPECT_DOUBLE_EQ(tolerance(DType::bf16, 512), 1e-2);
  EXPECT_DOUBLE_EQ(tolerance(DType::f64, 1024 * 16), 4e-12);
  for (DType d : {DType::i8, DType::i32, DType::i64}) EXPECT_EQ(tolerance(d, 1 << 20), 0.0);
}

// op(A) = [[1, 2, 3], [4, 5, 6]] stored transposed with ld 4, op(B) = [[1, 0], [0, 1], [1, 1]]
// with ld 3: op(A) op(B) = [[4, 5], [10, 11]]; alpha 2, beta -1, C0 = [[1, 2], [3, 4]].
template <class T>
void check_hand_computed() {
  const T a[] = {1, 4, 99, 99, 2, 5, 99, 99, 3, 6, 99, 99};
  const T b[] = {1, 0, 99, 0, 1, 99, 1, 1, 99};
  const T c0[] = {1, 2, 99, 3, 4, 99};
  T c[6] = {};
  GemmProblem p;
  p.dtype = dtype_of<T>;
  p.trans_a = true;
  p.m = 2, p.n = 2, p.k = 3;
  p.a = a, p.lda = 4, p.b = b, p.ldb = 3, p.c = c, p.ldc = 3;
  p.alpha = 2, p.beta = -1;
  EXPECT_EQ(reference_gemm(p, c0), (std::vector<double>{7, 8, 17, 18}));
  if constexpr (std::is_integral_v<T>) {
    EXPECT_EQ(reference_gemm_exact(p, c0), (std::vector<int128_t>{7, 8, 17, 18}));
  }
}

TEST(VerifyReference, HandComputedWithTransposePaddingAlphaBeta) {
  check_hand_computed<double>();
  check_hand_computed<float>();
  check_hand_computed<std::int32_t>();
  check_hand_computed<std::int64_t>();
}

TEST(VerifyReference, ReadsHalfBfloat16AndInt8Storage) {
  GemmProblem p;
  p.m = 1, p.n = 1, p.k = 2;
  p.lda = 2, p.ldb = 1, p.ldc = 1;
  std::uint16_t c16 = 0;
  // f16: [1, -2] . [0.5, 2^-24 (the smallest subnormal)]
  const std::uint16_t ha[] = {0x3C00, 0xC000}, hb[] = {0x3800, 0x0001};
  p.dtype = DType::f16, p.a = ha, p.b = hb, p.c = &c16;
  EXPECT_EQ(reference_gemm(p, nullptr)[0], 0.5 - std::ldexp(1.0, -23));
  // bf16: [1, 3] . [2, -1]
  const std::uint16_t ba[] = {0x3F80, 0x4040}, bb[] = {0x4000, 0xBF80};
  p.dtype = DType::bf16, p.a = ba, p.b = bb;
  EXPECT_EQ(reference_gemm(p, nullptr)[0], -1.0);
  // i8 (C in i32): [-128, 127] . [127, 127], exactly -127
  const std::int8_t ia[] = {-128, 127}, ib[] = {127, 127};
  std::int32_t c32 = 0;
  p.dtype = DType::i8, p.out_dtype = DType::i32, p.a = ia, p.b = ib, p.c = &c32;
  EXPECT_EQ(reference_gemm(p, nullptr)[0], -127.0);
  EXPECT_EQ(reference_gemm_exact(p, nullptr)[0], -127);
}

TEST(VerifyReference, ExactSurvivesProductsBeyondInt64) {
  // [2^62, 2^62] . [4, -3] = 2^64 - 3 * 2^62 = 2^62: both products overflow int64.
  const std::int64_t a[] = {std::int64_t{1} << 62, std::int64_t{1} << 62}, b[] = {4, -3};
  std::int64_t c = 0;
  GemmProblem p;
  p.dtype = DType::i64;
  p.m = 1, p.n = 1, p.k = 2;
  p.a = a, p.lda = 2, p.b = b, p.ldb = 1, p.c = &c, p.ldc = 1;
  EXPECT_EQ(reference_gemm_exact(p, nullptr)[0], int128_t{1} << 62);
}

TEST(VerifyReference, ExactReportsOverflowOf128Bits) {
  const std::int64_t a[] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  std::int64_t c = 0;
  GemmProblem p;
  p.dtype = DType::i64;
  p.m = 1, p.n = 1, p.k = 4;  // 4 (2^63 - 1)^2 > 2^127
  p.a = a, p.lda = 4, p.b = a, p.ldb = 1, p.c = &c, p.ldc = 1;
  try {
    reference_gemm_exact(p, nullptr);
    FAIL() << "expected a numeric error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_TRUE(contains(e.what(), "(0, 0)")) << e.what();
  }
  const VerifyResult r = verify(p, nullptr, VerifyMode::full);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "overflow")) << r.detail;
}

TEST(VerifyReference, ExactRejectsFloatDtypes) {
  TestProblem t(square(DType::f32, 2));
  expect_usage_error([&] { reference_gemm_exact(t.problem(), nullptr); });
}

TEST(VerifyReference, BetaNeedsTheOriginalC) {
  ProblemSpec spec = square(DType::f64, 3);
  spec.beta = 1;
  TestProblem t(spec);
  EXPECT_THROW(reference_gemm(t.problem(), nullptr), Error);
  EXPECT_THROW(verify(t.problem(), nullptr, VerifyMode::full), Error);
}

TEST(VerifyFrobenius, RelativeAbsoluteAndNonFinite) {
  // got (2x2, ld 3) against ref: difference (0, 0, 0, 1), |ref| = sqrt(1 + 4 + 9 + 16).
  const float got[] = {1, 2, kNaN, 3, 5, kNaN};
  EXPECT_DOUBLE_EQ(relative_frobenius_error(DType::f32, got, 2, 2, 3, {1, 2, 3, 4}),
                   1 / std::sqrt(30.0));
  // A zero reference: the absolute error.
  const double g2[] = {3, 4};
  EXPECT_DOUBLE_EQ(relative_frobenius_error(DType::f64, g2, 1, 2, 2, {0, 0}), 5.0);
  // NaN or Inf where the reference has none: NaN. The same NaN or Inf on both sides: fine.
  const double g3[] = {kNaN, 1};
  EXPECT_TRUE(std::isnan(relative_frobenius_error(DType::f64, g3, 1, 2, 2, {0, 1})));
  EXPECT_EQ(relative_frobenius_error(DType::f64, g3, 1, 2, 2, {kNaN, 1}), 0.0);
  const double g4[] = {kInf, 1};
  EXPECT_TRUE(std::isnan(relative_frobenius_error(DType::f64, g4, 1, 2, 2, {1e300, 1})));
  EXPECT_EQ(relative_frobenius_error(DType::f64, g4, 1, 2, 2, {kInf, 1}), 0.0);
  // Huge values do not overflow the norms.
  const double g5[] = {1e300, 2e300};
  EXPECT_NEAR(relative_frobenius_error(DType::f64, g5, 1, 2, 2, {1e300, 1e300}),
              1 / std::sqrt(2.0), 1e-15);
  // Integers too.
  const std::int32_t g6[] = {1, 2};
  EXPECT_DOUBLE_EQ(relative_frobenius_error(DType::i32, g6, 1, 2, 2, {1, 2}), 0.0);
  EXPECT_THROW(relative_frobenius_error(DType::f64, g5, 1, 2, 2, {1, 2, 3}), Error);
}

TEST(Verify, CorrectResultsPassFullAndFreivalds) {
  for (DType dtype : {DType::f32, DType::f64}) {
    ProblemSpec spec = square(dtype, 200);
    spec.k = 230, spec.trans_b = true, spec.alpha = 1.5, spec.beta = 0.5, spec.pad = 3;
    TestProblem t = computed(spec);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds, VerifyMode::automatic}) {
      const VerifyResult r = verify(t.problem(), t.c_before(), mode);
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::string(verify_mode_name(mode)));
      EXPECT_TRUE(r.passed) << r.detail;
      EXPECT_EQ(r.method, mode == VerifyMode::freivalds ? VerifyMode::freivalds : VerifyMode::full);
      EXPECT_LE(r.error, r.tolerance);
      EXPECT_EQ(r.tolerance, tolerance(dtype, spec.k));
      EXPECT_TRUE(r.detail.empty()) << r.detail;
    }
  }
}

TEST(Verify, AlphaZeroReadsNeitherANorB) {
  // The BLAS convention, which cpu_blocked follows: with alpha == 0, C = beta C0 even if A
  // holds NaN.
  ProblemSpec spec = square(DType::f64, 30);
  spec.alpha = 0, spec.beta = 2;
  TestProblem t(spec);
  t.op_a<double>(3, 4) = kNaN;
  gemm_registry().get("cpu_blocked").run(t.problem(), test::cpu_launch());
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(t.problem(), t.c_before(), mode);
    EXPECT_TRUE(r.passed) << verify_mode_name(mode) << ": " << r.detail;
  }
}

TEST(Verify, OneCorruptedEntryFailsFullAndFreivalds) {
  TestProblem t = computed(square(DType::f32, 200));
  Matrix<float>& c = t.c<float>();
  const auto [i, j] = largest_entry(c);
  const float right = c(i, j);
  const std::string at = "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
  c(i, j) = right * 1.001f;  // a relative error of 1e-3 in one entry of 40000
  const VerifyResult full = verify(t.problem(), nullptr, VerifyMode::full);
  EXPECT_FALSE(full.passed);
  EXPECT_TRUE(contains(full.detail, at)) << full.detail;
  const VerifyResult freivalds = verify(t.problem(), nullptr, VerifyMode::freivalds);
  EXPECT_FALSE(freivalds.passed);
  EXPECT_GT(freivalds.error, freivalds.tolerance);
  EXPECT_TRUE(contains(freivalds.detail, "row " + std::to_string(i))) << freivalds.detail;
  // 1e-4 is lost in the Frobenius norm of the whole result, but not in the entry's own bound.
  c(i, j) = right * 1.0001f;
  const VerifyResult slight = verify(t.problem(), nullptr, VerifyMode::full);
  EXPECT_LE(slight.error, slight.tolerance);
  EXPECT_FALSE(slight.passed);
  EXPECT_TRUE(contains(slight.detail, at)) << slight.detail;
}

TEST(Verify, OneMissingProductTermFails) {
  // What an off-by-one loop bound does: entry (7, 11) lacks the k-1 term of its sum.
  ProblemSpec spec = square(DType::f64, 150);
  spec.distribution = Distribution::parse("uniform:0.5:1");  // no tiny terms
  TestProblem t = computed(spec);
  t.c<double>()(7, 11) -= t.op_a<double>(7, 149) * t.op_b<double>(149, 11);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(t.problem(), nullptr, mode);
    EXPECT_FALSE(r.passed) << verify_mode_name(mode);
  }
}

TEST(Verify, NaNOrInfInTheResultFails) {
  for (double bad : {kNaN, kInf}) {
    TestProblem t = computed(square(DType::f32, 40));
    t.c<float>()(13, 29) = static_cast<float>(bad);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
      const VerifyResult r = verify(t.problem(), nullptr, mode);
      EXPECT_FALSE(r.passed) << verify_mode_name(mode);
      EXPECT_TRUE(contains(r.detail, "(13, 29)")) << r.detail;
    }
  }
}

// op(A) = [Y, -Y], op(B) = [X; s X]: with s near 1, C is small beside |A| |B|.
TestProblem cancelling(float s) {
  ProblemSpec spec;
  spec.dtype = DType::f32;
  spec.m = 90, spec.n = 80, spec.k = 2 * 60;
  TestProblem t(spec);
  for (std::int64_t q = 0; q < 60; ++q) {
    for (std::int64_t i = 0; i < spec.m; ++i) t.op_a<float>(i, q + 60) = -t.op_a<float>(i, q);
    for (std::int64_t j = 0; j < spec.n; ++j) t.op_b<float>(q + 60, j) = t.op_b<float>(q, j) * s;
  }
  gemm_registry().get("cpu_blocked").run(t.problem(), test::cpu_launch());
  return t;
}

TEST(Verify, FullAndFreivaldsAgreeUnderCancellation) {
  // C = -0.5 Y X: mild cancellation, a correct f32 product passes both.
  TestProblem mild = cancelling(1.5f);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(mild.problem(), nullptr, mode);
    EXPECT_TRUE(r.passed) << verify_mode_name(mode) << ": " << r.detail;
    EXPECT_GT(r.error, 0.0);
  }
  // C = -1e-4 Y X: the f32 rounding of |A| |B| is ~1e-3 of C, far past the tolerance. Both
  // checks measure the error against the exact product, so both fail, and both say that
  // the result is as close as f32 rounding allows (a small backward error): the problem is
  // ill-conditioned, not the kernel wrong.
  TestProblem severe = cancelling(1.0001f);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(severe.problem(), nullptr, mode);
    EXPECT_FALSE(r.passed) << verify_mode_name(mode);
    EXPECT_TRUE(contains(r.detail, "ill-conditioned")) << r.detail;
    EXPECT_LT(r.backward_error, 122 * 0x1p-24) << r.detail;
    EXPECT_TRUE(r.within_rounding) << r.detail;
  }
  // A wrong entry is not within rounding, however ill-conditioned the rest.
  severe.c<float>()(3, 4) += 1.0f;
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(severe.problem(), nullptr, mode);
    EXPECT_FALSE(r.passed) << verify_mode_name(mode);
    EXPECT_FALSE(r.within_rounding) << verify_mode_name(mode) << ": " << r.detail;
  }
}

TEST(Verify, IntegerOffByOneNamesTheEntry) {
  for (DType dtype : {DType::i32, DType::i64}) {
    ProblemSpec spec = square(dtype, 40);
    spec.m = 50, spec.k = 30, spec.beta = -2;
    TestProblem t = computed(spec);
    EXPECT_TRUE(verify(t.problem(), t.c_before(), VerifyMode::full).passed);
    if (dtype == DType::i32) t.c<std::int32_t>()(17, 23) += 1;
    else t.c<std::int64_t>()(17, 23) += 1;
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::automatic}) {
      const VerifyResult r = verify(t.problem(), t.c_before(), mode);
      EXPECT_FALSE(r.passed);
      EXPECT_EQ(r.method, VerifyMode::full);
      EXPECT_EQ(r.tolerance, 0.0);
      EXPECT_GT(r.error, 0.0);
      EXPECT_TRUE(contains(r.detail, "(17, 23)")) << r.detail;
      EXPECT_TRUE(contains(r.detail, "1 of 2000")) << r.detail;
    }
    // Integers are always checked exactly: freivalds is the exact modular one for them.
    for (VerifyMode mode : {VerifyMode::freivalds, VerifyMode::exact}) {
      const VerifyResult r = verify(t.problem(), t.c_before(), mode);
      EXPECT_FALSE(r.passed);
      EXPECT_EQ(r.method, VerifyMode::exact);
      EXPECT_TRUE(contains(r.detail, "entry (17, 23) is")) << r.detail;
      EXPECT_TRUE(contains(r.detail, "1 of 50 rows")) << r.detail;
    }
  }
}

TEST(Verify, IntegerOverflowOfTheExactResultIsReported) {
  // Row 1 of C is 2 * 50000^2 = 5e9, beyond i32; row 0 fits. The kernel wraps, as it must.
  ProblemSpec spec;
  spec.dtype = DType::i32;
  spec.m = 2, spec.n = 3, spec.k = 2;
  TestProblem t(spec);
  for (std::int64_t q = 0; q < 2; ++q) {
    t.op_a<std::int32_t>(0, q) = 1;
    t.op_a<std::int32_t>(1, q) = 50000;
    for (std::int64_t j = 0; j < 3; ++j) t.op_b<std::int32_t>(q, j) = 50000;
  }
  gemm_registry().get("cpu_blocked").run(t.problem(), test::cpu_launch());
  const VerifyResult r = verify(t.problem(), nullptr, VerifyMode::automatic);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "overflow")) << r.detail;
  EXPECT_TRUE(contains(r.detail, "(1, 0)")) << r.detail;
  EXPECT_TRUE(contains(r.detail, "5000000000")) << r.detail;
}

TEST(Verify, AutomaticChoosesFreivaldsOrExactPastTheLimit) {
  TestProblem small = computed(square(DType::f32, 10));
  EXPECT_EQ(verify(small.problem(), nullptr, VerifyMode::automatic).method, VerifyMode::full);
  // 2000 x 2000 x 501 > kFullVerifyLimit. A and B hold one nonzero each, so C(0, 0) should
  // be their product; it was never computed, and Freivalds notices in O(mn + mk + kn).
  Matrix<float> a(2000, 501), b(501, 2000), c(2000, 2000);
  a(0, 0) = 0.5f, b(0, 0) = 1;
  const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  ASSERT_GT(p.flops() / 2, kFullVerifyLimit);
  VerifyResult r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_EQ(r.method, VerifyMode::freivalds);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "row 0")) << r.detail;
  c(0, 0) = 0.5f;
  EXPECT_TRUE(verify(p, nullptr, VerifyMode::automatic).passed);
  // Integer inputs whose product f32 holds exactly: the exact modular check, which names
  // the entry.
  a(0, 0) = 3, c(0, 0) = 0;
  r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_EQ(r.method, VerifyMode::exact);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "entry (0, 0) is 0, expected 3")) << r.detail;
  c(0, 0) = 3;
  r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_TRUE(contains(r.guarantee, "every entry equals the exact product")) << r.guarantee;
}

// TF32: an f32 value with its mantissa rounded (to nearest, ties to even) to 10 bits.
float round_to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0xfff + ((bits >> 13) & 1);
  bits &= ~std::uint32_t{0x1fff};
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

TEST(VerifyAccuracy, ToleranceDtypeIsTheLessPreciseOfDataAndAccuracy) {
  EXPECT_EQ(tolerance_dtype(DType::f32, std::nullopt), DType::f32);
  EXPECT_EQ(tolerance_dtype(DType::f32, DType::tf32), DType::tf32);
  EXPECT_EQ(tolerance_dtype(DType::f32, DType::bf16), DType::bf16);
  EXPECT_EQ(tolerance_dtype(DType::f64, DType::f32), DType::f32);
  // Never tighter than the data, and integers stay exact.
  EXPECT_EQ(tolerance_dtype(DType::f32, DType::f64), DType::f32);
  EXPECT_EQ(tolerance_dtype(DType::tf32, DType::f32), DType::tf32);
  EXPECT_EQ(tolerance_dtype(DType::i32, DType::tf32), DType::i32);
  EXPECT_EQ(tolerance_dtype(DType::f32, DType::i8), DType::f32);
}

TEST(VerifyAccuracy, Tf32ResultsPassOnlyWithTheTf32Tolerance) {
  // What cuda_cublas_tf32 computes: f32 inputs rounded to TF32, products summed in (here)
  // double, stored as f32. Its error (~3e-4) is far past the f32 tolerance and within tf32's.
  ProblemSpec spec = square(DType::f32, 160);
  spec.k = 300, spec.trans_a = true, spec.alpha = 1.5, spec.beta = 0.5, spec.pad = 2;
  TestProblem t(spec);
  Matrix<float>& c = t.c<float>();
  for (std::int64_t i = 0; i < spec.m; ++i)
    for (std::int64_t j = 0; j < spec.n; ++j) {
      double sum = 0;
      for (std::int64_t q = 0; q < spec.k; ++q)
        sum += double(round_to_tf32(t.op_a<float>(i, q))) * double(round_to_tf32(t.op_b<float>(q, j)));
      c(i, j) = static_cast<float>(spec.alpha * sum + spec.beta * c(i, j));
    }
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    SCOPED_TRACE(std::string(verify_mode_name(mode)));
    const VerifyResult strict = verify(t.problem(), t.c_before(), mode);
    EXPECT_FALSE(strict.passed);
    EXPECT_EQ(strict.tolerance, tolerance(DType::f32, spec.k));
    const VerifyResult relaxed = verify(t.problem(), t.c_before(), mode, 0x5eed, DType::tf32);
    EXPECT_TRUE(relaxed.passed) << relaxed.detail;
    EXPECT_EQ(relaxed.tolerance, tolerance(DType::tf32, spec.k));
    EXPECT_GT(relaxed.error, tolerance(DType::f32, spec.k));
    // No override at all is the same as none given.
    const VerifyResult same = verify(t.problem(), t.c_before(), mode, 0x5eed, std::nullopt);
    EXPECT_EQ(same.passed, strict.passed);
    EXPECT_EQ(same.tolerance, strict.tolerance);
  }
  // A real error still fails under the tf32 tolerance, and the message names it.
  c(5, 7) += 1.0f;
  const VerifyResult broken = verify(t.problem(), t.c_before(), VerifyMode::full, 0x5eed, DType::tf32);
  EXPECT_FALSE(broken.passed);
  EXPECT_TRUE(contains(broken.detail, "(5, 7)")) << broken.detail;
  c(5, 7) += 100.0f;
  const VerifyResult worse = verify(t.problem(), t.c_before(), VerifyMode::full, 0x5eed, DType::tf32);
  EXPECT_TRUE(contains(worse.detail, "tf32 tolerance")) << worse.detail;
}

TEST(VerifyAccuracy, IntegersStayExactWhateverTheOverride) {
  ProblemSpec spec = square(DType::i32, 12);
  TestProblem t = computed(spec);
  t.c<std::int32_t>()(3, 4) += 1;
  const VerifyResult r = verify(t.problem(), t.c_before(), VerifyMode::full, 0x5eed, DType::tf32);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.tolerance, 0.0);
}

// Issue 39: an empty C has nothing to check, and the check must not walk K (which can be
// 2^63 - 1 for 0 x K times K x 0: VerifyCli.EmptyProductsWithAHugeKEndAtOnce): it passes at
// once, saying why, in every mode.
TEST(Verify, AnEmptyResultPassesAtOnceSayingWhy) {
  const std::int64_t k = 1000000;
  std::vector<double> data(std::size_t(3 * k), 1.0);
  for (const DType dtype : {DType::f64, DType::i64})
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 3}, {3, 0}}) {
      GemmProblem p;
      p.dtype = dtype, p.m = m, p.n = n, p.k = k;
      p.a = data.data(), p.b = data.data();
      p.lda = k, p.ldb = std::max<std::int64_t>(1, n), p.ldc = std::max<std::int64_t>(1, n);
      for (const VerifyMode mode : {VerifyMode::automatic, VerifyMode::full, VerifyMode::freivalds,
                                    VerifyMode::exact}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::to_string(m) + "x" + std::to_string(n) + " " +
                     std::string(verify_mode_name(mode)));
        const VerifyResult r = verify(p, nullptr, mode);
        EXPECT_TRUE(r.passed) << r.detail;
        EXPECT_EQ(r.check, "empty result");
        EXPECT_NE(r.guarantee.find("no entries"), std::string::npos) << r.guarantee;
      }
      EXPECT_EQ(verify(p, nullptr, VerifyMode::none).method, VerifyMode::none);
    }
}

TEST(Verify, NoneChecksNothing) {
  TestProblem t(square(DType::f32, 5));  // C is NaN: never computed
  const VerifyResult r = verify(t.problem(), nullptr, VerifyMode::none);
  EXPECT_EQ(r.method, VerifyMode::none);
  EXPECT_TRUE(r.passed);
}


// ---- The teaching texts' Pascal exercise, and wrong results each check must catch.

// The lower triangular Pascal matrix L (entries binom(i, j)) and its inverse (entries
// (-1)^(i-j) binom(i, j)): L times the inverse is the identity, but the terms of its sums
// reach 3^(n-1), so floating-point products round away from it once n passes 40.
template <class T>
Matrix<T> pascal(std::int64_t n, bool inverse) {
  Matrix<T> m(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    int128_t binomial = 1;  // binom(i, j), exact in 128 bits for i < 120
    for (std::int64_t j = 0; j <= i; ++j) {
      m(i, j) = static_cast<T>(inverse && (i - j) % 2 ? -binomial : binomial);
      binomial = binomial * (i - j) / (j + 1);
    }
  }
  return m;
}

// The CPU kernels that take `dtype`.
std::vector<const KernelEntry*> cpu_kernels(DType dtype) {
  std::vector<const KernelEntry*> kernels;
  GemmProblem p;
  p.dtype = dtype, p.m = p.n = p.k = 4, p.lda = p.ldb = p.ldc = 4;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu))
    if (!e->rejects(p)) kernels.push_back(e);
  return kernels;
}

// Whether C is exactly the exact product of the problem's (stored) A and B.
template <class T>
bool equals_exact_product(const Matrix<T>& a, const Matrix<T>& b, const Matrix<T>& c) {
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      int128_t sum = 0;
      for (std::int64_t q = 0; q < a.cols(); ++q)
        sum += static_cast<int128_t>(static_cast<std::int64_t>(a(i, q))) * static_cast<std::int64_t>(b(q, j));
      if (static_cast<double>(sum) != static_cast<double>(c(i, j)) ||
          (std::fabs(double(c(i, j))) < 0x1p63 && static_cast<int128_t>(c(i, j)) != sum))
        return false;
    }
  return true;
}

TEST(VerifyPascal, N40IsTheIdentityAndVerifiesInF64WithEveryCpuKernel) {
  const Matrix<double> l = pascal<double>(40, false), l_inv = pascal<double>(40, true);
  ASSERT_GE(cpu_kernels(DType::f64).size(), 4u);
  for (const KernelEntry* e : cpu_kernels(DType::f64)) {
    SCOPED_TRACE(e->name);
    Matrix<double> c(40, 40);
    const GemmProblem p = make_problem<double>(l.view(), false, l_inv.view(), false, c.view());
    e->run(p, test::cpu_launch());
    for (std::int64_t i = 0; i < 40; ++i)
      for (std::int64_t j = 0; j < 40; ++j) ASSERT_EQ(c(i, j), i == j ? 1.0 : 0.0) << i << ", " << j;
    // Before the exact reference, the full check summed in double and failed this with 0.84.
    for (VerifyMode mode : {VerifyMode::automatic, VerifyMode::full, VerifyMode::freivalds, VerifyMode::exact}) {
      const VerifyResult r = verify(p, nullptr, mode);
      EXPECT_TRUE(r.passed) << verify_mode_name(mode) << ": " << r.detail;
      EXPECT_EQ(r.error, 0.0) << verify_mode_name(mode);
    }
    const VerifyResult full = verify(p, nullptr, VerifyMode::full);
    EXPECT_EQ(full.check, "full, exact integer reference");
    EXPECT_EQ(full.guarantee, "every entry equals the exact product");
  }
}

TEST(VerifyPascal, N41To60FailEveryCheckOrSayWhyTheyAreRight) {
  for (std::int64_t n = 41; n <= 60; ++n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // From n = 58 the f64 entries themselves are rounded (binom(57, 28) > 2^53): the checks
    // are of the product of the matrices as stored.
    const Matrix<double> l = pascal<double>(n, false), l_inv = pascal<double>(n, true);
    Matrix<double> c(n, n);
    const GemmProblem p = make_problem<double>(l.view(), false, l_inv.view(), false, c.view());
    gemm_registry().get("cpu_blocked").run(p, test::cpu_launch());
    const bool right = equals_exact_product(l, l_inv, c);
    for (VerifyMode mode : {VerifyMode::automatic, VerifyMode::full, VerifyMode::freivalds, VerifyMode::exact}) {
      const VerifyResult r = verify(p, nullptr, mode);
      EXPECT_EQ(r.passed, right) << verify_mode_name(mode) << ": " << r.detail;
      if (r.passed) continue;
      if (mode == VerifyMode::exact) {
        EXPECT_TRUE(contains(r.detail, "entry (")) << r.detail;
      } else {
        // The result is what a correct f64 GEMM can give here; the message says so.
        EXPECT_TRUE(contains(r.detail, "ill-conditioned")) << r.detail;
        EXPECT_TRUE(contains(r.detail, "exceeds the f64 tolerance")) << r.detail;
      }
    }
  }
}

TEST(VerifyPascal, I64IsExactUpToTheLargestNWhoseEntriesFit) {
  // binom(66, 33) < 2^63 < binom(67, 33): n = 67 is the largest whose L fits i64. The
  // wrapping i64 kernels are exact modulo 2^64, and the product fits, so it is exact.
  for (std::int64_t n : {40, 60, 67}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const Matrix<std::int64_t> l = pascal<std::int64_t>(n, false), l_inv = pascal<std::int64_t>(n, true);
    for (const KernelEntry* e : cpu_kernels(DType::i64)) {
      SCOPED_TRACE(e->name);
      Matrix<std::int64_t> c(n, n);
      const GemmProblem p = make_problem<std::int64_t>(l.view(), false, l_inv.view(), false, c.view());
      e->run(p, test::cpu_launch());
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) ASSERT_EQ(c(i, j), i == j ? 1 : 0);
      for (VerifyMode mode : {VerifyMode::none, VerifyMode::full, VerifyMode::exact})
        EXPECT_TRUE(verify(p, nullptr, mode).passed) << verify_mode_name(mode);
    }
  }
}

TEST(VerifyPascal, WrongEntriesAtPascalScaleFailEveryCheck) {
  // The report: 57 wrong entries of up to 1408 where the answer is 0 or 1, which
  // the old Freivalds check passed ("relative error 4.04e-22") beside |A||B| ~ 1e18.
  const Matrix<double> l = pascal<double>(45, false), l_inv = pascal<double>(45, true);
  Matrix<double> c(45, 45);
  for (std::int64_t i = 0; i < 45; ++i) c(i, i) = 1;
  const GemmProblem p = make_problem<double>(l.view(), false, l_inv.view(), false, c.view());
  for (std::int64_t e = 0; e < 57; ++e) c(44 - e % 12, (e * 7) % 45) += double(1408 - 24 * e);
  for (VerifyMode mode : {VerifyMode::automatic, VerifyMode::full, VerifyMode::freivalds, VerifyMode::exact}) {
    const VerifyResult r = verify(p, nullptr, mode);
    EXPECT_FALSE(r.passed) << verify_mode_name(mode);
    EXPECT_FALSE(r.detail.empty()) << verify_mode_name(mode);
  }
}

TEST(Verify, OneWrongEntryFailsEveryMode) {
  // Integer-valued f64 data (the exact reference and the modular check) and fractional
  // data (double-double): one entry off by one unit in its last place but far beyond rounding.
  for (bool integers : {true, false}) {
    SCOPED_TRACE(integers ? "integer-valued" : "fractional");
    ProblemSpec spec = square(DType::f64, 70);
    spec.k = 50, spec.beta = 2, spec.trans_a = true;
    if (integers) spec.distribution = Distribution::parse("ints:-20:20");
    TestProblem t = computed(spec);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds, VerifyMode::automatic})
      EXPECT_TRUE(verify(t.problem(), t.c_before(), mode).passed) << verify_mode_name(mode);
    t.c<double>()(33, 44) += integers ? 1.0 : 1e-6;
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds, VerifyMode::automatic}) {
      const VerifyResult r = verify(t.problem(), t.c_before(), mode);
      EXPECT_FALSE(r.passed) << verify_mode_name(mode);
    }
    if (integers) {
      const VerifyResult r = verify(t.problem(), t.c_before(), VerifyMode::exact);
      EXPECT_FALSE(r.passed);
      EXPECT_TRUE(contains(r.detail, "entry (33, 44)")) << r.detail;
    } else {
      EXPECT_THROW(verify(t.problem(), t.c_before(), VerifyMode::exact), Error);
    }
  }
}

TEST(Verify, ExactRefusesInputsThatAreNotIntegerValued) {
  ProblemSpec spec = square(DType::f64, 6);
  TestProblem t = computed(spec);  // uniform [-1, 1)
  EXPECT_FALSE(integer_valued(t.problem(), nullptr));
  expect_usage_error([&] { verify(t.problem(), nullptr, VerifyMode::exact); }, {"integer-valued"});
  spec.distribution = Distribution::parse("ints:-3:3");
  TestProblem ints = computed(spec);
  EXPECT_TRUE(integer_valued(ints.problem(), nullptr));
  GemmProblem halved = ints.problem();
  halved.alpha = 0.5;  // a fractional alpha makes the product fractional
  EXPECT_FALSE(integer_valued(halved, nullptr));
  EXPECT_TRUE(verify(ints.problem(), nullptr, VerifyMode::exact).passed);
}

TEST(Verify, ExactWorksPastTheFullCheckLimit) {
  // 2000 x 2000 x 600 = 2.4e9 multiply-adds, past kFullVerifyLimit: op(A) has one entry a row
  // (A(i, i mod 600) = i mod 7 - 3), so C is known without a multiply.
  const std::int64_t m = 2000, n = 2000, k = 600;
  Matrix<std::int64_t> a(m, k), b(k, n), c(m, n);
  for (std::int64_t q = 0; q < k; ++q)
    for (std::int64_t j = 0; j < n; ++j) b(q, j) = (q * 31 + j * 17) % 1001 - 500;
  for (std::int64_t i = 0; i < m; ++i) {
    a(i, i % k) = i % 7 - 3;
    for (std::int64_t j = 0; j < n; ++j) c(i, j) = a(i, i % k) * b(i % k, j);
  }
  const GemmProblem p = make_problem<std::int64_t>(a.view(), false, b.view(), false, c.view());
  ASSERT_GT(double(m) * n * k, kFullVerifyLimit);
  for (VerifyMode mode : {VerifyMode::automatic, VerifyMode::exact}) {
    const VerifyResult r = verify(p, nullptr, mode);
    EXPECT_EQ(r.method, VerifyMode::exact);
    EXPECT_TRUE(r.passed) << r.detail;
  }
  c(1234, 567) -= 1;
  const VerifyResult r = verify(p, nullptr, VerifyMode::exact);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "entry (1234, 567) is")) << r.detail;
  // An error that is a multiple of 2^61 - 1 is still seen (by the 2^31 - 1 rounds).
  c(1234, 567) += 1 + ((std::int64_t{1} << 61) - 1);
  EXPECT_FALSE(verify(p, nullptr, VerifyMode::exact).passed);
}

TEST(Verify, WrappedIntegerProductsFailEvenWithNone) {
  // [2^62, 2^62] [1; 1] = 2^63, one past INT64_MAX: the kernel wraps to -2^63.
  const std::int64_t big = std::int64_t{1} << 62;
  Matrix<std::int64_t> a(1, 2), b(2, 1), c(1, 1);
  a(0, 0) = a(0, 1) = big, b(0, 0) = b(1, 0) = 1;
  const GemmProblem p = make_problem<std::int64_t>(a.view(), false, b.view(), false, c.view());
  gemm_registry().get("cpu_blocked").run(p, test::cpu_launch());
  EXPECT_EQ(c(0, 0), INT64_MIN);
  for (VerifyMode mode : {VerifyMode::none, VerifyMode::automatic, VerifyMode::exact}) {
    const VerifyResult r = verify(p, nullptr, mode);
    EXPECT_FALSE(r.passed) << verify_mode_name(mode);
    EXPECT_TRUE(contains(r.detail, "overflow")) << r.detail;
    EXPECT_TRUE(contains(r.detail, "(0, 0) is 9223372036854775808")) << r.detail;
  }
  // Terms beyond the range that cancel: the cheap bound cannot tell, the exact check can.
  b(1, 0) = -1;
  gemm_registry().get("cpu_blocked").run(p, test::cpu_launch());
  EXPECT_TRUE(verify(p, nullptr, VerifyMode::none).passed);
  // i32 likewise.
  Matrix<std::int32_t> a32(1, 2), b32(2, 1), c32(1, 1);
  a32(0, 0) = a32(0, 1) = 1 << 30, b32(0, 0) = b32(1, 0) = 1;
  const GemmProblem p32 = make_problem<std::int32_t>(a32.view(), false, b32.view(), false, c32.view());
  gemm_registry().get("cpu_blocked").run(p32, test::cpu_launch());
  EXPECT_FALSE(verify(p32, nullptr, VerifyMode::none).passed);
  // Floating dtypes are not checked at all with none.
  EXPECT_EQ(verify(TestProblem(square(DType::f32, 3)).problem(), nullptr, VerifyMode::none).check, "");
}

TEST(Verify, FreivaldsSaysWhenItCannotDecide) {
  // [1e30, -1e30, 0.5] . [1, 1, 1] = 0.5 exactly, but the double-double residual of
  // Freivalds' check is only known to about (k u)^2 2e30 ~ 3: too coarse for a 1e-12
  // tolerance. It fails, saying so, rather than passing on noise; the full check decides.
  const double a[] = {1e30, -1e30, 0.5}, b[] = {1, 1, 1};
  double c = 0.5;
  GemmProblem p;
  p.dtype = DType::f64;
  p.m = 1, p.n = 1, p.k = 3;
  p.a = a, p.lda = 3, p.b = b, p.ldb = 1, p.c = &c, p.ldc = 1;
  const VerifyResult freivalds = verify(p, nullptr, VerifyMode::freivalds);
  EXPECT_FALSE(freivalds.passed);
  EXPECT_TRUE(contains(freivalds.detail, "inconclusive")) << freivalds.detail;
  EXPECT_TRUE(verify(p, nullptr, VerifyMode::full).passed);
  c = 0.75;
  EXPECT_FALSE(verify(p, nullptr, VerifyMode::full).passed);
}

TEST(VerifyReference, DoubleDoubleSurvivesCancellation) {
  // [1e16, 1, -1e16] . [1, 1, 1] = 1; a plain double sum gives 0.
  const double a[] = {1e16, 1, -1e16}, b[] = {1, 1, 1};
  double c = 0;
  GemmProblem p;
  p.dtype = DType::f64;
  p.m = 1, p.n = 1, p.k = 3;
  p.a = a, p.lda = 3, p.b = b, p.ldb = 1, p.c = &c, p.ldc = 1;
  EXPECT_EQ(reference_gemm(p, nullptr)[0], 1.0);
  // 0.1 * 3 - 0.3 in exact arithmetic on the doubles is 2.7755575615628914e-17 (Python's
  // fractions); in double it is 5.55e-17.
  const double a2[] = {0.1, -0.3}, b2[] = {3, 1};
  p.k = 2, p.a = a2, p.lda = 2, p.b = b2;
  EXPECT_EQ(reference_gemm(p, nullptr)[0], 2.7755575615628914e-17);
}

// ---- IEEE values: Inf and NaN from the inputs, overflow, subnormals.

// alpha A B + beta C0 (row-major, no transposes) evaluated plainly in double, term by term:
// an IEEE evaluation, exact for the small integers these tests use.
template <class T>
Matrix<double> ieee_product(const Matrix<T>& a, const Matrix<T>& b, const Matrix<T>& c0, double alpha,
                            double beta) {
  Matrix<double> c(a.rows(), b.cols());
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      double sum = 0;
      for (std::int64_t q = 0; q < a.cols(); ++q) sum += double(a(i, q)) * double(b(q, j));
      c(i, j) = alpha * sum + (beta != 0 ? beta * double(c0(i, j)) : 0.0);
    }
  return c;
}

bool same_value(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// 9 x 13 times 13 x 11, integers in [-3, 3] (zeros included; every sum exact in bf16), with
// Inf and NaN where each of IEEE's cases arises: a NaN row of A (4), an Inf in row 2 meeting a
// zero and a nonzero, Infs of both signs in row 6, an Inf in column 9 of B meeting zeros and
// nonzeros of A, -Inf in column 4; and C0 (beta = 2) with NaN at (0, 0), -Inf at (8, 10) and at
// (1, 4), where alpha = -2 turns the column's -Inf into +Inf.
template <class T>
struct IeeeCase {
  Matrix<T> a{9, 13}, b{13, 11}, c0{9, 11}, c{9, 11};
  Matrix<double> expected;
  GemmProblem p;
  IeeeCase() {
    std::mt19937 gen(2024);
    std::uniform_int_distribution<int> value(-3, 3);
    for (std::int64_t i = 0; i < 9; ++i)
      for (std::int64_t q = 0; q < 13; ++q) a(i, q) = T(double(value(gen)));
    for (std::int64_t q = 0; q < 13; ++q)
      for (std::int64_t j = 0; j < 11; ++j) b(q, j) = T(double(value(gen)));
    for (std::int64_t i = 0; i < 9; ++i)
      for (std::int64_t j = 0; j < 11; ++j) c0(i, j) = T(double(value(gen)));
    a(4, 1) = T(kNaN);
    a(2, 5) = T(kInf);
    b(5, 0) = T(0.0), b(5, 1) = T(3.0);  // Inf * 0 and Inf * 3 in row 2
    a(6, 3) = T(-kInf), a(6, 8) = T(kInf);
    b(3, 2) = T(2.0), b(8, 2) = T(1.0);  // -Inf + Inf at (6, 2)
    b(7, 9) = T(kInf);
    a(0, 7) = T(0.0), a(1, 7) = T(2.0);
    b(2, 4) = T(-kInf);
    a(1, 2) = T(1.0);
    c0(0, 0) = T(kNaN), c0(8, 10) = T(-kInf), c0(1, 4) = T(-kInf);
    expected = ieee_product(a, b, c0, -2.0, 2.0);
    for (std::int64_t i = 0; i < 9; ++i)
      for (std::int64_t j = 0; j < 11; ++j) c(i, j) = T(expected(i, j));
    p = make_problem<T>(a.view(), false, b.view(), false, c.view(), -2.0, 2.0);
  }
};

template <class T>
void check_ieee_case() {
  IeeeCase<T> t;
  SCOPED_TRACE(std::string(dtype_name(t.p.dtype)));
  // Every case of the rules occurs.
  EXPECT_TRUE(std::isnan(t.expected(2, 0)) && std::isinf(t.expected(2, 1)));
  EXPECT_TRUE(std::isnan(t.expected(6, 2)) && std::isnan(t.expected(1, 4)) && std::isnan(t.expected(0, 0)));
  EXPECT_TRUE(std::isnan(t.expected(0, 9)) && std::isinf(t.expected(1, 9)));
  EXPECT_EQ(t.expected(8, 10), -kInf);
  const std::vector<double> ref = reference_gemm(t.p, t.c0.data());
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 11; ++j)
      EXPECT_TRUE(same_value(ref[i * 11 + j], t.expected(i, j)))
          << "(" << i << ", " << j << "): " << ref[i * 11 + j] << ", IEEE gives " << t.expected(i, j);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds, VerifyMode::automatic}) {
    const VerifyResult r = verify(t.p, t.c0.data(), mode);
    EXPECT_TRUE(r.passed) << verify_mode_name(mode) << ": " << r.detail;
    EXPECT_TRUE(contains(r.guarantee, "Inf and NaN exactly where IEEE arithmetic puts them")) << r.guarantee;
  }
  // Each non-finite entry is checked as itself, and the finite ones still are: full names the
  // entry, Freivalds too where it is not finite, else its row.
  const auto fails_at = [&](std::int64_t i, std::int64_t j, double wrong, const std::string& freivalds_names) {
    const T right = t.c(i, j);
    t.c(i, j) = T(wrong);
    ASSERT_FALSE(same_value(double(t.c(i, j)), double(right)));
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
      const VerifyResult r = verify(t.p, t.c0.data(), mode);
      EXPECT_FALSE(r.passed) << verify_mode_name(mode) << " with " << wrong << " at (" << i << ", " << j << ")";
      const std::string entry = "entry (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      EXPECT_TRUE(contains(r.detail, mode == VerifyMode::full ? entry : freivalds_names))
          << verify_mode_name(mode) << ": " << r.detail;
    }
    t.c(i, j) = right;
  };
  fails_at(2, 0, kInf, "entry (2, 0) is inf, expected nan");  // NaN expected
  fails_at(2, 1, -t.expected(2, 1), "entry (2, 1)");            // Inf of the other sign
  fails_at(8, 10, 7.0, "entry (8, 10) is 7, expected -inf");     // -Inf expected
  fails_at(3, 3, kNaN, "entry (3, 3) is nan, expected");          // finite expected
  // Finite entries beside those that C0 alone makes non-finite (which Freivalds leaves out of
  // its sums and puts back by hand): the row must still add up.
  fails_at(0, 3, t.expected(0, 3) + 40, "row 0");
  fails_at(8, 2, t.expected(8, 2) - 40, "row 8");
}

TEST(VerifyIeee, InfAndNaNInputsGiveWhatIeeeArithmeticGivesInEveryCheck) {
  // The reference used to turn every Inf into NaN, and Freivalds to reject any Inf or NaN.
  check_ieee_case<double>();
  check_ieee_case<float>();
  check_ieee_case<Half>();
  check_ieee_case<BFloat16>();
}

TEST(VerifyIeee, InfTimesOneIsInf) {
  // The case: "entry (0, 0) is inf, expected -nan".
  for (double inf : {kInf, -kInf}) {
    Matrix<float> a(1, 1), b(1, 1), c(1, 1);
    a(0, 0) = float(inf), b(0, 0) = 1, c(0, 0) = float(inf);
    const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
    EXPECT_EQ(reference_gemm(p, nullptr)[0], inf);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds, VerifyMode::automatic})
      EXPECT_TRUE(verify(p, nullptr, mode).passed) << verify_mode_name(mode) << ": " << verify(p, nullptr, mode).detail;
    c(0, 0) = float(-inf);
    const VerifyResult r = verify(p, nullptr, VerifyMode::full);
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(contains(r.detail, "expected " + std::string(inf > 0 ? "inf" : "-inf"))) << r.detail;
  }
}

TEST(VerifyIeee, AutomaticPastTheLimitPassesProductsWithNaNAndInfInputs) {
  // 2000 x 501 x 2000: past kFullVerifyLimit, so Freivalds. op(A) holds 0.5 at (0, 0) and NaN
  // at (7, 3); B holds 1 at (0, 0) and Inf at (4, 9), which meets only zeros of A: row 7 and
  // column 9 of C are NaN, C(0, 0) is 0.5, the rest 0. Such a product used to fail always.
  Matrix<float> a(2000, 501), b(501, 2000), c(2000, 2000);
  a(0, 0) = 0.5f, b(0, 0) = 1;
  a(7, 3) = std::numeric_limits<float>::quiet_NaN();
  b(4, 9) = std::numeric_limits<float>::infinity();
  c(0, 0) = 0.5f;
  for (std::int64_t j = 0; j < 2000; ++j) c(7, j) = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t i = 0; i < 2000; ++i) c(i, 9) = std::numeric_limits<float>::quiet_NaN();
  const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  ASSERT_GT(p.flops() / 2, kFullVerifyLimit);
  VerifyResult r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_EQ(r.method, VerifyMode::freivalds);
  EXPECT_TRUE(r.passed) << r.detail;
  c(3, 9) = std::numeric_limits<float>::infinity();
  r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "entry (3, 9) is inf, expected nan")) << r.detail;
  c(3, 9) = std::numeric_limits<float>::quiet_NaN();
  c(0, 0) = 0.25f;
  r = verify(p, nullptr, VerifyMode::automatic);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "row 0")) << r.detail;
}

TEST(VerifyIeee, FreivaldsSaysWhenC0sScatteredNaNsCostTooMuchToLeaveOut) {
  // C0 NaN in a checkerboard: no row or column of C is all NaN, so each of the 500000 entries
  // would be taken out of the sums in k = 4001 steps, 2e9 in all: Freivalds says it cannot
  // decide rather than spend a full product's time.
  Matrix<float> a(1000, 4001), b(4001, 1000), c0(1000, 1000), c(1000, 1000);
  a(0, 0) = 1, b(0, 0) = 2;
  for (std::int64_t i = 0; i < 1000; ++i)
    for (std::int64_t j = 0; j < 1000; ++j)
      c0(i, j) = c(i, j) = (i + j) % 2 ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  c(0, 0) = 2;
  const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view(), 1.0, 1.0);
  const VerifyResult r = verify(p, c0.data(), VerifyMode::freivalds);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.detail, "inconclusive: 500000 scattered entries of C0 are Inf or NaN")) << r.detail;
}

TEST(VerifyIeee, AnExactValueBeyondTheDtypeFailsAsAnOverflowNamingIt) {
  // f32: 2^127 * 3 - 5 rounds to Inf, as IEEE has it; the reference says so, and the check
  // fails as an overflow (the result is not the product), naming the exact value.
  {
    Matrix<float> a(1, 2), b(2, 1), c(1, 1);
    a(0, 0) = 0x1p127f, a(0, 1) = -1, b(0, 0) = 3, b(1, 0) = 5;
    c(0, 0) = std::numeric_limits<float>::infinity();
    const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
    EXPECT_EQ(reference_gemm(p, nullptr)[0], kInf);
    char exact[32];
    std::snprintf(exact, sizeof exact, "%.9g", 3 * 0x1p127 - 5);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
      const VerifyResult r = verify(p, nullptr, mode);
      EXPECT_FALSE(r.passed) << verify_mode_name(mode);
      EXPECT_TRUE(contains(r.detail, "numeric overflow: the exact result at (0, 0) is " + std::string(exact) +
                                         ", beyond f32 (largest finite 3.40282347e+38); the result holds inf"))
          << r.detail;
    }
    a(0, 0) = -0x1p127f;
    EXPECT_EQ(reference_gemm(p, nullptr)[0], -kInf);
  }
  // f64 beyond the double range: 1e300 * 1e300 + 1e300 * 2e300 = 3e600 (it was "expected -nan").
  {
    Matrix<double> a(1, 2), b(2, 1), c(1, 1);
    a(0, 0) = a(0, 1) = 1e300, b(0, 0) = 1e300, b(1, 0) = 2e300;
    c(0, 0) = kInf;
    const GemmProblem p = make_problem<double>(a.view(), false, b.view(), false, c.view());
    EXPECT_EQ(reference_gemm(p, nullptr)[0], kInf);
    for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
      const VerifyResult r = verify(p, nullptr, mode);
      EXPECT_FALSE(r.passed);
      EXPECT_TRUE(contains(r.detail, "numeric overflow: the exact result at (0, 0) is 3e+600, beyond f64"))
          << r.detail;
    }
  }
  // Terms past the range that cancel are exact: 1e600 - 1e600 = 0, not NaN. A kernel summing in
  // order gets Inf - Inf = NaN: wrong, and the message says why.
  {
    Matrix<double> a(1, 2), b(2, 1), c(1, 1);
    a(0, 0) = 1e300, a(0, 1) = -0.5e300, b(0, 0) = 1e300, b(1, 0) = 2e300;
    c(0, 0) = 0;
    const GemmProblem p = make_problem<double>(a.view(), false, b.view(), false, c.view());
    EXPECT_EQ(reference_gemm(p, nullptr)[0], 0.0);
    EXPECT_TRUE(verify(p, nullptr, VerifyMode::full).passed) << verify(p, nullptr, VerifyMode::full).detail;
    c(0, 0) = kNaN;
    const VerifyResult r = verify(p, nullptr, VerifyMode::full);
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(contains(r.detail, "entry (0, 0) is nan, expected 0 (its partial sums may reach")) << r.detail;
  }
  // f16: 250 * 262 = 65500 rounds to 65504, fine; 250 * -300 and 300 * 262 = 78600 are beyond f16.
  {
    Matrix<Half> a(1, 1), b(1, 2), c(1, 2);
    a(0, 0) = Half(250.0), b(0, 0) = Half(262.0), b(0, 1) = Half(-300.0);
    c(0, 0) = Half(65504.0), c(0, 1) = Half(-kInf);
    const GemmProblem p = make_problem<Half>(a.view(), false, b.view(), false, c.view());
    EXPECT_EQ(reference_gemm(p, nullptr), (std::vector<double>{65500, -kInf}));
    a(0, 0) = Half(300.0);
    c(0, 0) = Half(kInf);
    const VerifyResult r = verify(p, nullptr, VerifyMode::full);
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(contains(r.detail, "at (0, 0) is 78600, beyond f16 (largest finite 65504)")) << r.detail;
    // Integer-valued: --verify exact names it as an overflow too.
    const VerifyResult exact = verify(p, nullptr, VerifyMode::exact);
    EXPECT_FALSE(exact.passed);
    EXPECT_TRUE(contains(exact.detail, "numeric overflow: the exact result at (0, 0) is 78600, beyond f16")) << exact.detail;
  }
}

TEST(VerifyIeee, ExactRefusesInfAndNaNAndAutoChecksThemInFull) {
  ProblemSpec spec = square(DType::f64, 7);
  spec.distribution = Distribution::parse("ints:-5:5");
  TestProblem t(spec);
  t.op_a<double>(2, 3) = kInf;
  gemm_registry().get("cpu_blocked").run(t.problem(), test::cpu_launch());
  EXPECT_FALSE(integer_valued(t.problem(), nullptr));
  expect_usage_error([&] { verify(t.problem(), nullptr, VerifyMode::exact); }, {"integer-valued"});
  const VerifyResult r = verify(t.problem(), nullptr, VerifyMode::automatic);
  EXPECT_EQ(r.check, "full, double-double reference");
  EXPECT_TRUE(r.passed) << r.detail;
}

// Values of magnitude 2^e, mantissas random in [1, 2) with random signs.
template <class T>
void fill_scaled(Matrix<T>& m, int e, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (std::int64_t i = 0; i < m.rows(); ++i)
    for (std::int64_t j = 0; j < m.cols(); ++j)
      m(i, j) = T(std::ldexp((gen() & 1) ? mantissa(gen) : -mantissa(gen), e));
}

// C = A B in T's own arithmetic (float for Half), then rounded to T: what a kernel does.
template <class T, class Acc>
void multiply_in(const Matrix<T>& a, const Matrix<T>& b, Matrix<T>& c) {
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) {
      Acc sum = 0;
      for (std::int64_t q = 0; q < a.cols(); ++q) sum += Acc(double(a(i, q))) * Acc(double(b(q, j)));
      c(i, j) = T(double(sum));
    }
}

// A correct product of values of magnitude 2^ea and 2^eb passes both checks; one entry off by
// `wrong` (far more than rounding there) fails both.
template <class T, class Acc>
void check_subnormal(int ea, int eb, double wrong, const char* what) {
  SCOPED_TRACE(what);
  Matrix<T> a(20, 30), b(30, 25), c(20, 25);
  fill_scaled(a, ea, 1), fill_scaled(b, eb, 2);
  multiply_in<T, Acc>(a, b, c);
  const GemmProblem p = make_problem<T>(a.view(), false, b.view(), false, c.view());
  EXPECT_GT(std::fabs(double(c(4, 5))), 0.0);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds}) {
    const VerifyResult r = verify(p, nullptr, mode);
    EXPECT_TRUE(r.passed) << verify_mode_name(mode) << ": " << r.detail;
  }
  const T right = c(4, 5);
  c(4, 5) = T(double(right) + wrong);
  ASSERT_EQ(double(c(4, 5)), double(right) + wrong);
  for (VerifyMode mode : {VerifyMode::full, VerifyMode::freivalds})
    EXPECT_FALSE(verify(p, nullptr, mode).passed) << verify_mode_name(mode);
}

TEST(VerifyUnderflow, SubnormalProductsAndResultsWithinRoundingPass) {
  // f64: inputs of 2^-1040 (subnormal) times 2^-2: their squares underflowed to 0, so every
  // bound relative to |a_i| |b_j| was 0 and a rounding of one unit failed.
  check_subnormal<double, double>(-1040, -2, 0x1p-1040, "f64 subnormal inputs");
  // f64 and f32: products below the normal range though the inputs are normal.
  check_subnormal<double, double>(-520, -515, 0x1p-1034, "f64 subnormal products");
  check_subnormal<float, float>(-75, -66, 0x1p-139, "f32 subnormal products");
  check_subnormal<float, float>(-142, 0, 0x1p-139, "f32 subnormal inputs");
  // f16 and bf16: results of a few units of their subnormal range, summed in f32 and rounded
  // once; a one-unit rounding is as close as the dtype gets.
  check_subnormal<Half, float>(-12, -14, 0x1p-19, "f16 subnormal results");
  check_subnormal<BFloat16, float>(-69, -69, 0x1p-128, "bf16 subnormal results");
}

template <class T>
void check_entry_bound_is_as_stated(DType dtype) {
  SCOPED_TRACE(std::string(dtype_name(dtype)));
  TestProblem t = computed(square(dtype, 60));
  const GemmProblem p = t.problem();
  const std::vector<double> ref = reference_gemm(p, nullptr);
  double a_norm = 0, b_norm = 0;
  for (std::int64_t q = 0; q < 60; ++q) {
    a_norm += double(t.op_a<T>(7, q)) * double(t.op_a<T>(7, q));
    b_norm += double(t.op_b<T>(q, 8)) * double(t.op_b<T>(q, 8));
  }
  const double bound = 2 * tolerance(dtype, 60) * std::sqrt(a_norm) * std::sqrt(b_norm);
  for (double factor : {0.98, 1.02}) {
    t.c<T>()(7, 8) = T(ref[7 * 60 + 8] + factor * bound);
    const VerifyResult r = verify(p, nullptr, VerifyMode::full);
    EXPECT_EQ(r.passed, factor < 1) << factor << ": " << r.detail;
    EXPECT_FALSE(contains(r.guarantee, "subnormals")) << r.guarantee;
  }
}

TEST(VerifyUnderflow, TheFloorLoosensNothingForNormalValues) {
  // Data of ordinary size: an entry 2% inside its stated bound 2 t |a_i| |b_j| passes, 2%
  // outside it fails (the floor is about 1e-42 for f32 there, 1e-321 for f64).
  check_entry_bound_is_as_stated<float>(DType::f32);
  check_entry_bound_is_as_stated<double>(DType::f64);
}

}  // namespace
}  // namespace gemmkit

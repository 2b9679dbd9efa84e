// The modular int8 GEMM's host side: its moduli, K limit and problem checks (which run
// before anything touches a device, so they are tested without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "arith/centred_residue.hpp"
#include "arith/splitmix.hpp"
#include "ops/modular/modular_validate.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/modular.hpp"

using namespace gemmkit;

namespace {

// A valid problem of 3 moduli, 5 x 7 x 9, both outputs; pointers are never dereferenced.
ModularGemmProblem valid_problem() {
  static std::int8_t a[3 * 5 * 9], b[3 * 7 * 9], c[3 * 5 * 7], ct[3 * 7 * 5];
  ModularGemmProblem p;
  p.m = 5, p.n = 7, p.k = 9;
  p.moduli = {251, 3, 255};
  p.a = a, p.lda = 9, p.stride_a = 45;
  p.b = b, p.ldb = 9, p.stride_b = 63;
  p.c = c, p.ldc = 7, p.stride_c = 35;
  p.ct = ct, p.ldct = 5, p.stride_ct = 35;
  return p;
}

// validate(p) throws a usage error whose message contains `what`.
void expect_usage_error(const ModularGemmProblem& p, const std::string& what) {
  try {
    validate(p);
    FAIL() << "no error; expected one about " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Modular, ModuliAreTheOddPrimesBelow256LargestFirst) {
  const auto& q = int8_moduli();
  ASSERT_EQ(q.size(), 53u);
  EXPECT_EQ(q.front(), 251u);
  EXPECT_EQ(q.back(), 3u);
  for (std::size_t i = 1; i < q.size(); ++i) EXPECT_LT(q[i], q[i - 1]);
}

TEST(Modular, KLimitIsTheLongestInt32SumOfResidueProducts) {
  const std::int64_t k = int8_k_limit();
  EXPECT_EQ(k, 137438);
  EXPECT_LE(k * 125 * 125, std::int64_t{2147483647});
  EXPECT_GT((k + 1) * 125 * 125, std::int64_t{2147483647});
}

TEST(Modular, AValidProblemPasses) {
  EXPECT_NO_THROW(validate(valid_problem()));
  ModularGemmProblem p = valid_problem();
  p.c = nullptr;  // one output is enough
  EXPECT_NO_THROW(validate(p));
  p = valid_problem();
  p.stride_a = 0, p.stride_b = 0;  // one A and B for every modulus
  EXPECT_NO_THROW(validate(p));
  p = valid_problem();
  p.m = 0, p.a = nullptr;  // empty: nothing is read
  EXPECT_NO_THROW(validate(p));
  p = valid_problem();
  p.k = int8_k_limit(), p.lda = p.ldb = p.k, p.moduli = {251, 3};
  EXPECT_NO_THROW(validate(p));
  p.k = 3 * int8_k_limit() + 5, p.lda = p.ldb = p.k;  // longer than int32 sums hold: chunks
  EXPECT_NO_THROW(validate(p));
}

TEST(Modular, BadProblemsAreUsageErrorsSayingWhat) {
  ModularGemmProblem p = valid_problem();
  p.n = -1;
  expect_usage_error(p, "negative size");
  p = valid_problem();
  p.moduli[1] = 4;
  expect_usage_error(p, "modulus 1 is 4");
  p.moduli[1] = 1;
  expect_usage_error(p, "modulus 1 is 1");
  p.moduli[1] = 257;
  expect_usage_error(p, "odd and in [3, 255]");
  p = valid_problem();
  p.c = p.ct = nullptr;
  expect_usage_error(p, "no output");
  p = valid_problem();
  p.lda = 8;
  expect_usage_error(p, "lda 8 < 9");
  p = valid_problem();
  p.ldb = 0;
  expect_usage_error(p, "ldb 0");
  p = valid_problem();
  p.ldc = 6;
  expect_usage_error(p, "ldc 6 < 7");
  p = valid_problem();
  p.ldct = 4;
  expect_usage_error(p, "ldct 4 < 5");
  p = valid_problem();
  p.stride_b = -1;
  expect_usage_error(p, "stride_b -1 is negative");
  p = valid_problem();
  p.a = nullptr;
  expect_usage_error(p, "A or B is null");
  p = valid_problem();
  p.stride_c = 34;
  expect_usage_error(p, "outputs would overlap");
  p = valid_problem();
  p.stride_ct = 0;
  expect_usage_error(p, "stride_ct 0");
}

TEST(Modular, WorkspaceQueriesCheckTheShapesOnly) {
  ModularGemmProblem p = valid_problem();
  p.a = p.b = nullptr, p.c = p.ct = nullptr;  // sized before anything is allocated
  EXPECT_NO_THROW(detail::validate_modular(p, false));
  EXPECT_THROW(validate(p), Error);
  p.ldct = 4;  // set, so asked for, and too small
  EXPECT_THROW(detail::validate_modular(p, false), Error);
  p = valid_problem();
  p.moduli[0] = 256;
  EXPECT_THROW(detail::validate_modular(p, false), Error);
}

// The registry holds the CPU reference in every build and the two CUDA kernels in CUDA
// builds only; a CPU context's auto choice is the reference.
TEST(Modular, RegistryListsItsKernelsAndAutoOnTheCpuIsTheReference) {
  const auto& r = modular_registry();
  EXPECT_EQ(r.operation(), "modular");
  ASSERT_NE(r.find("cpu_reference"), nullptr);
  EXPECT_EQ(r.find("cuda_modular_fused") != nullptr, cuda_compiled());
  EXPECT_EQ(r.find("cuda_modular_cublas") != nullptr, cuda_compiled());
  Context cpu(Backend::cpu);
  ModularGemmProblem p = valid_problem();
  EXPECT_EQ(modular_gemm_workspace_bytes(cpu, p), 0u);
  try {
    modular_gemm(cpu, p, nullptr, {}, "no_such_kernel");
    FAIL() << "an unknown kernel ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("unknown kernel 'no_such_kernel'"), std::string::npos) << e.what();
  }
  if (cuda_compiled()) {
    try {
      modular_gemm(cpu, p, nullptr, {}, "cuda_modular_cublas");
      FAIL() << "a CUDA kernel ran on the CPU context";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("runs on the cuda backend"), std::string::npos) << e.what();
    }
  }
}

// The CPU reference against sums worked independently (reduced to [0, p) first, then
// centred), for batches with strides, padded rows, a shared B, both outputs, and K = 0.
TEST(Modular, CpuReferenceMatchesIndependentSums) {
  struct Shape {
    std::int64_t m, n, k, pad;
    bool shared_b;
  };
  std::uint64_t seed = 77;
  Context cpu(Backend::cpu);
  for (const Shape s : {Shape{5, 7, 9, 0, false}, Shape{1, 1, 1, 3, true}, Shape{13, 4, 300, 5, true},
                        Shape{3, 6, 0, 0, false}}) {
    const std::vector<std::uint32_t> moduli = {251, 3, 255, 17};
    const std::int64_t nq = std::int64_t(moduli.size()), lda = std::max<std::int64_t>(1, s.k + s.pad),
                       ldb = s.k + s.pad + 1;
    std::vector<std::int8_t> a(std::size_t(nq * s.m * lda + 1)), b(std::size_t(nq * s.n * ldb + 1));
    for (std::int64_t q = 0; q < nq; ++q) {
      const int half = int(moduli[q] - 1) / 2;
      for (std::int64_t i = 0; i < s.m * lda; ++i)
        a[std::size_t(q * s.m * lda + i)] = std::int8_t(int(splitmix64_next(seed) % std::uint64_t(2 * half + 1)) - half);
      for (std::int64_t i = 0; i < s.n * ldb; ++i)
        b[std::size_t(q * s.n * ldb + i)] = std::int8_t(int(splitmix64_next(seed) % std::uint64_t(2 * half + 1)) - half);
    }
    std::vector<std::int8_t> c(std::size_t(nq * s.m * s.n), 99), ct(std::size_t(nq * s.n * s.m), 99);
    ModularGemmProblem p;
    p.m = s.m, p.n = s.n, p.k = s.k, p.moduli = moduli;
    p.a = a.data(), p.lda = lda, p.stride_a = s.m * lda;
    p.b = b.data(), p.ldb = ldb, p.stride_b = s.shared_b ? 0 : s.n * ldb;
    p.c = c.data(), p.ldc = s.n, p.stride_c = s.m * s.n;
    p.ct = ct.data(), p.ldct = s.m, p.stride_ct = s.m * s.n;
    EXPECT_EQ(modular_gemm(cpu, p, nullptr, {}).name, "cpu_reference");
    for (std::int64_t q = 0; q < nq; ++q)
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) {
          const std::int64_t mod = moduli[q];
          std::int64_t r = 0;  // in [0, mod)
          for (std::int64_t t = 0; t < s.k; ++t) {
            const std::int64_t x = a[std::size_t(q * p.stride_a + i * lda + t)];
            const std::int64_t y = b[std::size_t(q * p.stride_b + j * ldb + t)];
            r = ((r + x * y) % mod + mod) % mod;
          }
          const int want = int(r <= mod / 2 ? r : r - mod);
          SCOPED_TRACE("modulus " + std::to_string(mod) + " at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
          EXPECT_EQ(int(c[std::size_t(q * s.m * s.n + i * s.n + j)]), want);
          EXPECT_EQ(int(ct[std::size_t(q * s.m * s.n + j * s.m + i)]), want);
        }
  }
}

// The kernels' division-free centred residue (arith/centred_residue.hpp) against %, for every
// odd modulus up to 255: the int32 extremes, everything near zero, values around multiples
// of p and of 2^31 / p boundaries near both ends, and random sums.
TEST(Modular, CentredResidueEqualsTheRemainderCentred) {
  std::uint64_t seed = 2026;
  for (int p = 3; p <= 255; p += 2) {
    const CentredResidue mod(p);
    const auto expect = [&](std::int64_t x) {
      std::int64_t r = ((x % p) + p) % p;
      if (r > (p - 1) / 2) r -= p;
      ASSERT_EQ(mod(int(x)), r) << "x = " << x << ", p = " << p;
    };
    for (std::int64_t x = -3000; x <= 3000; ++x) expect(x);
    for (std::int64_t edge : {std::int64_t(INT_MIN), std::int64_t(INT_MAX)})
      for (std::int64_t d = 0; d <= 3 * p; ++d) expect(edge < 0 ? edge + d : edge - d);
    for (int i = 0; i < 20000; ++i) {
      const std::int64_t x = std::int32_t(std::uint32_t(splitmix64_next(seed)));
      const std::int64_t near = x / p * p;  // a multiple of p, and its neighbours
      expect(x);
      for (std::int64_t d = -2; d <= 2; ++d)
        if (near + d >= INT_MIN && near + d <= INT_MAX) expect(near + d);
    }
  }
}

// The exact integer GEMM on the GPU (cuda_exact_residues, include/gemmkit/exact.hpp) against
// a 256-bit CPU reference: i32 over the full range (exact as limbs, 75-bit results), i32 into
// i64 and i32 C, i64 with 63-bit inputs, alpha and beta, transposes, both layouts, odd sizes,
// K into the thousands; an entry that does not fit C reported at its position.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "arith/int128.hpp"
#include "fault_injection.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "gemmkit/registry.hpp"
#include "gpu_test_support.hpp"

namespace gemmkit {
namespace {


// 256-bit two's complement, least significant word first: every reference value here fits
// (|alpha| 2^63 2^63 k + |beta| 2^63 < 2^200).
struct Wide {
  std::uint64_t w[4] = {0, 0, 0, 0};
  static Wide of(i128 x) {
    Wide r;
    r.w[0] = std::uint64_t(u128(x));
    r.w[1] = std::uint64_t(u128(x) >> 64);
    r.w[2] = r.w[3] = x < 0 ? ~0ull : 0ull;
    return r;
  }
  void add(const Wide& y) {
    std::uint64_t carry = 0;
    for (int i = 0; i < 4; ++i) {
      const u128 s = u128(w[i]) + y.w[i] + carry;
      w[i] = std::uint64_t(s);
      carry = std::uint64_t(s >> 64);
    }
  }
  void times(std::int64_t s) {  // mod 2^256, exact here
    const bool neg = s < 0;
    const std::uint64_t u = neg ? 0ull - std::uint64_t(s) : std::uint64_t(s);
    std::uint64_t carry = 0;
    for (int i = 0; i < 4; ++i) {
      const u128 t = u128(w[i]) * u + carry;
      w[i] = std::uint64_t(t);
      carry = std::uint64_t(t >> 64);
    }
    if (neg) {
      Wide one = of(1);
      for (auto& x : w) x = ~x;
      add(one);
    }
  }
  bool operator==(const Wide&) const = default;
  // From `limbs` words, sign-extended.
  static Wide of_limbs(const std::uint64_t* x, int limbs) {
    Wide r;
    for (int i = 0; i < 4; ++i) r.w[i] = i < limbs ? x[i] : (std::int64_t(x[limbs - 1]) < 0 ? ~0ull : 0ull);
    return r;
  }
  bool fits_int64() const {
    const std::uint64_t ext = std::int64_t(w[0]) < 0 ? ~0ull : 0ull;
    return w[1] == ext && w[2] == ext && w[3] == ext;
  }
  std::string text() const {
    char s[80];
    std::snprintf(s, sizeof s, "%016llx%016llx%016llx%016llx", (unsigned long long)w[3], (unsigned long long)w[2],
                  (unsigned long long)w[1], (unsigned long long)w[0]);
    return s;
  }
};

// A host problem over owned storage: op(A) m x k, op(B) k x n, C m x n, in `layout`, with
// leading dimensions 3 beyond the stored widths.
template <class T, class CT = T>
struct HostProblem {
  GemmProblem p;
  std::vector<T> a, b;
  std::vector<CT> c, c0;
  bool col = false;

  HostProblem(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, Layout layout) {
    col = layout == Layout::col_major;
    p.dtype = sizeof(T) == 4 ? DType::i32 : DType::i64;
    if (sizeof(CT) != sizeof(T)) p.out_dtype = DType::i64;
    p.m = m, p.n = n, p.k = k, p.trans_a = ta, p.trans_b = tb, p.layout = layout;
    // Stored "outer" x "inner" with inner contiguous: op(A)(i, l) at a[l * lda + i] when
    // trans_a XOR col, else a[i * lda + l].
    const bool a_flip = ta != col, b_flip = tb != col;
    p.lda = (a_flip ? m : k) + 3;
    p.ldb = (b_flip ? k : n) + 3;
    p.ldc = (col ? m : n) + 3;
    a.assign(std::size_t((a_flip ? k : m) * p.lda), T(0));
    b.assign(std::size_t((b_flip ? n : k) * p.ldb), T(0));
    c.assign(std::size_t((col ? n : m) * p.ldc), CT(0));
    p.a = a.data(), p.b = b.data(), p.c = c.data();
  }
  T& A(std::int64_t i, std::int64_t l) { return (p.trans_a != col) ? a[std::size_t(l * p.lda + i)] : a[std::size_t(i * p.lda + l)]; }
  T& B(std::int64_t l, std::int64_t j) { return (p.trans_b != col) ? b[std::size_t(j * p.ldb + l)] : b[std::size_t(l * p.ldb + j)]; }
  CT& C(std::int64_t i, std::int64_t j) { return col ? c[std::size_t(j * p.ldc + i)] : c[std::size_t(i * p.ldc + j)]; }

  // Entries uniform in [-limit, limit] (the whole range of the type when limit is 0, its
  // minimum included); C0 zero unless c_limit is given.
  void fill(std::uint64_t seed, std::int64_t a_limit, std::int64_t b_limit,
            std::optional<std::int64_t> c_limit = std::nullopt) {
    std::mt19937_64 rng(seed);
    auto draw = [&](std::int64_t limit) -> std::int64_t {
      if (limit == 0) return std::int64_t(T(rng()));
      return std::int64_t(rng() % std::uint64_t(2 * limit + 1)) - limit;
    };
    auto draw_c = [&](std::int64_t limit) -> CT {
      if (limit == 0) return CT(rng());
      return CT(std::int64_t(rng() % std::uint64_t(2 * limit + 1)) - limit);
    };
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t l = 0; l < p.k; ++l) A(i, l) = T(draw(a_limit));
    for (std::int64_t l = 0; l < p.k; ++l)
      for (std::int64_t j = 0; j < p.n; ++j) B(l, j) = T(draw(b_limit));
    if (c_limit)
      for (std::int64_t i = 0; i < p.m; ++i)
        for (std::int64_t j = 0; j < p.n; ++j) C(i, j) = draw_c(*c_limit);
    c0 = c;
  }

  // alpha op(A) op(B) + beta C0 at (i, j), exact.
  Wide expected(std::int64_t i, std::int64_t j) {
    Wide x;
    for (std::int64_t l = 0; l < p.k; ++l) x.add(Wide::of(i128(A(i, l)) * i128(B(l, j))));
    x.times(std::int64_t(p.alpha));
    if (p.beta != 0) {
      Wide y = Wide::of(col ? c0[std::size_t(j * p.ldc + i)] : c0[std::size_t(i * p.ldc + j)]);
      y.times(std::int64_t(p.beta));
      x.add(y);
    }
    return x;
  }
};

// Every entry of the limbs (C's stored orientation: C^T when column-major) equals the reference.
template <class T>
::testing::AssertionResult limbs_right(HostProblem<T>& h, const std::vector<std::uint64_t>& words, int limbs) {
  const std::int64_t cols = h.col ? h.p.m : h.p.n;
  for (std::int64_t i = 0; i < h.p.m; ++i)
    for (std::int64_t j = 0; j < h.p.n; ++j) {
      const std::int64_t r = h.col ? j : i, c = h.col ? i : j;
      const Wide got = Wide::of_limbs(&words[std::size_t((r * cols + c) * limbs)], limbs), want = h.expected(i, j);
      if (!(got == want))
        return ::testing::AssertionFailure() << "entry (" << i << ", " << j << ") is " << got.text() << ", expected "
                                             << want.text();
    }
  return ::testing::AssertionSuccess();
}

// The exact result as limbs (host API), C^T when column-major; `plan` set to what ran.
template <class T>
std::vector<std::uint64_t> exact_limbs(HostProblem<T>& h, ExactPlan* plan = nullptr) {
  const int limbs = exact_output_limbs(h.p);
  const std::int64_t rows = h.col ? h.p.n : h.p.m, cols = h.col ? h.p.m : h.p.n;
  std::vector<std::uint64_t> words(std::size_t(rows * cols * limbs), 0x5a5a5a5a5a5a5a5aull);
  const ExactLimbsOut out{words.data(), cols, limbs};
  const ExactPlan ran = exact_integer_gemm(h.p, &out);
  if (plan) *plan = ran;
  return words;
}

// The exact result as limbs against the reference, every entry.
template <class T>
void expect_exact_limbs(HostProblem<T>& h, const std::string& what) {
  ExactPlan plan;
  const std::vector<std::uint64_t> words = exact_limbs(h, &plan);
  EXPECT_TRUE(limbs_right(h, words, exact_output_limbs(h.p))) << what << " (" << plan.describe() << ")";
}

// Every entry of C equals the reference.
template <class T, class CT>
::testing::AssertionResult c_right(HostProblem<T, CT>& h) {
  for (std::int64_t i = 0; i < h.p.m; ++i)
    for (std::int64_t j = 0; j < h.p.n; ++j)
      if (!(Wide::of(h.C(i, j)) == h.expected(i, j)))
        return ::testing::AssertionFailure() << "C(" << i << ", " << j << ") = " << std::int64_t(h.C(i, j))
                                             << ", expected " << h.expected(i, j).text();
  return ::testing::AssertionSuccess();
}

// C through gemm()'s host API on the CUDA backend (the registry entry), every entry.
template <class T, class CT>
void expect_exact_c(HostProblem<T, CT>& h, const std::string& what) {
  GemmOptions options;
  options.backend = Backend::cuda;
  EXPECT_EQ(gemm(h.p, options), "cuda_exact_residues") << what;
  EXPECT_TRUE(c_right(h)) << what;
}

struct Shape {
  std::int64_t m, n, k;
};

std::string label(const Shape& s, bool ta, bool tb, Layout layout) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + (ta ? " A^T" : "") +
         (tb ? " B^T" : "") + (layout == Layout::col_major ? " col" : " row");
}

TEST(GpuExact, I32FullRangeExactAsLimbs) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 1;
  for (const Shape s : {Shape{1, 1, 1}, Shape{7, 13, 5}, Shape{65, 33, 17}, Shape{130, 257, 1000}, Shape{97, 64, 3001}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (Layout layout : {Layout::row_major, Layout::col_major}) {
          HostProblem<std::int32_t> h(s.m, s.n, s.k, ta, tb, layout);
          h.fill(seed++, 0, 0);  // |a|, |b| <= 2^31: results up to 2^75
          expect_exact_limbs(h, "i32 " + label(s, ta, tb, layout));
        }
}

// The plan's count of moduli follows the entries' bits; the workspace is sized for the
// dtype's worst case, and a plan of fewer moduli can take stream-K where the worst case does
// not (1024 x 1024: 16 tiles a modulus on 66 clusters). Entries of 1 to 31 bits, odd K, each
// against the exact reference.
TEST(GpuExact, EveryCountOfModuliRunsInTheDeclaredWorkspace) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 90;
  for (int bits : {2, 12, 24, 31}) {
    HostProblem<std::int32_t> h(1024, 1024, 701, false, false, Layout::row_major);
    const std::int64_t limit = bits == 31 ? 0 : (std::int64_t{1} << bits) - 1;
    h.fill(seed++, limit, limit);
    expect_exact_limbs(h, "i32 of " + std::to_string(bits) + "-bit entries, 1024x1024x701");
  }
}

// The checks above fail on each planted fault of the real results: as limbs (a count one
// less or more, negated, a term dropped, the last stored row as the row before it) and in C
// (gemm_faults: a term dropped, added twice, of the wrong sign, an edge row or column).
TEST(GpuExact, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  for (Layout layout : {Layout::row_major, Layout::col_major}) {
    SCOPED_TRACE(layout == Layout::col_major ? "column-major" : "row-major");
    HostProblem<std::int32_t> h(65, 33, 17, false, true, layout);
    h.fill(5, 0, 0);  // full-range i32: 75-bit results
    std::vector<std::uint64_t> words = exact_limbs(h);
    const int limbs = exact_output_limbs(h.p);
    const std::int64_t m = h.p.m, n = h.p.n, k = h.p.k;
    const std::int64_t rows = h.col ? n : m, cols = h.col ? m : n;
    std::vector<test::PlantedFault> faults = test::limb_table_faults(words.data(), rows, cols, cols, limbs);
    const std::int64_t r = h.col ? n - 1 : m - 1, c = h.col ? m - 1 : n - 1;
    faults.push_back({"the last term of entry (m-1, n-1) dropped", [&, r, c] {
                        test::add_to_limbs(&words[std::size_t((r * cols + c) * limbs)], limbs,
                                           -(std::int64_t(h.A(m - 1, k - 1)) * h.B(k - 1, n - 1)));
                      }});
    EXPECT_EQ(test::expect_faults_caught(test::output_bytes(words), [&] { return limbs_right(h, words, limbs); }, faults),
              int(faults.size()));

    HostProblem<std::int32_t, std::int64_t> wide(65, 33, 17, false, true, layout);
    wide.fill(6, (1 << 26) - 1, (1 << 26) - 1);
    GemmOptions options;
    options.backend = Backend::cuda;
    gemm(wide.p, options);
    const auto c_faults = test::gemm_faults(wide.p);
    EXPECT_EQ(test::expect_faults_caught(test::output_bytes(wide.c), [&] { return c_right(wide); }, c_faults),
              int(c_faults.size()));
  }
}

TEST(GpuExact, I32ExtremesOnly) {
  SKIP_WITHOUT_DEVICE();
  // Every entry -2^31 or 2^31 - 1: the largest products, the bound met with equality.
  HostProblem<std::int32_t> h(33, 31, 4096, false, false, Layout::row_major);
  std::mt19937 rng(7);
  for (auto& x : h.a) x = rng() % 2 ? INT32_MIN : INT32_MAX;
  for (auto& x : h.b) x = rng() % 4 ? INT32_MIN : INT32_MAX;
  h.c0 = h.c;
  expect_exact_limbs(h, "i32 extremes 33x31x4096");
}

TEST(GpuExact, I32IntoI64AndI32) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 100;
  for (const Shape s : {Shape{3, 5, 7}, Shape{129, 65, 2048}, Shape{200, 1, 513}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (Layout layout : {Layout::row_major, Layout::col_major}) {
          // i64 C: |a|, |b| < 2^26, k <= 2048: |AB| < 2^63.
          HostProblem<std::int32_t, std::int64_t> wide(s.m, s.n, s.k, ta, tb, layout);
          wide.fill(seed++, (1 << 26) - 1, (1 << 26) - 1);
          expect_exact_c(wide, "i32 -> i64 " + label(s, ta, tb, layout));
          // i32 C: |a|, |b| <= 1000, k <= 2048: |AB| <= 2.05e9 < 2^31.
          HostProblem<std::int32_t> narrow(s.m, s.n, s.k, ta, tb, layout);
          narrow.fill(seed++, 1000, 1000);
          expect_exact_c(narrow, "i32 " + label(s, ta, tb, layout));
        }
}

TEST(GpuExact, I64With63BitInputs) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 200;
  for (const Shape s : {Shape{5, 3, 2}, Shape{33, 17, 100}, Shape{70, 130, 1000}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (Layout layout : {Layout::row_major, Layout::col_major}) {
          HostProblem<std::int64_t> h(s.m, s.n, s.k, ta, tb, layout);
          h.fill(seed++, 0, 0);  // the whole of int64, INT64_MIN included
          expect_exact_limbs(h, "i64 " + label(s, ta, tb, layout));
        }
  // i64 C where the results fit: 25-bit inputs, k = 1000 (|AB| < 2^60).
  HostProblem<std::int64_t> fits(65, 66, 1000, false, true, Layout::row_major);
  fits.fill(seed++, (1ll << 25) - 1, (1ll << 25) - 1);
  expect_exact_c(fits, "i64 65x66x1000 into i64");
  // 63-bit inputs into i64 C: an entry that does not fit is an error, never a wrapped value.
  HostProblem<std::int64_t> wide(9, 8, 100, false, false, Layout::row_major);
  wide.fill(seed++, 0, 0);
  GemmOptions options;
  options.backend = Backend::cuda;
  try {
    gemm(wide.p, options);
    ADD_FAILURE() << "63-bit products summed into i64 C reported no overflow";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_NE(std::string(e.what()).find("which does not fit i64"), std::string::npos) << e.what();
  }
}

TEST(GpuExact, KBeyondTheInt32LimitOfOneProduct) {
  SKIP_WITHOUT_DEVICE();
  // k past int8_k_limit(): every modular GEMM runs in chunks. Full-range i32 (into limbs)
  // and small entries that fit i64 C (which would be digit slices at a shorter k).
  const std::int64_t k = int8_k_limit() + 4099;
  HostProblem<std::int32_t> full(3, 5, k, false, true, Layout::row_major);
  full.fill(300, 0, 0);
  expect_exact_limbs(full, "i32 3x5x" + std::to_string(k));
  HostProblem<std::int32_t, std::int64_t> small(4, 2, k, true, false, Layout::col_major);
  small.fill(301, 100, 100);
  expect_exact_c(small, "i32 -> i64 4x2x" + std::to_string(k));
}

TEST(GpuExact, AlphaAndBeta) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 300;
  for (const auto& [alpha, beta] : std::vector<std::pair<double, double>>{{3, -2}, {-1, 1}, {0, 5}, {-7, 0}, {1e15, -4e15}}) {
    HostProblem<std::int32_t> h(45, 77, 300, true, false, Layout::row_major);
    h.p.alpha = alpha, h.p.beta = beta;
    h.fill(seed++, 0, 0, 0);
    expect_exact_limbs(h, "i32 limbs alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
    HostProblem<std::int64_t> g(31, 29, 500, false, true, Layout::col_major);
    g.p.alpha = alpha, g.p.beta = beta;
    g.fill(seed++, 0, 0, 0);
    expect_exact_limbs(g, "i64 limbs alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
  }
  // Into i32 C: small enough to fit.
  HostProblem<std::int32_t> h(64, 50, 200, false, false, Layout::row_major);
  h.p.alpha = 3, h.p.beta = -2;
  h.fill(seed++, 1000, 1000, 100000000);  // |3 AB| <= 6e8, |2 C0| <= 2e8
  expect_exact_c(h, "i32 alpha 3 beta -2");
  // k == 0: C = beta C0 only.
  HostProblem<std::int32_t> k0(5, 6, 0, false, false, Layout::row_major);
  k0.p.beta = -3;
  k0.fill(seed++, 10, 10, 1000);
  expect_exact_c(k0, "i32 k = 0, beta -3");
}

TEST(GpuExact, SmallEntriesRunAsDigitSlices) {
  SKIP_WITHOUT_DEVICE();
  std::uint64_t seed = 600;
  struct Small {
    std::int64_t a_limit, b_limit;
    int digits_a, digits_b;
  };
  // |a|, |b| <= 127: one int8 GEMM of the values themselves; 128 needs a second digit of A.
  for (const Small sm : {Small{127, 127, 1, 1}, Small{128, 127, 2, 1}, Small{9, 9, 1, 1}})
    for (const Shape s : {Shape{1, 1, 1}, Shape{65, 33, 17}, Shape{130, 257, 3001}})
      for (bool ta : {false, true})
        for (Layout layout : {Layout::row_major, Layout::col_major}) {
          const std::string what = "digits " + std::to_string(sm.a_limit) + " " + label(s, ta, !ta, layout);
          HostProblem<std::int64_t> h(s.m, s.n, s.k, ta, !ta, layout);
          h.fill(seed++, sm.a_limit, sm.b_limit);
          h.A(0, 0) = std::int64_t(-sm.a_limit);  // the extremes present
          h.B(0, 0) = std::int64_t(sm.b_limit);
          const int limbs = exact_output_limbs(h.p);
          const std::int64_t rows = h.col ? h.p.n : h.p.m, cols = h.col ? h.p.m : h.p.n;
          std::vector<std::uint64_t> words(std::size_t(rows * cols * limbs));
          const ExactLimbsOut out{words.data(), cols, limbs};
          const ExactPlan plan = exact_integer_gemm(h.p, &out);
          // k = 1 needs so few primes that residues win there.
          const ExactPlan want = plan_exact_gemm(std::uint64_t(sm.a_limit), std::uint64_t(sm.b_limit), s.k);
          EXPECT_EQ(want.method, s.k > 1 ? ExactPlan::Method::digits : want.method) << what;
          EXPECT_EQ(plan.method, want.method) << what << ": " << plan.describe();
          if (want.method == ExactPlan::Method::digits) {
            // The plan is of the row-major form: column-major C^T = B^T A^T swaps A and B.
            EXPECT_EQ(plan.digits_a, h.col ? sm.digits_b : sm.digits_a) << what;
            EXPECT_EQ(plan.digits_b, h.col ? sm.digits_a : sm.digits_b) << what;
          }
          std::int64_t wrong = 0;
          for (std::int64_t i = 0; i < h.p.m; ++i)
            for (std::int64_t j = 0; j < h.p.n; ++j) {
              const std::int64_t r = h.col ? j : i, c = h.col ? i : j;
              wrong += !(Wide::of_limbs(&words[std::size_t((r * cols + c) * limbs)], limbs) == h.expected(i, j));
            }
          EXPECT_EQ(wrong, 0) << what;
          // Into i32 C with alpha and beta, through the registry.
          HostProblem<std::int32_t> g(s.m, s.n, s.k, ta, !ta, layout);
          g.p.alpha = -2, g.p.beta = 3;
          g.fill(seed++, sm.a_limit, sm.b_limit, 1000);
          expect_exact_c(g, what + " into i32");
        }
}

// Small entries everywhere; op(A)(5, 3) op(B)(3, 7) and op(A)(9, 1) op(B)(1, 2) too large for
// i32 (row 3 and row 1 of op(B) zero elsewhere, so nothing else overflows): the first in
// row-major order is (5, 7).
template <class CT>
HostProblem<std::int32_t, CT> overflowing(Layout layout, bool ta, bool tb) {
  HostProblem<std::int32_t, CT> h(12, 10, 50, ta, tb, layout);
  h.fill(400, 10, 10);
  for (std::int64_t j = 0; j < h.p.n; ++j) h.B(3, j) = 0, h.B(1, j) = 0;
  h.A(5, 3) = (1 << 30) - 1, h.B(3, 7) = 4;
  h.A(9, 1) = 1 << 30, h.B(1, 2) = 8;
  return h;
}

TEST(GpuExact, OverflowIsReportedWithItsPosition) {
  SKIP_WITHOUT_DEVICE();
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (bool ta : {false, true}) {
      auto h = overflowing<std::int32_t>(layout, ta, !ta);
      GemmOptions options;
      options.backend = Backend::cuda;
      try {
        gemm(h.p, options);
        ADD_FAILURE() << "no overflow reported";
      } catch (const OverflowError& e) {
        EXPECT_EQ(e.category(), ErrorCategory::numeric);
        // The registry runs the row-major form: column-major C reports the first entry of
        // C^T in its row-major order, C^T(2, 9), which gemm() names as the caller's C(9, 2).
        const bool row = layout == Layout::row_major;
        EXPECT_EQ(e.row(), row ? 5 : 9);
        EXPECT_EQ(e.col(), row ? 7 : 2);
        EXPECT_EQ(e.dtype(), "i32");
        EXPECT_NE(std::string(e.what()).find(row ? "(5, 7)" : "(9, 2)"), std::string::npos) << e.what();
        // The value: A(r, k) B(k, c) plus the small entries' sum, beyond 2^31 - 1.
        EXPECT_GT(e.value().size(), std::size_t(9)) << e.value();
      }
      // The library's host API names the caller's entry in either layout.
      try {
        exact_integer_gemm(h.p);
        ADD_FAILURE() << "no overflow reported";
      } catch (const Error& e) {
        EXPECT_EQ(e.category(), ErrorCategory::numeric);
        EXPECT_NE(std::string(e.what()).find("(5, 7)"), std::string::npos) << e.what();
      }
      // Into i64 it fits, exactly.
      auto w = overflowing<std::int64_t>(layout, ta, !ta);
      expect_exact_c(w, "the overflowing product into i64");
    }
}

TEST(GpuExact, DeviceApiOnTheCallersStreamAndWorkspace) {
  SKIP_WITHOUT_DEVICE();
  HostProblem<std::int32_t> h(300, 200, 1000, false, false, Layout::row_major);
  h.fill(500, 0, 0);
  Context ctx(Backend::cuda);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const std::size_t a_bytes = h.a.size() * 4, b_bytes = h.b.size() * 4;
  const int limbs = exact_output_limbs(h.p);
  const std::size_t out_bytes = std::size_t(h.p.m * h.p.n * limbs) * 8;
  void *a = nullptr, *b = nullptr, *c = nullptr, *out = nullptr, *ws = nullptr;
  GemmProblem d = h.p;
  const std::size_t ws_bytes = exact_integer_gemm_workspace_bytes(ctx, d);
  ASSERT_EQ(cudaMalloc(&a, a_bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, b_bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, h.c.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, out_bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&ws, ws_bytes), cudaSuccess);
  cudaMemcpy(a, h.a.data(), a_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, h.b.data(), b_bytes, cudaMemcpyHostToDevice);
  d.a = a, d.b = b, d.c = c;
  // Too little workspace: a usage error, nothing queued.
  EXPECT_THROW(exact_integer_gemm(ctx, d, stream, Workspace{ws, ws_bytes - 1}), Error);
  const ExactLimbsOut to{static_cast<std::uint64_t*>(out), h.p.n, limbs};
  const ExactPlan plan = exact_integer_gemm(ctx, d, stream, Workspace{ws, ws_bytes}, &to);
  EXPECT_EQ(plan.method, ExactPlan::Method::residues);
  EXPECT_FALSE(exact_gemm_report(d, stream, Workspace{ws, ws_bytes}).overflow());
  std::vector<std::uint64_t> words(out_bytes / 8);
  cudaMemcpy(words.data(), out, out_bytes, cudaMemcpyDeviceToHost);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < h.p.m; ++i)
    for (std::int64_t j = 0; j < h.p.n; ++j)
      wrong += !(Wide::of_limbs(&words[std::size_t((i * h.p.n + j) * limbs)], limbs) == h.expected(i, j));
  EXPECT_EQ(wrong, 0);
  for (void* p : {a, b, c, out, ws}) cudaFree(p);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace gemmkit

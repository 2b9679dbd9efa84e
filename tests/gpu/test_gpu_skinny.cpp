// GPU tests of rung 20, cuda_skinny (min(M, N) <= 64): both orientations (M short, the big
// operand B; N short, the big operand A) for every short side the kernel pads differently
// (1, 2, 7, 8, 16, 33, 64), K remainders of its K tiles (1, 15, 17, 4095, 8193), the four
// transposes, odd and 16-byte leading dimensions (NaN in the padding), beta = 0 over a
// NaN-poisoned C and alpha, beta != 0, f32 C for half inputs, and a split K that must give
// the same bits run after run. Checked against the library's double-double reference
// (verify: full, or Freivalds for the largest products). The registry-driven suites
// (test_gpu.cpp, test_gpu_tensor.cpp) run it on their edge shapes as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gemmkit/half.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

constexpr const char* kName = "cuda_skinny";
// Both entries of rung 20: the split K added up through the workspace, or in clusters.
const char* const kNames[] = {"cuda_skinny", "cuda_skinny_cluster"};

template <class T>
T nan_of() {
  if constexpr (std::is_same_v<T, float>) return std::numeric_limits<float>::quiet_NaN();
  else return T(std::numeric_limits<float>::quiet_NaN());
}

// rows x cols, leading dimension odd (never on 16 bytes) or a whole number of 16 bytes past
// the width; uniform [-1, 1) inside, NaN in the padding.
// packed: ld = cols (no padding).
template <class T>
Matrix<T> padded(std::int64_t rows, std::int64_t cols, bool aligned, std::uint64_t seed,
                 bool packed = false) {
  const std::int64_t per16 = 16 / std::int64_t(sizeof(T));
  const std::int64_t ld = packed    ? std::max<std::int64_t>(cols, 1)
                          : aligned ? (cols + 1 + per16 - 1) / per16 * per16
                                    : (cols % 2 == 0 ? cols + 1 : cols + 2);
  Matrix<T> m(rows, cols, ld);
  fill_random<T>(m.view(), Distribution::parse("uniform"), seed);
  if (cols == 0) return m;  // an empty matrix stores nothing, padding included
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = cols; j < ld; ++j) m(i, j) = nan_of<T>();
  return m;
}

struct Case {
  DType dtype = DType::bf16;
  bool out_f32 = false;
  std::int64_t m = 1, n = 1, k = 1;
  bool ta = false, tb = false, aligned = true, beta_zero = true;
  Layout layout = Layout::row_major;
  bool packed = false;  // leading dimensions equal to the widths
  std::string describe() const {
    std::ostringstream o;
    o << m << "x" << n << "x" << k << (ta ? " A^T" : "") << (tb ? " B^T" : "")
      << (layout == Layout::col_major ? " col" : "") << " " << dtype_name(dtype)
      << (out_f32 ? "->f32" : "") << (packed ? " packed" : aligned ? " ld 16B" : " ld odd")
      << (beta_zero ? " beta=0 over NaN" : " beta!=0");
    return o.str();
  }
};

// Runs one case through gemm() with cuda_skinny and checks it; returns C as computed (for
// the repeat test). In: host storage of the inputs; Out: of C.
template <class In, class Out>
std::vector<Out> run_case(const char* name, const Case& c, std::uint64_t seed, VerifyMode mode) {
  const std::string what = std::string(name) + " " + c.describe();
  // Stored shapes in the problem's layout: row-major stores op(A) (m x k) as m rows, and a
  // column-major matrix is its transpose stored row-major.
  const bool col = c.layout == Layout::col_major;
  const std::int64_t ar = c.ta != col ? c.k : c.m, ac = c.ta != col ? c.m : c.k;
  const std::int64_t br = c.tb != col ? c.n : c.k, bc = c.tb != col ? c.k : c.n;
  const std::int64_t cr = col ? c.n : c.m, cc = col ? c.m : c.n;
  const Matrix<In> a = padded<In>(ar, ac, c.aligned, seed + 1, c.packed);
  const Matrix<In> b = padded<In>(br, bc, c.aligned, seed + 2, c.packed);
  Matrix<Out> cm = padded<Out>(cr, cc, c.aligned, seed + 3, c.packed);
  if (c.beta_zero)
    for (std::int64_t i = 0; i < cr; ++i)
      for (std::int64_t j = 0; j < cc; ++j) cm(i, j) = nan_of<Out>();
  const Matrix<Out> before = cm;

  GemmProblem p;
  p.dtype = c.dtype;
  if (c.out_f32) p.out_dtype = DType::f32;
  p.layout = c.layout;
  p.trans_a = c.ta, p.trans_b = c.tb;
  p.m = c.m, p.n = c.n, p.k = c.k;
  p.alpha = 1.25 - 0.5 * double(seed % 3);
  p.beta = c.beta_zero ? 0.0 : -0.75 + 0.25 * double(seed % 2);
  p.a = a.data(), p.lda = a.ld();
  p.b = b.data(), p.ldb = b.ld();
  p.c = cm.data(), p.ldc = cm.ld();
  const KernelEntry& e = gemm_registry().get(name);
  if (auto why = e.rejects(as_row_major(p))) {
    ADD_FAILURE() << what << ": refused: " << *why;
    return {};
  }
  GemmOptions o;
  o.kernel = name;
  gemm(p, o);
  // verify() reads problems row-major: a column-major one is checked as the row-major
  // product it is on the same memory.
  const VerifyResult r = verify(as_row_major(p), before.data(), mode, seed, e.accuracy);
  EXPECT_TRUE(r.passed) << what << ": error " << r.error << " > " << r.tolerance << " " << r.detail;
  for (std::int64_t i = 0; i < cr; ++i)
    for (std::int64_t j = cc; j < cm.ld(); ++j)
      if (std::memcmp(&cm(i, j), &before(i, j), sizeof(Out)) != 0) {
        ADD_FAILURE() << what << ": the padding of C at (" << i << ", " << j << ") was written";
        i = cr;
        break;
      }
  return std::vector<Out>(cm.data(), cm.data() + cr * cm.ld());
}

// Dispatches on the case's dtypes; the result's bytes, for bit comparisons.
std::vector<unsigned char> run_any(const char* name, const Case& c, std::uint64_t seed,
                                   VerifyMode mode) {
  auto bytes = [](const auto& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    return std::vector<unsigned char>(p, p + v.size() * sizeof(v[0]));
  };
  switch (c.dtype) {
    case DType::bf16:
      return c.out_f32 ? bytes(run_case<BFloat16, float>(name, c, seed, mode))
                       : bytes(run_case<BFloat16, BFloat16>(name, c, seed, mode));
    case DType::f16:
      return c.out_f32 ? bytes(run_case<Half, float>(name, c, seed, mode))
                       : bytes(run_case<Half, Half>(name, c, seed, mode));
    default: return bytes(run_case<float, float>(name, c, seed, mode));
  }
}

// Full reference up to ~50 M multiply-adds, Freivalds past it.
VerifyMode mode_for(const Case& c) {
  return double(c.m) * double(c.n) * double(c.k) <= 5e7 ? VerifyMode::full : VerifyMode::freivalds;
}

bool device_runs_it() {
  const KernelEntry* e = gemm_registry().find(kName);
  return e && current_compute_capability() >= e->min_compute_capability;
}

#define SKIP_UNLESS_SKINNY_RUNS()                                                       \
  do {                                                                                  \
    SKIP_WITHOUT_DEVICE();                                                              \
    if (!device_runs_it()) GTEST_SKIP() << kName << " needs compute capability 8.0"; \
  } while (0)

const DType kDtypes[] = {DType::bf16, DType::f16, DType::tf32, DType::f32};

}  // namespace

// Every short side in both orientations and every dtype, against a long side that is not a
// whole number of 128-row tiles (1000 or 5000); K, transposes, alignment, beta and C's dtype vary case by
// case so that each K remainder meets both orientations.
TEST(GpuSkinny, ShortSidesBothOrientations) {
  SKIP_UNLESS_SKINNY_RUNS();
  const std::int64_t shorts[] = {1, 2, 7, 8, 16, 33, 64};
  const std::int64_t ks[] = {1, 15, 17, 4095, 8193};
  std::uint64_t index = 0;
  int ran = 0;
  for (DType dtype : kDtypes)
    for (std::int64_t s : shorts)
      for (bool m_short : {true, false}) {
        ++index;
        Case c;
        c.dtype = dtype;
        c.out_f32 = (dtype == DType::bf16 || dtype == DType::f16) && index % 3 == 0;
        // 8 tiles of 128 (K split through the workspace) or 40 (on sm_90, in clusters).
        const std::int64_t long_side = index / 2 % 2 == 0 ? 1000 : 5000;
        c.m = m_short ? s : long_side;
        c.n = m_short ? long_side : s;
        c.k = ks[index % 5];
        c.ta = index % 4 & 1;
        c.tb = index % 4 & 2;
        c.aligned = index % 2 == 0;
        c.beta_zero = index % 3 != 1;
        for (const char* name : kNames) run_any(name, c, 0x5c1 + index, mode_for(c));
        ++ran;
        if (HasFailure() && ran > 20) return;  // a broken kernel fails them all
      }
  std::cout << "[   NOTE   ] " << ran << " skinny cases run" << std::endl;
}

// Every transpose in both orientations at every K remainder, for one dtype of each path
// (ldmatrix, tf32 fragments, FMAs), with odd leading dimensions and with 16-byte ones.
TEST(GpuSkinny, EveryTransposeAndKRemainder) {
  SKIP_UNLESS_SKINNY_RUNS();
  std::uint64_t index = 0;
  for (DType dtype : {DType::bf16, DType::tf32, DType::f32})
    for (std::int64_t k : {1, 15, 17, 4095})
      for (int t = 0; t < 4; ++t)
        for (bool m_short : {true, false}) {
          ++index;
          Case c;
          c.dtype = dtype;
          c.m = m_short ? 7 : 300;
          c.n = m_short ? 300 : 7;
          c.k = k;
          c.ta = t & 1;
          c.tb = t & 2;
          c.aligned = index % 2 == 0;
          c.beta_zero = index % 3 == 0;
          run_any(kName, c, 0x7a + index, mode_for(c));
          if (HasFailure() && index > 20) return;
        }
}

// M = N = 1, both short sides at once, C column-major, K = 0 (C = beta C, or zeros over
// NaN), the widest short side with a long side of exactly one tile, and packed operands
// (a single column of the small operand with ld 1).
TEST(GpuSkinny, CornerCases) {
  SKIP_UNLESS_SKINNY_RUNS();
  const Case cases[] = {
      {DType::bf16, false, 1, 1, 1, false, false, true, true},
      {DType::f32, false, 1, 1, 4099, true, true, false, false},
      {DType::f16, true, 33, 64, 515, false, true, true, false},
      {DType::tf32, false, 64, 7, 1000, true, false, false, true},
      {DType::bf16, false, 5, 2000, 333, false, false, true, false, Layout::col_major},
      {DType::f32, false, 2000, 5, 333, true, false, false, true, Layout::col_major},
      {DType::bf16, false, 16, 700, 0, false, false, true, false},
      {DType::f32, false, 700, 16, 0, false, false, false, true},
      {DType::f16, true, 64, 128, 64, false, false, true, false},
      // A single column of W with ld 1, read as a row: B (K x 1), A^T (K x 1).
      {DType::bf16, false, 1000, 1, 4097, false, false, true, true, Layout::row_major, true},
      {DType::f16, true, 1, 1000, 333, true, false, true, false, Layout::row_major, true},
      {DType::tf32, false, 999, 1, 1025, false, false, true, false, Layout::row_major, true},
      {DType::f32, false, 1, 999, 1025, true, true, true, true, Layout::row_major, true},
  };
  std::uint64_t seed = 0xc0;
  for (const Case& c : cases) run_any(kName, c, ++seed, VerifyMode::full);
}

// Shapes whose K is split across blocks: the slices add up in a fixed order, so three runs
// give the same bits; the result is checked as well. cuda_skinny adds them up through the
// workspace and the last block of each tile; cuda_skinny_cluster, on sm_90, in clusters of
// up to 8 splits where they fit (the first cases), else as cuda_skinny (a long side of a
// few tiles splits K further: the last case, which says so by asking for workspace).
TEST(GpuSkinny, SplitKRepeatsExactly) {
  SKIP_UNLESS_SKINNY_RUNS();
  const Case cases[] = {
      {DType::bf16, false, 16, 4096, 8192, false, false, true, false},
      {DType::bf16, true, 4096, 8, 8192, false, false, true, false},
      {DType::f16, false, 1, 4096, 12289, false, true, false, false},
      {DType::tf32, false, 3000, 33, 5000, true, false, true, false},
      {DType::f32, false, 64, 2500, 6001, false, false, false, false},
      {DType::bf16, false, 40, 900, 20000, false, true, true, false},
  };
  Context ctx(Backend::cuda);
  std::uint64_t seed = 0x5f;
  for (const Case& c : cases) {
    if (&c == &cases[std::size(cases) - 1]) {
      GemmProblem shape;
      shape.dtype = c.dtype;
      shape.m = c.m, shape.n = c.n, shape.k = c.k, shape.trans_a = c.ta, shape.trans_b = c.tb;
      EXPECT_GT(gemm_registry().get(kName).workspace_for(shape, ctx), 0u)
          << c.describe() << ": K is not split through the workspace";
    }
    ++seed;
    for (const char* name : kNames) {
      const std::vector<unsigned char> first = run_any(name, c, seed, VerifyMode::freivalds);
      for (int run = 1; run < 3; ++run)
        EXPECT_EQ(run_any(name, c, seed, VerifyMode::none), first)
            << name << " " << c.describe() << ": run " << run + 1 << " differs from the first";
    }
  }
}

TEST(GpuSkinny, RefusesWideProductsInWords) {
  const KernelEntry& e = gemm_registry().get(kName);
  GemmProblem p;
  p.dtype = DType::bf16;
  p.m = 65, p.n = 4096, p.k = 4096;
  const auto why = e.rejects(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("cuda_skinny takes M or N <= 64"), std::string::npos) << *why;
  p.m = 64;
  EXPECT_FALSE(e.rejects(p).has_value());
  p.m = 4096, p.n = 64;
  EXPECT_FALSE(e.rejects(p).has_value());
}

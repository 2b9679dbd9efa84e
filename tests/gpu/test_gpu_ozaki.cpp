// The Ozaki emulation on the GPU (cuda_ozaki_f64 / _f32, include/gemmkit/ozaki.hpp):
//   - bit for bit what the scheme gives when carried out on the host with 128-bit
//     integers (the same scaling, the exact integer product, one rounding), over
//     layouts, transposes, odd sizes and plans: every step on the GPU is exact, so
//     nothing may differ;
//   - against a double-double reference, no less accurate than native cuBLAS (DGEMM,
//     pedantic SGEMM, in the same test) on uniform inputs, exponents spread over
//     +-2^8 and +-2^30, terms that cancel, zero rows and subnormal entries: max and
//     median relative error per entry;
//   - alpha and beta, k = 0, and Inf / NaN refused with the operand and line named;
//   - a smaller workspace: the same bits, in passes over C's rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "arith/int128.hpp"
#include "fault_injection.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/ozaki.hpp"
#include "gpu_test_support.hpp"

namespace gemmkit {
namespace {


// op(A) (m x k) and op(B) (k x n) as plain row-major values, the problem's
// shape and form.
struct Case {
  std::int64_t m, n, k;
  std::vector<double> a,
      b;  // op(A)(i, p) = a[i * k + p], op(B)(p, j) = b[p * n + j]
  double opa(std::int64_t i, std::int64_t p) const { return a[std::size_t(i * k + p)]; }
  double opb(std::int64_t p, std::int64_t j) const { return b[std::size_t(p * n + j)]; }
};

// Entries u 2^e, u uniform in [1, 2) with a random sign, e uniform in [-spread,
// spread].
Case random_case(std::int64_t m, std::int64_t n, std::int64_t k, int spread, std::uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  std::uniform_int_distribution<int> e(-spread, spread), sign(0, 1);
  Case c{m, n, k, std::vector<double>(std::size_t(m * k)), std::vector<double>(std::size_t(k * n))};
  for (auto* v : {&c.a, &c.b})
    for (double& x : *v) x = (sign(gen) ? -1.0 : 1.0) * std::ldexp(u(gen), e(gen));
  return c;
}

// The scheme on the host: shifts per row of op(A) / column of op(B), the
// integers, their exact product in 128 bits (|C'| < 2^126 for the plans used
// here), one rounding, scaled back.
std::vector<double> host_scheme(const Case& c, int bits) {
  auto shift_of = [&](double largest) { return largest == 0 ? 0 : bits - 1 - std::ilogb(largest); };
  std::vector<int> sa(std::size_t(c.m)), sb(std::size_t(c.n));
  for (std::int64_t i = 0; i < c.m; ++i) {
    double largest = 0;
    for (std::int64_t p = 0; p < c.k; ++p) largest = std::max(largest, std::fabs(c.opa(i, p)));
    sa[std::size_t(i)] = shift_of(largest);
  }
  for (std::int64_t j = 0; j < c.n; ++j) {
    double largest = 0;
    for (std::int64_t p = 0; p < c.k; ++p) largest = std::max(largest, std::fabs(c.opb(p, j)));
    sb[std::size_t(j)] = shift_of(largest);
  }
  std::vector<std::int64_t> ai(std::size_t(c.m * c.k)), bi(std::size_t(c.k * c.n));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t p = 0; p < c.k; ++p)
      ai[std::size_t(i * c.k + p)] = std::int64_t(std::rint(std::ldexp(c.opa(i, p), sa[std::size_t(i)])));
  for (std::int64_t p = 0; p < c.k; ++p)
    for (std::int64_t j = 0; j < c.n; ++j)
      bi[std::size_t(p * c.n + j)] = std::int64_t(std::rint(std::ldexp(c.opb(p, j), sb[std::size_t(j)])));
  std::vector<double> out(std::size_t(c.m * c.n));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      i128 s = 0;
      for (std::int64_t p = 0; p < c.k; ++p) s += i128(ai[std::size_t(i * c.k + p)]) * bi[std::size_t(p * c.n + j)];
      // Nearest double to s: its magnitude's top 64 bits with a sticky bit,
      // converted once.
      const bool negative = s < 0;
      const u128 mag = negative ? u128(0) - u128(s) : u128(s);
      double d = 0;
      if (mag != 0) {
        int lead = 0;
        while ((mag << lead) >> 127 == 0) ++lead;
        const u128 aligned_bits = mag << lead;  // exact: mag < 2^127
        const std::uint64_t top = std::uint64_t(aligned_bits >> 64) | (std::uint64_t(aligned_bits) != 0 ? 1u : 0u);
        d = std::ldexp(double(top), 64 - lead);
      }
      out[std::size_t(i * c.n + j)] = std::ldexp(negative ? -d : d, -(sa[std::size_t(i)] + sb[std::size_t(j)]));
    }
  return out;
}

// op(A) op(B) in double-double (error-free products by fma, error-free sums):
// the reference.
std::vector<double> reference(const Case& c) {
  std::vector<double> out(std::size_t(c.m * c.n));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      double hi = 0, lo = 0;
      for (std::int64_t p = 0; p < c.k; ++p) {
        const double x = c.opa(i, p), y = c.opb(p, j);
        const double prod = x * y, perr = std::fma(x, y, -prod);
        const double s = hi + prod, bb = s - hi, serr = (hi - (s - bb)) + (prod - bb);
        hi = s;
        lo += serr + perr;
      }
      out[std::size_t(i * c.n + j)] = hi + lo;
    }
  return out;
}

struct Errors {
  double max = 0, median = 0;
};
Errors relative_errors(const std::vector<double>& got, const std::vector<double>& want) {
  std::vector<double> e;
  for (std::size_t i = 0; i < got.size(); ++i)
    e.push_back(want[i] == 0 ? std::fabs(got[i]) : std::fabs(got[i] - want[i]) / std::fabs(want[i]));
  std::sort(e.begin(), e.end());
  return {e.back(), e[e.size() / 2]};
}

// The case's values as floats (for the f32 emulation, whose inputs they are).
Case as_floats(Case c) {
  for (auto* v : {&c.a, &c.b})
    for (double& x : *v) x = double(float(x));
  return c;
}

// Device copies of a case in elements T (double or float), stored as the
// problem's layout and transposes ask, and the problem.
template <class T = double>
struct DeviceCase {
  GemmProblem p;
  T *a = nullptr, *b = nullptr, *c = nullptr;
  DeviceCase(const Case& h, Layout layout, bool ta, bool tb, const std::vector<double>* c0 = nullptr) {
    p.dtype = std::is_same_v<T, double> ? DType::f64 : DType::f32;
    p.layout = layout, p.trans_a = ta, p.trans_b = tb;
    p.m = h.m, p.n = h.n, p.k = h.k;
    const bool rm = layout == Layout::row_major;
    // Stored element (r, s) of a rows x cols matrix: rm ? r * ld + s : s * ld +
    // r; ld = width + 3.
    auto store = [&](std::int64_t rows, std::int64_t cols, auto value, std::int64_t& ld) {
      ld = (rm ? cols : rows) + 3;
      std::vector<double> v(std::size_t(ld * (rm ? rows : cols)), -7.0);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t s = 0; s < cols; ++s) v[std::size_t(rm ? r * ld + s : s * ld + r)] = value(r, s);
      return v;
    };
    const auto av = ta ? store(
                             h.k, h.m, [&](auto r, auto s) { return h.opa(s, r); }, p.lda)
                       : store(
                             h.m, h.k, [&](auto r, auto s) { return h.opa(r, s); }, p.lda);
    const auto bv = tb ? store(
                             h.n, h.k, [&](auto r, auto s) { return h.opb(s, r); }, p.ldb)
                       : store(
                             h.k, h.n, [&](auto r, auto s) { return h.opb(r, s); }, p.ldb);
    const auto cv = store(
        h.m, h.n, [&](auto r, auto s) { return c0 ? (*c0)[std::size_t(r * h.n + s)] : 0.0; }, p.ldc);
    a = upload(av), b = upload(bv), c = upload(cv);
    p.a = a, p.b = b, p.c = c;
  }
  ~DeviceCase() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  static T* upload(const std::vector<double>& v) {
    const std::vector<T> t(v.begin(), v.end());
    T* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, t.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, t.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    return d;
  }
  std::vector<double> result() const {
    const bool rm = p.layout == Layout::row_major;
    std::vector<T> stored(std::size_t(p.ldc * (rm ? p.m : p.n)));
    EXPECT_EQ(cudaMemcpy(stored.data(), c, stored.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<double> out(std::size_t(p.m * p.n));
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j)
        out[std::size_t(i * p.n + j)] = stored[std::size_t(rm ? i * p.ldc + j : j * p.ldc + i)];
    return out;
  }
};

OzakiPlan run_ozaki(Context& ctx, const GemmProblem& p, int moduli = 0) {
  void* ws = nullptr;
  const std::size_t bytes = ozaki_gemm_workspace_bytes(ctx, p, moduli);
  EXPECT_EQ(cudaMalloc(&ws, std::max<std::size_t>(bytes, 1)), cudaSuccess);
  OzakiPlan plan;
  try {
    plan = ozaki_gemm(ctx, p, nullptr, Workspace{ws, bytes}, moduli);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  } catch (...) {
    cudaFree(ws);
    throw;
  }
  cudaFree(ws);
  return plan;
}

// Every entry the same bits as the scheme on the host.
::testing::AssertionResult bits_equal(const std::vector<double>& got, const std::vector<double>& want) {
  std::int64_t differ = 0;
  for (std::size_t i = 0; i < want.size(); ++i) differ += !(got[i] == want[i]);
  if (differ == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differ << " entries differ; first entry " << got[0] << " vs " << want[0];
}

// The largest and the median relative error (against double-double) no larger than those of
// the native GEMM's result.
::testing::AssertionResult as_accurate_as_native(const std::vector<double>& ours, const std::vector<double>& native,
                                                 const std::vector<double>& want) {
  const Errors e = relative_errors(ours, want), n = relative_errors(native, want);
  if (!(n.max > 0))  // the reference is finer than the native GEMM: a test that could fail
    return ::testing::AssertionFailure() << "the native GEMM is exact here: the comparison means nothing";
  if (e.max <= n.max && e.median <= n.median) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max " << e.max << " vs native " << n.max << ", median " << e.median
                                       << " vs native " << n.median;
}

TEST(GpuOzaki, EqualsTheSchemeOnTheHostBitForBit) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = random_case(77, 65, 300, 4, 11);
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int moduli : {0, 9}) {
          SCOPED_TRACE(std::string(layout == Layout::row_major ? "row" : "col") + (ta ? " At" : " A") +
                       (tb ? " Bt" : " B") + " moduli " + std::to_string(moduli));
          DeviceCase d(h, layout, ta, tb);
          const OzakiPlan plan = run_ozaki(ctx, d.p, moduli);
          EXPECT_TRUE(bits_equal(d.result(), host_scheme(h, plan.bits)));
        }
}

// A workspace smaller than ozaki_gemm_workspace_bytes but above the least
// makes the call go over C's rows in passes: the same bits.
TEST(GpuOzaki, PassesOverRowsForASmallerWorkspaceGiveTheSameBits) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = random_case(301, 257, 300, 4, 13);  // both ways round, rows enough for passes
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (bool ta : {false, true}) {
      DeviceCase d(h, layout, ta, false);
      const std::size_t full = ozaki_gemm_workspace_bytes(ctx, d.p);
      void* ws = nullptr;
      ASSERT_EQ(cudaMalloc(&ws, full), cudaSuccess);
      int ran = 0;
      for (double fraction : {1.0, 0.7, 0.5, 0.35, 0.2, 0.1}) {
        SCOPED_TRACE(std::string(layout == Layout::row_major ? "row" : "col") + (ta ? " At" : " A") + ", " +
                     std::to_string(fraction) + " of the workspace");
        const auto bytes = std::size_t(double(full) * fraction) / 256 * 256;
        OzakiPlan plan;
        try {
          plan = ozaki_gemm(ctx, d.p, nullptr, Workspace{ws, bytes});
        } catch (const Error& e) {
          EXPECT_EQ(e.category(), ErrorCategory::usage);
          EXPECT_NE(std::string(e.what()).find("needs at least"), std::string::npos) << e.what();
          continue;
        }
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        ++ran;
        const std::vector<double> want = host_scheme(h, plan.bits), got = d.result();
        std::int64_t differ = 0;
        for (std::size_t i = 0; i < want.size(); ++i) differ += got[i] != want[i];
        EXPECT_EQ(differ, 0);
      }
      EXPECT_GE(ran, 2);  // the whole workspace, and at least one in passes
      cudaFree(ws);
    }
}

// Shapes across the plan's boundaries (one row, one column, odd M, N and K, a pass's rows
// and one more, K across 16 and 1024), each with the workspace ozaki_gemm_workspace_bytes
// declares and with a fifth of it (passes over C's rows, the last one short), against the
// scheme on the host bit for bit. The runtime plan can take fewer moduli than the largest the
// workspace was sized for: 333 x 517 x 1029 failed so ("Ozaki plan beyond its workspace").
TEST(GpuOzaki, EveryShapeRunsInItsDeclaredWorkspaceAndInPasses) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  struct Shape {
    std::int64_t m, n, k;
  };
  const std::vector<Shape> shapes = {{333, 517, 1029}, {1, 1, 1},    {1, 300, 17},   {300, 1, 1025},
                                     {257, 129, 15},   {129, 33, 1024}, {65, 2049, 31}, {511, 255, 100},
                                     {1000, 7, 513}};
  std::uint32_t seed = 40;
  for (const Shape& sh : shapes)
    for (int spread : {0, 6}) {
      SCOPED_TRACE(std::to_string(sh.m) + " x " + std::to_string(sh.n) + " x " + std::to_string(sh.k) +
                   ", exponents spread over 2^" + std::to_string(spread));
      const Case h = random_case(sh.m, sh.n, sh.k, spread, seed++);
      DeviceCase d(h, Layout::row_major, false, false);
      const std::size_t full = ozaki_gemm_workspace_bytes(ctx, d.p);
      void* ws = nullptr;
      ASSERT_EQ(cudaMalloc(&ws, std::max<std::size_t>(full, 1)), cudaSuccess);
      for (double fraction : {1.0, 0.2}) {
        const auto bytes = fraction == 1.0 ? full : std::size_t(double(full) * fraction) / 256 * 256;
        OzakiPlan plan;
        try {
          plan = ozaki_gemm(ctx, d.p, nullptr, Workspace{ws, bytes});
        } catch (const Error& e) {
          // Only a workspace below the least one pass needs may be refused, and as usage.
          EXPECT_LT(fraction, 1.0) << e.what();
          EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
          EXPECT_NE(std::string(e.what()).find("needs at least"), std::string::npos) << e.what();
          continue;
        }
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<double> want = host_scheme(h, plan.bits), got = d.result();
        std::int64_t differ = 0;
        for (std::size_t i = 0; i < want.size(); ++i) differ += got[i] != want[i];
        EXPECT_EQ(differ, 0) << fraction << " of the workspace, " << plan.moduli << " moduli";
      }
      cudaFree(ws);
    }
}

// Max and median relative error of the emulation and of cuBLAS (DGEMM, or
// pedantic SGEMM for T = float) against double-double.
template <class T = double>
void expect_as_accurate_as_native(const Case& h, const char* what) {
  Context ctx(Backend::cuda);
  const std::vector<double> want = reference(h);
  DeviceCase<T> ours(h, Layout::row_major, false, false), native(h, Layout::row_major, false, false);
  run_ozaki(ctx, ours.p);
  gemm(ctx, native.p, nullptr, GemmOptions{.kernel = "cuda_cublas"});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(as_accurate_as_native(ours.result(), native.result(), want)) << what;
}

// Both checks above fail on each planted fault of the emulation's real result (gemm_faults: a
// term dropped, added twice, of the wrong sign, an edge row or column) and on an entry
// negated (what a residue of the wrong sign gives after the rebuild, or worse).
TEST(GpuOzaki, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  // The cases of EqualsTheSchemeOnTheHostBitForBit and AsAccurateAsNativeDgemmOnUniformInputs.
  for (const bool bitwise : {true, false}) {
    SCOPED_TRACE(bitwise ? "bits against the host scheme" : "accuracy against native DGEMM");
    const Case h = bitwise ? random_case(77, 65, 300, 4, 11) : random_case(96, 80, 4096, 0, 21);
    DeviceCase ours(h, Layout::row_major, false, false), native(h, Layout::row_major, false, false);
    const OzakiPlan plan = run_ozaki(ctx, ours.p);
    gemm(ctx, native.p, nullptr, GemmOptions{.kernel = "cuda_cublas"});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<double> got = ours.result();
    const std::vector<double> scheme = bitwise ? host_scheme(h, plan.bits) : std::vector<double>{};
    const std::vector<double> want = bitwise ? std::vector<double>{} : reference(h), theirs = native.result();
    // The result on the host as a problem of its own, for the faults' terms.
    GemmProblem p;
    p.dtype = DType::f64;
    p.m = h.m, p.n = h.n, p.k = h.k;
    p.a = h.a.data(), p.lda = h.k, p.b = h.b.data(), p.ldb = h.n, p.c = got.data(), p.ldc = h.n;
    std::vector<test::PlantedFault> faults = test::gemm_faults(p);
    faults.push_back({"entry (0, 1) negated", [&] { got[1] = -got[1]; }});
    const auto check = [&] { return bitwise ? bits_equal(got, scheme) : as_accurate_as_native(got, theirs, want); };
    EXPECT_EQ(test::expect_faults_caught(test::output_bytes(got), check, faults), int(faults.size()));
  }
}

TEST(GpuOzaki, AsAccurateAsNativeDgemmOnUniformInputs) {
  SKIP_WITHOUT_DEVICE();
  expect_as_accurate_as_native(random_case(96, 80, 4096, 0, 21), "exponents 0");
}

TEST(GpuOzaki, AsAccurateAsNativeDgemmWithExponentsSpreadOver2To8) {
  SKIP_WITHOUT_DEVICE();
  expect_as_accurate_as_native(random_case(96, 80, 2048, 8, 22), "exponents +-8");
}

TEST(GpuOzaki, AsAccurateAsNativeDgemmWithExponentsSpreadOver2To30) {
  SKIP_WITHOUT_DEVICE();
  expect_as_accurate_as_native(random_case(80, 72, 1024, 30, 28), "exponents +-30");
}

TEST(GpuOzaki, AsAccurateAsNativeDgemmOnRowsThatCancel) {
  SKIP_WITHOUT_DEVICE();
  // Terms in pairs that cancel to 20 bits: A(i, p) = -A(i, p - 1) (1 + 2^-20)
  // and B's row p equal to its row p - 1, for every odd p.
  Case h = random_case(64, 48, 1024, 2, 23);
  for (std::int64_t p = 1; p < h.k; p += 2) {
    for (std::int64_t i = 0; i < h.m; ++i)
      h.a[std::size_t(i * h.k + p)] = -h.a[std::size_t(i * h.k + p - 1)] * (1 + std::ldexp(1.0, -20));
    for (std::int64_t j = 0; j < h.n; ++j) h.b[std::size_t(p * h.n + j)] = h.b[std::size_t((p - 1) * h.n + j)];
  }
  expect_as_accurate_as_native(h, "cancelling pairs");
}

TEST(GpuOzaki, ZeroRowsAndSubnormalEntries) {
  SKIP_WITHOUT_DEVICE();
  Case h = random_case(40, 36, 256, 2, 24);
  for (std::int64_t p = 0; p < h.k; ++p) {
    h.a[std::size_t(3 * h.k + p)] = 0;                                                 // a zero row
    h.a[std::size_t(5 * h.k + p)] = std::ldexp(h.a[std::size_t(5 * h.k + p)], -1040);  // subnormal row
    h.b[std::size_t(p * h.n + 7)] = 0;                                                 // a zero column
  }
  Context ctx(Backend::cuda);
  DeviceCase d(h, Layout::row_major, false, false);
  const OzakiPlan plan = run_ozaki(ctx, d.p);
  const std::vector<double> got = d.result(), want = host_scheme(h, plan.bits), exact = reference(h);
  for (std::int64_t j = 0; j < h.n; ++j) EXPECT_EQ(got[std::size_t(3 * h.n + j)], 0.0);
  for (std::int64_t i = 0; i < h.m; ++i) EXPECT_EQ(got[std::size_t(i * h.n + 7)], 0.0);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "entry " << i;
  // The subnormal row's products: tiny, but as accurate as their size allows.
  for (std::int64_t j = 0; j < h.n; ++j) {
    const double w = exact[std::size_t(5 * h.n + j)];
    if (j == 7) continue;
    EXPECT_NEAR(got[std::size_t(5 * h.n + j)], w, std::fabs(w) * 1e-12 + 1e-320);
  }
}

TEST(GpuOzaki, AlphaBetaAndEmptyK) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = random_case(33, 29, 500, 3, 25);
  std::vector<double> c0(std::size_t(h.m * h.n));
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = std::sin(double(i)) * 100;
  DeviceCase d(h, Layout::col_major, true, false, &c0);
  d.p.alpha = -2.5, d.p.beta = 0.75;
  run_ozaki(ctx, d.p);
  const std::vector<double> got = d.result(), exact = reference(h);
  for (std::int64_t i = 0; i < h.m; ++i)
    for (std::int64_t j = 0; j < h.n; ++j) {
      // Within 2^-40 of the terms' magnitude: |alpha| sum |a| |b| + |beta C0|.
      double size = 0;
      for (std::int64_t p = 0; p < h.k; ++p) size += std::fabs(h.opa(i, p) * h.opb(p, j));
      const std::size_t e = std::size_t(i * h.n + j);
      const double w = -2.5 * exact[e] + 0.75 * c0[e];
      EXPECT_NEAR(got[e], w, 0x1p-40 * (2.5 * size + 0.75 * std::fabs(c0[e]))) << "entry " << e;
    }
  // k = 0: C = beta C0, A and B not read.
  Case empty{h.m, h.n, 0, {}, {}};
  DeviceCase z(empty, Layout::row_major, false, false, &c0);
  z.p.beta = 0.5;
  run_ozaki(ctx, z.p);
  const std::vector<double> scaled = z.result();
  for (std::size_t i = 0; i < scaled.size(); ++i) EXPECT_EQ(scaled[i], 0.5 * c0[i]);
}

TEST(GpuOzaki, InfAndNanAreRefusedNamingTheLine) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  Case h = random_case(20, 18, 40, 1, 26);
  h.a[std::size_t(6 * h.k + 11)] = INFINITY;
  {
    DeviceCase d(h, Layout::row_major, false, true);
    try {
      run_ozaki(ctx, d.p);
      ADD_FAILURE() << "an Inf in A ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("op(A) has an Inf or NaN in row 6"), std::string::npos) << e.what();
    }
  }
  h.a[std::size_t(6 * h.k + 11)] = 1;
  h.b[std::size_t(9 * h.n + 13)] = NAN;
  DeviceCase d(h, Layout::col_major, true, false);
  try {
    run_ozaki(ctx, d.p);
    ADD_FAILURE() << "a NaN in B ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("op(B) has an Inf or NaN in column 13"), std::string::npos) << e.what();
  }
}

// The reference entry beside the emulation: cuBLAS's own FP64 emulation (native DGEMM where
// cuBLAS has none) runs through gemm() and is FP64-accurate here.
TEST(GpuOzaki, CublasFp64EmulationEntryRuns) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = random_case(64, 48, 300, 4, 29);
  DeviceCase d(h, Layout::row_major, false, true);
  gemm(ctx, d.p, nullptr, GemmOptions{.kernel = "cuda_cublas_f64_emulated"});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Errors e = relative_errors(d.result(), reference(h));
  EXPECT_LT(e.max, 1e-12);
}

TEST(GpuOzaki, TooSmallAWorkspaceIsAUsageError) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = random_case(16, 16, 16, 0, 27);
  DeviceCase d(h, Layout::row_major, false, false);
  const std::size_t bytes = ozaki_gemm_workspace_bytes(ctx, d.p);
  void* ws = nullptr;
  ASSERT_EQ(cudaMalloc(&ws, bytes), cudaSuccess);
  EXPECT_THROW(ozaki_gemm(ctx, d.p, nullptr, Workspace{ws, bytes - 256}), Error);
  cudaFree(ws);
}

TEST(GpuOzaki, F32EqualsTheSchemeOnTheHostBitForBit) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const Case h = as_floats(random_case(70, 90, 513, 5, 31));
  // 12 moduli: integers beyond 32 bits, from floats.
  for (int moduli : {0, 12})
    for (bool ta : {false, true}) {
      SCOPED_TRACE("moduli " + std::to_string(moduli) + (ta ? ", At" : ", A"));
      DeviceCase<float> d(h, Layout::row_major, ta, !ta);
      const OzakiPlan plan = run_ozaki(ctx, d.p, moduli);
      EXPECT_GE(plan.bits, 24);
      const std::vector<double> want = host_scheme(h, plan.bits), got = d.result();
      std::int64_t differ = 0;
      for (std::size_t i = 0; i < want.size(); ++i) differ += got[i] != double(float(want[i]));
      EXPECT_EQ(differ, 0);
    }
}

TEST(GpuOzaki, F32AsAccurateAsPedanticSgemm) {
  SKIP_WITHOUT_DEVICE();
  expect_as_accurate_as_native<float>(as_floats(random_case(96, 80, 4096, 0, 32)), "f32, exponents 0");
  expect_as_accurate_as_native<float>(as_floats(random_case(96, 80, 2048, 8, 33)), "f32, exponents +-8");
  expect_as_accurate_as_native<float>(as_floats(random_case(80, 72, 1024, 30, 34)), "f32, exponents +-30");
}

}  // namespace
}  // namespace gemmkit

// GPU tests of the tensor-core entries (bf16, f16, tf32 inputs): every entry of the
// registry that declares one of these dtypes is run on edge shapes, the four transposes,
// leading dimensions on and off 16-byte boundaries (the padding holds NaN), beta = 0 over a
// NaN-poisoned C or random alpha and beta, and C in the input type or f32, and compared
// with a double-precision reference computed from the very values the kernel read.
// Kernels that declare a precondition may refuse a case; the Hopper rungs must accept every
// case with 16-byte aligned operands (except K = 0), tf32 in every layout (they copy an
// MN-major tf32 operand into K-major form first).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

// Host storage of one element of `dtype`, with conversions through float.
struct Element {
  DType dtype;
  std::size_t bytes() const { return gpu_test::element_bytes(dtype); }
  void store(unsigned char* p, float v) const { gpu_test::store_element(dtype, p, v); }
  float load(const unsigned char* p) const { return gpu_test::load_element(dtype, p); }
};

// rows x cols with leading dimension ld: uniform [-1, 1) inside, NaN in the padding.
struct HostMatrix {
  Element e;
  std::int64_t rows, cols, ld;
  std::vector<unsigned char> bytes;
  HostMatrix(Element el, std::int64_t r, std::int64_t c, std::int64_t l, std::mt19937_64& rng)
      : e(el), rows(r), cols(c), ld(l), bytes(std::size_t(r * l) * el.bytes()) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < l; ++j)
        e.store(at(i, j), j < c ? u(rng) : std::numeric_limits<float>::quiet_NaN());
  }
  unsigned char* at(std::int64_t i, std::int64_t j) { return bytes.data() + (i * ld + j) * e.bytes(); }
  float get(std::int64_t i, std::int64_t j) const { return e.load(bytes.data() + (i * ld + j) * e.bytes()); }
};

struct Shape {
  std::int64_t m, n, k;
};

// Tile edges of the tensor rungs (128 x 128 and 128 x 256 blocks, K tiles of 32 and 64),
// K shorter than one wgmma, primes, skinny shapes.
const Shape kShapes[] = {{1, 1, 1},     {2, 3, 5},     {64, 64, 8},    {127, 255, 63},
                         {129, 257, 65}, {128, 256, 64}, {37, 53, 97},   {255, 129, 257},
                         {300, 7, 131},  {17, 600, 40},  {520, 33, 17},  {96, 80, 3}};

// Leading dimension of a `width`-wide matrix of `bytes`-byte elements: a whole number of
// 16 bytes past the width, or odd (never 16-byte aligned).
std::int64_t leading_dimension(std::int64_t width, std::size_t bytes, bool aligned16) {
  if (!aligned16) return width % 2 == 0 ? width + 1 : width + 2;
  const std::int64_t per16 = 16 / std::int64_t(bytes);
  return (width + 1 + per16 - 1) / per16 * per16;
}

struct Case {
  DType dtype;
  bool out_f32;
  Shape s;
  bool ta, tb, aligned, beta_zero;
  std::string describe() const {
    std::ostringstream o;
    o << s.m << "x" << s.n << "x" << s.k << (ta ? " A^T" : "") << (tb ? " B^T" : "") << " "
      << dtype_name(dtype) << (out_f32 ? "->f32" : "") << (aligned ? " ld 16B" : " ld odd")
      << (beta_zero ? " beta=0 over NaN" : " beta!=0");
    return o.str();
  }
};

// Relative Frobenius error each output dtype may show (on top of the exact products of
// the stored inputs): FP32 summation, plus one rounding of each output to f16 (2^-11) or
// bf16 (2^-8); tf32 inputs lose up to 13 mantissa bits each (the Hopper path truncates).
double tolerance_for(DType in, bool out_f32, std::int64_t k) {
  double base = 1e-5;
  if (in == DType::tf32) base = 2e-3;
  else if (!out_f32) base = in == DType::bf16 ? 1e-2 : 2e-3;
  return base * std::max(1.0, std::sqrt(double(k) / 1024.0));
}

enum class Outcome { passed, failed, rejected };

Outcome run_case(const KernelEntry& e, const Case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Element in{c.dtype}, out{c.out_f32 ? DType::f32 : c.dtype};
  const Shape& s = c.s;
  const std::int64_t ar = c.ta ? s.k : s.m, ac = c.ta ? s.m : s.k;
  const std::int64_t br = c.tb ? s.n : s.k, bc = c.tb ? s.k : s.n;
  HostMatrix a(in, ar, ac, leading_dimension(ac, in.bytes(), c.aligned), rng);
  HostMatrix b(in, br, bc, leading_dimension(bc, in.bytes(), c.aligned), rng);
  HostMatrix cm(out, s.m, s.n, leading_dimension(s.n, out.bytes(), c.aligned), rng);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  const double alpha = u(rng) * (rng() & 1 ? -1 : 1);
  const double beta = c.beta_zero ? 0.0 : u(rng) * (rng() & 1 ? -1 : 1);
  if (c.beta_zero)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) out.store(cm.at(i, j), std::numeric_limits<float>::quiet_NaN());
  const HostMatrix before = cm;

  GemmProblem p;
  p.dtype = c.dtype;
  if (c.out_f32) p.out_dtype = DType::f32;
  p.trans_a = c.ta;
  p.trans_b = c.tb;
  p.m = s.m, p.n = s.n, p.k = s.k;
  p.alpha = alpha, p.beta = beta;
  p.a = a.bytes.data(), p.lda = a.ld;
  p.b = b.bytes.data(), p.ldb = b.ld;
  p.c = cm.bytes.data(), p.ldc = cm.ld;
  if (e.rejects(p)) return Outcome::rejected;
  const std::string what = e.name + " " + c.describe();
  GemmOptions o;
  o.kernel = e.name;
  o.context = &gpu_test::sweep_context();
  try {
    gemm(p, o);
  } catch (const std::exception& x) {
    ADD_FAILURE() << what << ": " << x.what();
    return Outcome::failed;
  }

  double num = 0, den = 0;
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0, sum_abs = 0;
      for (std::int64_t q = 0; q < s.k; ++q) {
        const double t = double(c.ta ? a.get(q, i) : a.get(i, q)) * double(c.tb ? b.get(j, q) : b.get(q, j));
        sum += t;
        sum_abs += std::fabs(t);
      }
      const double beta_c = c.beta_zero ? 0.0 : beta * double(before.get(i, j));
      const double ref = alpha * sum + beta_c;
      const double got = cm.get(i, j);
      if (!std::isfinite(got)) {
        ADD_FAILURE() << what << ": C(" << i << ", " << j << ") = " << got;
        return Outcome::failed;
      }
      num += (got - ref) * (got - ref);
      // The scale includes the size of the terms, so cancellation (alpha AB against beta C,
      // or a sum of a few products) cannot make a well-rounded result look wrong.
      den += alpha * sum * alpha * sum + beta_c * beta_c + alpha * alpha * sum_abs * sum_abs / double(s.k);
    }
    for (std::int64_t j = s.n; j < cm.ld; ++j)
      if (std::memcmp(cm.at(i, j), before.bytes.data() + (i * cm.ld + j) * out.bytes(), out.bytes()) != 0) {
        ADD_FAILURE() << what << ": the padding of C at (" << i << ", " << j << ") was written";
        return Outcome::failed;
      }
  }
  const double error = std::sqrt(num / std::max(den, 1e-300));
  const double tol = tolerance_for(c.dtype, c.out_f32, s.k);
  EXPECT_LE(error, tol) << what;
  return error <= tol ? Outcome::passed : Outcome::failed;
}

// Not cuda_wgmma_fixed, which compiles a kernel per shape: test_gpu_wgmma_tuned.cpp tests it.
std::vector<std::string> tensor_entry_names() {
  std::vector<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    if (e->compiles_per_shape) continue;
    for (DType d : {DType::bf16, DType::f16, DType::tf32})
      if (e->supports(d)) {
        names.push_back(e->name);
        break;
      }
  }
  return names;
}

class GpuTensorKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuTensorKernel, EdgeShapesEveryLayoutAndOutput) {
  SKIP_WITHOUT_DEVICE();
  const KernelEntry& e = gemm_registry().get(GetParam());
  if (current_compute_capability() < e.min_compute_capability)
    GTEST_SKIP() << e.name << " needs compute capability " << e.min_compute_capability;
  // cuda_wgmma_padded runs only what rung 19 refuses: it declines aligned operands.
  const bool hopper = e.min_compute_capability >= 90 && e.name != "cuda_wgmma_padded";
  int passed = 0, rejected = 0;
  std::uint64_t seed = std::hash<std::string>{}(e.name);
  for (DType dtype : {DType::bf16, DType::f16, DType::tf32}) {
    if (!e.supports(dtype)) continue;
    for (bool out_f32 : {false, true}) {
      if (out_f32 && (dtype == DType::tf32 || !e.half_inputs_f32_output)) continue;
      for (const Shape& s : kShapes)
        for (int t = 0; t < 4; ++t)
          for (bool aligned : {true, false}) {
            const Case c{dtype, out_f32, s, bool(t & 1), bool(t & 2), aligned, (t + s.k) % 2 == 0};
            const Outcome r = run_case(e, c, ++seed);
            if (r == Outcome::passed) ++passed;
            if (r == Outcome::rejected) {
              ++rejected;
              if (hopper && aligned)
                ADD_FAILURE() << e.name << " refused an aligned case: " << c.describe();
            }
          }
    }
  }
  EXPECT_GT(passed, 0) << e.name << " accepted no case";
  std::cout << "[   NOTE   ] " << e.name << ": " << passed << " cases passed, " << rejected
            << " refused by its precondition" << std::endl;
}

std::string entry_test_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }
INSTANTIATE_TEST_SUITE_P(Kernels, GpuTensorKernel, ::testing::ValuesIn(tensor_entry_names()),
                         entry_test_name);

// Many tiles per persistent block, an odd number of 128-row tiles (the second block of a
// cluster pair gets an empty tile), a last round of tiles split along K over every cluster
// (stream-K: rung 19 on the H200's 66 clusters makes 96 cluster tiles of each shape, a
// last round of 30; the first two with ragged K and ordinary stores or TMA stores of C,
// the third tf32 through the K-major copy), and a repeat that must give the same bits:
// checked with random vectors (C x against A (B x) in double) rather than a full
// reference.
TEST(GpuTensorLarge, PersistentTilesAddUpAndRepeatExactly) {
  SKIP_WITHOUT_DEVICE();
  struct LargeCase {
    DType dtype;
    Shape s;
    std::int64_t c_pad;
  };
  const LargeCase cases[] = {{DType::bf16, {3841, 1401, 2056}, 7},  // 31 row tiles, ragged N
                             {DType::bf16, {2048, 3072, 1000}, 0},  // C through TMA stores
                             {DType::tf32, {2048, 3072, 777}, 0}};  // B copied K-major
  for (const char* name : {"cuda_wgmma_ws", "cuda_wgmma_tma", "cuda_mma_sync"}) {
    const KernelEntry* e = gemm_registry().find(name);
    if (!e || current_compute_capability() < e->min_compute_capability) continue;
    for (const LargeCase& lc : cases) {
      if (!e->supports(lc.dtype)) continue;
      std::mt19937_64 rng(7);
      const Element el{lc.dtype};
      const Shape& s = lc.s;
      const std::int64_t per16 = 16 / std::int64_t(el.bytes());
      const std::int64_t lda = (s.k + per16 - 1) / per16 * per16, ldb = (s.n + 7 + per16 - 1) / per16 * per16;
      HostMatrix a(el, s.m, s.k, lda, rng), b(el, s.k, s.n, ldb, rng), c(el, s.m, s.n, s.n + lc.c_pad, rng);
      GemmProblem p;
      p.dtype = lc.dtype;
      p.m = s.m, p.n = s.n, p.k = s.k;
      p.a = a.bytes.data(), p.lda = a.ld, p.b = b.bytes.data(), p.ldb = b.ld;
      p.c = c.bytes.data(), p.ldc = c.ld;
      const std::string what = std::string(name) + " " + std::string(dtype_name(lc.dtype)) + " " +
                               std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      ASSERT_FALSE(e->rejects(p)) << what << ": " << *e->rejects(p);
      GemmOptions o;
      o.kernel = name;
      gemm(p, o);
      const std::vector<unsigned char> first = c.bytes;
      gemm(p, o);
      EXPECT_EQ(first, c.bytes) << what << ": two runs differ";
      for (int v = 0; v < 3; ++v) {
        std::vector<double> x(std::size_t(s.n)), bx(std::size_t(s.k), 0.0);
        std::normal_distribution<double> g;
        for (double& xi : x) xi = g(rng);
        for (std::int64_t q = 0; q < s.k; ++q)
          for (std::int64_t j = 0; j < s.n; ++j) bx[q] += double(b.get(q, j)) * x[j];
        double num = 0, den = 0;
        for (std::int64_t i = 0; i < s.m; ++i) {
          double abx = 0, cx = 0;
          for (std::int64_t q = 0; q < s.k; ++q) abx += double(a.get(i, q)) * bx[q];
          for (std::int64_t j = 0; j < s.n; ++j) cx += double(c.get(i, j)) * x[j];
          num += (cx - abx) * (cx - abx);
          den += abx * abx;
        }
        EXPECT_LT(std::sqrt(num / den), 1e-2) << what << ": C x differs from A (B x)";
      }
    }
  }
}

}  // namespace

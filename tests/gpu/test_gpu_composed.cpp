// GPU tests of the composed rungs. 22, cuda_wgmma_padded: odd shapes whose operands TMA
// cannot describe (rows off 16 bytes, bases one element off), every transpose, bf16, f16
// and tf32, C in the input type or f32, beta = 0 over NaN or random alpha and beta, against
// a double reference of the stored values; and its refusal of aligned problems. 23,
// cuda_split_k: long K with integer-valued inputs, so the f32 sums are exact and the
// result must equal the integer reference exactly, K not a multiple of the slice count,
// every transpose; the same bits on every run with non-integer inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cuda/check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

using gpu_test::load_element;
using gpu_test::store_element;
std::size_t bytes_of(DType d) { return gpu_test::element_bytes(d); }

// A rows x cols matrix (leading dimension ld, NaN in the padding) on the host and on the
// device, where it starts `offset` elements into its buffer (1: off 16 bytes), and the
// buffer ends where the last row does (so a read past it is out of bounds).
struct TestMatrix {
  DType d;
  std::int64_t rows, cols, ld, offset;
  std::vector<unsigned char> host;
  cuda::DeviceBuffer<unsigned char> device;
  template <class Gen>
  TestMatrix(DType dtype, std::int64_t r, std::int64_t c, std::int64_t l, std::int64_t off, Gen&& value)
      : d(dtype), rows(r), cols(c), ld(l), offset(off), host(std::size_t(r * l) * bytes_of(dtype)),
        device(std::size_t(((r - 1) * l + c + off)) * bytes_of(dtype)) {
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < l; ++j) store_element(d, at(i, j), j < c ? value() : std::numeric_limits<float>::quiet_NaN());
    upload();
  }
  unsigned char* at(std::int64_t i, std::int64_t j) { return host.data() + (i * ld + j) * bytes_of(d); }
  float get(std::int64_t i, std::int64_t j) const { return load_element(d, host.data() + (i * ld + j) * bytes_of(d)); }
  void* dev() const { return device.data() + offset * bytes_of(d); }
  std::size_t span() const { return std::size_t((rows - 1) * ld + cols) * bytes_of(d); }
  void upload() { GEMMKIT_CUDA_CHECK(cudaMemcpy(dev(), host.data(), span(), cudaMemcpyHostToDevice)); }
  void download() { GEMMKIT_CUDA_CHECK(cudaMemcpy(host.data(), dev(), span(), cudaMemcpyDeviceToHost)); }
};

void run_on_device(const std::string& kernel, const GemmProblem& p) {
  Context ctx(Backend::cuda);
  gemm(ctx, p, nullptr, GemmOptions{.kernel = kernel});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << kernel;
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << kernel;
}

// ---- rung 22 ----------------------------------------------------------------------------

struct PadCase {
  DType dtype;
  bool out_f32;
  std::int64_t m, n, k;
  bool ta, tb;
  std::int64_t offset;  // elements the operands start past 16 bytes
  bool beta_zero;
  std::string describe() const {
    std::ostringstream o;
    o << m << "x" << n << "x" << k << (ta ? " A^T" : "") << (tb ? " B^T" : "") << " "
      << dtype_name(dtype) << (out_f32 ? "->f32" : "") << " offset " << offset
      << (beta_zero ? " beta=0 over NaN" : " beta!=0");
    return o.str();
  }
};

// Leading dimension never on 16 bytes: the width plus one or two, odd.
std::int64_t odd_ld(std::int64_t width) { return width % 2 == 0 ? width + 1 : width + 2; }

void check_padded(const PadCase& c, std::uint64_t seed) {
  const std::string what = "cuda_wgmma_padded " + c.describe();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto value = [&] { return u(rng); };
  const DType out = c.out_f32 ? DType::f32 : c.dtype;
  const std::int64_t ar = c.ta ? c.k : c.m, ac = c.ta ? c.m : c.k;
  const std::int64_t br = c.tb ? c.n : c.k, bc = c.tb ? c.k : c.n;
  TestMatrix a(c.dtype, ar, ac, odd_ld(ac), c.offset, value);
  TestMatrix b(c.dtype, br, bc, odd_ld(bc), c.offset, value);
  TestMatrix cm(out, c.m, c.n, odd_ld(c.n), c.offset, value);
  const double alpha = 1.5, beta = c.beta_zero ? 0.0 : -0.75;
  if (c.beta_zero) {
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) store_element(out, cm.at(i, j), std::numeric_limits<float>::quiet_NaN());
    cm.upload();
  }
  const std::vector<unsigned char> before = cm.host;
  GemmProblem p;
  p.dtype = c.dtype;
  if (c.out_f32) p.out_dtype = DType::f32;
  p.trans_a = c.ta, p.trans_b = c.tb;
  p.m = c.m, p.n = c.n, p.k = c.k;
  p.alpha = alpha, p.beta = beta;
  p.a = a.dev(), p.lda = a.ld, p.b = b.dev(), p.ldb = b.ld, p.c = cm.dev(), p.ldc = cm.ld;
  const KernelEntry& e = gemm_registry().get("cuda_wgmma_padded");
  if (c.dtype == DType::tf32 && c.ta && !c.tb) {
    // Both operands MN-major: the inner rung transposes them itself, so nothing is padded.
    EXPECT_TRUE(e.rejects(p).has_value()) << what << ": accepted a problem that needs no copy";
    return;
  }
  if (auto why = e.rejects(p)) {
    ADD_FAILURE() << what << ": refused: " << *why;
    return;
  }
  run_on_device(e.name, p);
  cm.download();
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < cm.ld; ++j) {
      const unsigned char* old = before.data() + (i * cm.ld + j) * bytes_of(out);
      if (j >= c.n) {
        ASSERT_EQ(std::memcmp(cm.at(i, j), old, bytes_of(out)), 0) << what << ": C's padding written at (" << i << ", " << j << ")";
        continue;
      }
      double sum = 0, sum_abs = 0;
      for (std::int64_t q = 0; q < c.k; ++q) {
        const double t = double(c.ta ? a.get(q, i) : a.get(i, q)) * double(c.tb ? b.get(j, q) : b.get(q, j));
        sum += t;
        sum_abs += std::fabs(t);
      }
      const double beta_c = c.beta_zero ? 0.0 : beta * double(load_element(out, old));
      const double ref = alpha * sum + beta_c, got = cm.get(i, j);
      ASSERT_TRUE(std::isfinite(got)) << what << ": C(" << i << ", " << j << ") = " << got;
      num += (got - ref) * (got - ref);
      den += ref * ref + alpha * alpha * sum_abs * sum_abs / double(c.k);
    }
  double tol = c.dtype == DType::tf32 ? 2e-3 : c.out_f32 ? 1e-5 : c.dtype == DType::bf16 ? 1e-2 : 2e-3;
  tol *= std::max(1.0, std::sqrt(double(c.k) / 1024.0));
  EXPECT_LE(std::sqrt(num / std::max(den, 1e-300)), tol) << what;
}

bool hopper_present() { return cuda_device_available() && current_compute_capability() >= 90; }

TEST(GpuPadded, OddShapesEveryTransposeDtypeAndOutput) {
  SKIP_WITHOUT_DEVICE();
  if (!hopper_present()) GTEST_SKIP() << "cuda_wgmma_padded needs compute capability 90";
  struct S {
    std::int64_t m, n, k;
  };
  // Primes past the 128 x 256 tiles, N = 3, K shorter than one wgmma and ragged K.
  const S shapes[] = {{301, 409, 205}, {257, 3, 131}, {3, 263, 67}, {131, 137, 5}, {1, 1, 1}};
  std::uint64_t seed = 1;
  int cases = 0;
  for (DType d : {DType::bf16, DType::f16, DType::tf32})
    for (bool out_f32 : {false, true}) {
      if (out_f32 && d == DType::tf32) continue;
      for (const S& s : shapes)
        for (int t = 0; t < 4; ++t)
          for (std::int64_t offset : {0, 1}) {
            check_padded({d, out_f32, s.m, s.n, s.k, bool(t & 1), bool(t & 2), offset, (t + offset) % 2 == 0}, ++seed);
            ++cases;
          }
    }
  std::cout << "[   NOTE   ] cuda_wgmma_padded: " << cases << " cases" << std::endl;
}

// Rows on 16 bytes but a base one element off (every row then off too), and a large odd
// problem with many tiles (stream-K's last round in rung 19).
TEST(GpuPadded, BaseOffByOneElementAndManyTiles) {
  SKIP_WITHOUT_DEVICE();
  if (!hopper_present()) GTEST_SKIP() << "cuda_wgmma_padded needs compute capability 90";
  check_padded({DType::bf16, false, 1001, 1203, 509, false, false, 3, false}, 99);
  check_padded({DType::f16, true, 1301, 1103, 257, true, true, 1, true}, 98);
}

TEST(GpuPadded, RefusesAlignedOperandsSayingWhy) {
  GemmProblem p;
  p.dtype = DType::bf16;
  p.m = 256, p.n = 256, p.k = 256;
  p.lda = p.ldb = p.ldc = 256;  // null pointers are on 16 bytes
  const KernelEntry& e = gemm_registry().get("cuda_wgmma_padded");
  const auto why = e.rejects(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("already TMA-aligned"), std::string::npos) << *why;
  p.lda = 255;
  EXPECT_FALSE(e.rejects(p)) << *e.rejects(p);
  // tf32: an MN-major operand is transposed by the inner rung from any address; a K-major
  // one off 16 bytes is copied here.
  p.dtype = DType::tf32;
  p.trans_a = true;  // A^T stored (k, m): MN-major, no copy needed
  EXPECT_TRUE(e.rejects(p).has_value());
  p.trans_a = false;
  EXPECT_FALSE(e.rejects(p)) << *e.rejects(p);
  p.k = 0;
  EXPECT_TRUE(e.rejects(p).has_value());
}

// ---- rung 23 ----------------------------------------------------------------------------

struct SplitCase {
  std::int64_t m, n, k;
  bool ta, tb;
  bool beta_zero;
};

GemmProblem split_problem(const SplitCase& c, const TestMatrix& a, const TestMatrix& b, TestMatrix& cm,
                          double alpha, double beta) {
  GemmProblem p;
  p.dtype = DType::f32;
  p.trans_a = c.ta, p.trans_b = c.tb;
  p.m = c.m, p.n = c.n, p.k = c.k;
  p.alpha = alpha, p.beta = beta;
  p.a = a.dev(), p.lda = a.ld, p.b = b.dev(), p.ldb = b.ld, p.c = cm.dev(), p.ldc = cm.ld;
  return p;
}

// Integers in [-2, 2]: every partial sum of up to 2^22 products stays below 2^24, so f32
// adds them exactly and the result must equal the integer reference in every bit.
TEST(GpuSplitK, LongKIntegerInputsExactEveryTranspose) {
  SKIP_WITHOUT_DEVICE();
  const SplitCase cases[] = {
      {96, 80, 40000, false, false, true},   // many slices, K mod slices != 0
      {96, 80, 40000, true, true, false},
      {130, 70, 12345, true, false, false},  // K prime-ish, ragged tiles
      {70, 130, 12347, false, true, true},
      {256, 512, 2605, false, false, false},  // a few slices
      {5, 3, 100003, false, true, false},
  };
  Context ctx(Backend::cuda);
  for (const SplitCase& c : cases) {
    std::mt19937_64 rng(c.k);
    std::uniform_int_distribution<int> u(-2, 2);
    auto value = [&] { return float(u(rng)); };
    const std::int64_t ar = c.ta ? c.k : c.m, ac = c.ta ? c.m : c.k;
    const std::int64_t br = c.tb ? c.n : c.k, bc = c.tb ? c.k : c.n;
    TestMatrix a(DType::f32, ar, ac, ac + 3, 0, value), b(DType::f32, br, bc, bc + 1, 1, value);
    TestMatrix cm(DType::f32, c.m, c.n, c.n + 2, 0, value);
    const double alpha = 2.0, beta = c.beta_zero ? 0.0 : -3.0;
    if (c.beta_zero) {
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) store_element(DType::f32, cm.at(i, j), std::numeric_limits<float>::quiet_NaN());
      cm.upload();
    }
    const std::vector<unsigned char> before = cm.host;
    const GemmProblem p = split_problem(c, a, b, cm, alpha, beta);
    const std::string what = "cuda_split_k " + p.shape_string();
    const GemmOptions o{.kernel = "cuda_split_k"};
    EXPECT_GT(gemm_workspace_bytes(ctx, p, o), 0u) << what << ": expected to be split along K";
    run_on_device("cuda_split_k", p);
    cm.download();
    // op(A) by rows and op(B) by columns, as integers.
    std::vector<std::int64_t> oa(std::size_t(c.m * c.k)), ob(std::size_t(c.n * c.k));
    for (std::int64_t q = 0; q < c.k; ++q) {
      for (std::int64_t i = 0; i < c.m; ++i) oa[i * c.k + q] = std::int64_t(c.ta ? a.get(q, i) : a.get(i, q));
      for (std::int64_t j = 0; j < c.n; ++j) ob[j * c.k + q] = std::int64_t(c.tb ? b.get(j, q) : b.get(q, j));
    }
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t q = 0; q < c.k; ++q) sum += oa[i * c.k + q] * ob[j * c.k + q];
        float old;
        std::memcpy(&old, before.data() + (i * cm.ld + j) * 4, 4);
        const double ref = alpha * double(sum) + (c.beta_zero ? 0.0 : beta * double(old));
        ASSERT_EQ(double(cm.get(i, j)), ref) << what << " at C(" << i << ", " << j << ")";
      }
  }
}

TEST(GpuSplitK, SameBitsEveryRun) {
  SKIP_WITHOUT_DEVICE();
  const SplitCase c{128, 128, 65537, false, false, false};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto value = [&] { return u(rng); };
  TestMatrix a(DType::f32, c.m, c.k, c.k, 0, value), b(DType::f32, c.k, c.n, c.n, 0, value);
  TestMatrix cm(DType::f32, c.m, c.n, c.n, 0, value);
  const std::vector<unsigned char> c0 = cm.host;
  const GemmProblem p = split_problem(c, a, b, cm, 0.5, 0.25);
  Context ctx(Backend::cuda);
  EXPECT_GT(gemm_workspace_bytes(ctx, p, GemmOptions{.kernel = "cuda_split_k"}), 0u);
  std::vector<unsigned char> first;
  for (int run = 0; run < 3; ++run) {
    cm.host = c0;
    cm.upload();
    run_on_device("cuda_split_k", p);
    cm.download();
    if (run == 0) first = cm.host;
    else EXPECT_EQ(first, cm.host) << "run " << run << " differs from run 0";
  }
  // And it is the product: row 0 against a double reference.
  for (std::int64_t j = 0; j < c.n; ++j) {
    double sum = 0;
    for (std::int64_t q = 0; q < c.k; ++q) sum += double(a.get(0, q)) * double(b.get(q, j));
    float old;
    std::memcpy(&old, c0.data() + j * 4, 4);
    EXPECT_NEAR(cm.get(0, j), 0.5 * sum + 0.25 * old, 1e-3) << "C(0, " << j << ")";
  }
}

}  // namespace

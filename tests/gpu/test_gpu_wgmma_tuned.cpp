// GPU tests of rung 21 (cuda_wgmma_tuned, cuda_wgmma_fixed and the cuda_wgmma_<tile> entries) beyond the
// registry-driven ones (edge shapes, layouts, alpha/beta, NaN C, batches), which are too
// short in K for the rule to split: long K, where every configuration splits, checked
// exactly and run after run, in every transpose, with beta and with C in each output type.
//
// Exact: inputs are small integers (|x| <= 2), exact in bf16, f16 and tf32; every product
// and every partial sum of a K of 2^16 stays below 2^24, so FP32 adds them exactly in any
// order, and C in f32 must equal the integer reference. Repeatable: the same problem on
// values that are not integers, where the order of the additions shows in the bits, must
// give the same bits three runs running (the slices of a tile are added in a fixed order).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

using gpu_test::element_bytes;
using gpu_test::store_element;

// rows x cols, leading dimension ld (whole 16 bytes), from `values` (row-major, rows x cols).
std::vector<unsigned char> pack(DType d, const std::vector<float>& values, std::int64_t rows,
                                std::int64_t cols, std::int64_t ld, std::int64_t batch = 1,
                                std::int64_t stride = 0) {
  std::vector<unsigned char> out(std::size_t((batch - 1) * stride + rows * ld) * element_bytes(d), 0);
  for (std::int64_t z = 0; z < batch; ++z)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        store_element(d, out.data() + std::size_t(z * stride + i * ld + j) * element_bytes(d),
              values[std::size_t((z * rows + i) * cols + j)]);
  return out;
}

std::int64_t ld16(std::int64_t cols, DType d) {
  const std::int64_t per16 = 16 / std::int64_t(element_bytes(d));
  return (cols + per16 - 1) / per16 * per16;
}

// The rung 21 entries to test: the tuned choice, each tile as the rule splits it, and each
// split as far as it goes.
std::vector<const KernelEntry*> rung21_entries() {
  std::vector<const KernelEntry*> out;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    if (e->rung == 21) out.push_back(e);
  }
  return out;
}

struct LongK {
  std::int64_t m, n, k, batch;
};

// A batch of `batch` products, matrices of A and B `gap` elements apart beyond their size,
// C in f32; the values are integers in [-2, 2] (exact) or uniform in [-1, 1) (not).
struct Problem {
  DType dtype;
  LongK s;
  std::vector<float> a, b;  // batch x m x k, batch x k x n
  std::int64_t lda, ldb, stride_a, stride_b;
  std::vector<unsigned char> a_bytes, b_bytes;
  Problem(DType d, LongK shape, bool integers, std::uint64_t seed) : dtype(d), s(shape) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(-2, 2);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto value = [&] { return integers ? float(small(rng)) : u(rng); };
    a.resize(std::size_t(s.batch * s.m * s.k));
    b.resize(std::size_t(s.batch * s.k * s.n));
    for (float& x : a) x = value();
    for (float& x : b) x = value();
    lda = ld16(s.k, d), ldb = ld16(s.n, d);
    stride_a = s.m * lda + 16, stride_b = s.k * ldb + 8;  // 16-byte multiples for every dtype
    a_bytes = pack(d, a, s.m, s.k, lda, s.batch, stride_a);
    b_bytes = pack(d, b, s.k, s.n, ldb, s.batch, stride_b);
  }
  // Runs `kernel`, returns C (batch x m x n floats).
  std::vector<float> run(const std::string& kernel) {
    std::vector<float> c(std::size_t(s.batch * s.m * s.n), -7.0f);
    GemmProblem p;
    p.dtype = dtype;
    if (dtype != DType::tf32) p.out_dtype = DType::f32;
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.a = a_bytes.data(), p.lda = lda;
    p.b = b_bytes.data(), p.ldb = ldb;
    p.c = c.data(), p.ldc = s.n;
    p.batch = s.batch, p.stride_a = stride_a, p.stride_b = stride_b, p.stride_c = s.m * s.n;
    p.alpha = 1.0, p.beta = 0.0;
    const KernelEntry& e = gemm_registry().get(kernel);
    if (auto why = e.rejects(p)) {
      ADD_FAILURE() << kernel << " refused a long-K case: " << *why;
      return c;
    }
    GemmOptions o;
    o.kernel = kernel;
    gemm(p, o);
    return c;
  }
  // The exact products (integer inputs), batch x m x n.
  std::vector<double> reference() const {
    std::vector<double> out(std::size_t(s.batch * s.m * s.n));
    std::vector<std::int64_t> row(std::size_t(s.n));
    for (std::int64_t z = 0; z < s.batch; ++z)
      for (std::int64_t i = 0; i < s.m; ++i) {
        std::fill(row.begin(), row.end(), 0);
        const float* ar = a.data() + (z * s.m + i) * s.k;
        for (std::int64_t q = 0; q < s.k; ++q) {
          const std::int64_t x = std::int64_t(ar[q]);
          if (x == 0) continue;
          const float* br = b.data() + (z * s.k + q) * s.n;
          for (std::int64_t j = 0; j < s.n; ++j) row[std::size_t(j)] += x * std::int64_t(br[j]);
        }
        for (std::int64_t j = 0; j < s.n; ++j) out[std::size_t((z * s.m + i) * s.n + j)] = double(row[std::size_t(j)]);
      }
    return out;
  }
};

bool can_run(const KernelEntry& e) {
  return cuda_device_available() && current_compute_capability() >= e.min_compute_capability;
}

// Long K with few output tiles (where the rule splits), K not a multiple of the K-block,
// M and N not multiples of the tiles, and a strided batch of three.
const LongK kLongK[] = {{130, 200, 65536 + 37, 1}, {64, 72, 20000, 3}};

TEST(GpuWgmmaTuned, SplitKIsExactOnIntegers) {
  SKIP_WITHOUT_DEVICE();
  int ran = 0;
  for (DType dtype : {DType::bf16, DType::f16, DType::tf32})
    for (const LongK& s : kLongK) {
      Problem prob(dtype, s, true, 11 + ran);
      const std::vector<double> ref = prob.reference();  // once per problem
      for (const KernelEntry* e : rung21_entries()) {
        if (!can_run(*e)) continue;
        const std::vector<float> c = prob.run(e->name);
        std::int64_t wrong = 0, first = -1;
        for (std::size_t x = 0; x < c.size(); ++x)
          if (double(c[x]) != ref[x] && wrong++ == 0) first = std::int64_t(x);
        EXPECT_EQ(wrong, 0) << e->name << " " << dtype_name(dtype) << " " << s.m << "x" << s.n << "x" << s.k
                            << " batch " << s.batch << ": " << wrong << " of " << c.size()
                            << " outputs differ from the exact sum, the first at " << first << " ("
                            << (first >= 0 ? c[std::size_t(first)] : 0.0f) << " against "
                            << (first >= 0 ? ref[std::size_t(first)] : 0.0) << ")";
        ++ran;
      }
    }
  if (ran == 0) GTEST_SKIP() << "no rung 21 entry runs on this device";
}

TEST(GpuWgmmaTuned, SplitKGivesTheSameBitsEveryRun) {
  SKIP_WITHOUT_DEVICE();
  int ran = 0;
  for (DType dtype : {DType::bf16, DType::tf32})
    for (const LongK& s : kLongK) {
      Problem prob(dtype, s, false, 29 + ran);
      for (const KernelEntry* e : rung21_entries()) {
        if (!can_run(*e)) continue;
        const std::vector<float> first = prob.run(e->name);
        for (int again = 0; again < 2; ++again) {
          const std::vector<float> c = prob.run(e->name);
          EXPECT_EQ(0, std::memcmp(first.data(), c.data(), c.size() * sizeof(float)))
              << e->name << " " << dtype_name(dtype) << " " << s.m << "x" << s.n << "x" << s.k
              << ": run " << again + 2 << " differs from run 1";
        }
        // Not a reference check (integers do that), but the sums must be sums: finite and
        // not the poison the output started with.
        for (float v : first) ASSERT_TRUE(std::isfinite(v) && v != -7.0f) << e->name;
        ++ran;
      }
    }
  if (ran == 0) GTEST_SKIP() << "no rung 21 entry runs on this device";
}

TEST(GpuWgmmaTuned, EveryTileIsAnEntry) {
  for (const char* tile : {"128x256", "128x128", "64x256", "64x128"}) {
    const std::string name = std::string("cuda_wgmma_") + tile;
    const KernelEntry* e = gemm_registry().find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->rung, 21) << name;
    EXPECT_EQ(e->auto_priority, 0) << name;
    EXPECT_TRUE(e->batched) << name;
  }
  EXPECT_NE(gemm_registry().find("cuda_wgmma_tuned"), nullptr);
  const KernelEntry* fixed = gemm_registry().find("cuda_wgmma_fixed");
  ASSERT_NE(fixed, nullptr);
  EXPECT_TRUE(fixed->compiles_per_shape);
  EXPECT_EQ(fixed->auto_priority, 0);
}

// cuda_wgmma_fixed runs cuda_wgmma_tuned's plan with M, N and K compiled in: the same tiles,
// slices and order of additions, so the same bits, on values where the order shows. Shapes:
// ragged in every dimension without a split, a long K that splits (with a batch), and a
// square of whole tiles.
TEST(GpuWgmmaFixed, SameBitsAsTheGenericKernel) {
  SKIP_WITHOUT_DEVICE();
  const KernelEntry& fixed = gemm_registry().get("cuda_wgmma_fixed");
  if (!can_run(fixed)) GTEST_SKIP() << "cuda_wgmma_fixed needs sm_90a";
  const LongK shapes[] = {{1000, 777, 1531, 1}, {64, 72, 20000, 3}, {1024, 1024, 1024, 1}};
  for (DType dtype : {DType::bf16, DType::f16, DType::tf32})
    for (const LongK& s : shapes) {
      Problem prob(dtype, s, false, 41 + s.k);
      const std::vector<float> generic = prob.run("cuda_wgmma_tuned");
      const std::vector<float> c = prob.run("cuda_wgmma_fixed");
      EXPECT_EQ(0, std::memcmp(generic.data(), c.data(), c.size() * sizeof(float)))
          << dtype_name(dtype) << " " << s.m << "x" << s.n << "x" << s.k << " batch " << s.batch;
      for (float v : c) ASSERT_TRUE(std::isfinite(v) && v != -7.0f) << dtype_name(dtype) << " " << s.m << "x" << s.n;
    }
}

using gpu_test::load_element;

// Split-K in every transpose, beta = 0 over NaN (C through TMA stores) and beta = -1 with
// C's rows not on 16 bytes (ordinary stores that read C), C in the input type and in f32:
// on integers (|x| <= 2, alpha = 2), alpha * AB + beta * C is an integer below 2^24, exact
// in FP32, so C must hold it rounded once to C's type. K = 2373: 38 K-blocks of 16-bit
// types (75 of tf32) with a ragged end, one tile of C: every configuration splits.
TEST(GpuWgmmaTuned, SplitKEveryTransposeBetaAndOutputExact) {
  SKIP_WITHOUT_DEVICE();
  const std::int64_t m = 70, n = 130, k = 2373;
  int ran = 0;
  for (const KernelEntry* e : rung21_entries()) {
    if (!can_run(*e)) continue;
    std::mt19937_64 rng(std::hash<std::string>{}(e->name));
    std::uniform_int_distribution<int> small(-2, 2);
    for (DType dtype : {DType::bf16, DType::f16, DType::tf32})
      for (bool out_f32 : {false, true}) {
        if (out_f32 && dtype == DType::tf32) continue;
        const DType out = out_f32 ? DType::f32 : dtype;
        for (int t = 0; t < 4; ++t)
          for (bool beta_zero : {true, false}) {
            const bool ta = t & 1, tb = t & 2;
            std::vector<float> a(std::size_t(m * k)), b(std::size_t(k * n)), c0(std::size_t(m * n));
            for (float& x : a) x = float(small(rng));
            for (float& x : b) x = float(small(rng));
            for (float& x : c0) x = float(small(rng));
            // Stored operands: op(A) = A, or A^T stored k x m.
            std::vector<float> as(a.size()), bs(b.size());
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t q = 0; q < k; ++q) as[std::size_t(ta ? q * m + i : i * k + q)] = a[std::size_t(i * k + q)];
            for (std::int64_t q = 0; q < k; ++q)
              for (std::int64_t j = 0; j < n; ++j) bs[std::size_t(tb ? j * k + q : q * n + j)] = b[std::size_t(q * n + j)];
            const std::int64_t lda = ld16(ta ? m : k, dtype), ldb = ld16(tb ? k : n, dtype);
            std::vector<unsigned char> a_bytes = pack(dtype, as, ta ? k : m, ta ? m : k, lda);
            std::vector<unsigned char> b_bytes = pack(dtype, bs, tb ? n : k, tb ? k : n, ldb);
            const std::int64_t ldc = beta_zero ? ld16(n + 1, out) : n + 3;
            const std::size_t ob = element_bytes(out);
            std::vector<unsigned char> c(std::size_t(m * ldc) * ob);
            for (std::int64_t i = 0; i < m; ++i)
              for (std::int64_t j = 0; j < ldc; ++j)
                store_element(out, c.data() + std::size_t(i * ldc + j) * ob,
                      j < n && !beta_zero ? c0[std::size_t(i * n + j)] : std::nanf(""));
            const std::vector<unsigned char> before = c;
            GemmProblem p;
            p.dtype = dtype;
            if (out_f32) p.out_dtype = DType::f32;
            p.trans_a = ta, p.trans_b = tb;
            p.m = m, p.n = n, p.k = k;
            p.a = a_bytes.data(), p.lda = lda, p.b = b_bytes.data(), p.ldb = ldb;
            p.c = c.data(), p.ldc = ldc;
            p.alpha = 2.0, p.beta = beta_zero ? 0.0 : -1.0;
            const std::string what = e->name + " " + std::string(dtype_name(dtype)) + (out_f32 ? "->f32" : "") +
                                     (ta ? " A^T" : "") + (tb ? " B^T" : "") + (beta_zero ? " beta 0" : " beta -1");
            ASSERT_FALSE(e->rejects(p)) << what;
            GemmOptions o;
            o.kernel = e->name;
            gemm(p, o);
            // The reference, rounded once to C's type by the same conversion as the stores.
            std::vector<std::int64_t> row(static_cast<std::size_t>(n));
            std::int64_t wrong = 0;
            std::string first;
            for (std::int64_t i = 0; i < m; ++i) {
              std::fill(row.begin(), row.end(), 0);
              for (std::int64_t q = 0; q < k; ++q)
                for (std::int64_t j = 0; j < n; ++j)
                  row[std::size_t(j)] += std::int64_t(a[std::size_t(i * k + q)]) * std::int64_t(b[std::size_t(q * n + j)]);
              for (std::int64_t j = 0; j < ldc; ++j) {
                unsigned char* at = c.data() + std::size_t(i * ldc + j) * ob;
                if (j >= n) {  // padding: untouched
                  if (std::memcmp(at, before.data() + (at - c.data()), ob) != 0 && wrong++ == 0)
                    first = "padding (" + std::to_string(i) + ", " + std::to_string(j) + ") written";
                  continue;
                }
                const double exact = 2.0 * double(row[std::size_t(j)]) - (beta_zero ? 0.0 : double(c0[std::size_t(i * n + j)]));
                unsigned char expected[4];
                store_element(out, expected, float(exact));
                if (load_element(out, at) != load_element(out, expected) && wrong++ == 0)
                  first = "C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " +
                          std::to_string(load_element(out, at)) + ", expected " + std::to_string(load_element(out, expected));
              }
            }
            EXPECT_EQ(wrong, 0) << what << ": " << wrong << " wrong, the first: " << first;
            ++ran;
          }
      }
  }
  if (ran == 0) GTEST_SKIP() << "no rung 21 entry runs on this device";
}

}  // namespace

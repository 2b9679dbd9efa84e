// Every int8 entry of the registry (int8 inputs, int32 C: cuBLAS INT8 and rung 24) against an
// exact CPU reference (int64 sums, then alpha * sum + beta * C0 wrapped to int32 as the
// library's integer GEMM defines it): edge shapes, K remainders around the 32/64/128 steps,
// the four transposes, padded and unaligned operands, alpha/beta.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

struct I8Case {
  std::int64_t m, n, k;
  bool trans_a = false, trans_b = true;  // the K-major layout by default
  std::int64_t pad = 0;                  // extra elements per stored row of A, B and C
  std::int64_t offset = 0;               // bytes A and B start after an aligned base
  int alpha = 1, beta = 0;
};

std::string describe(const I8Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + (c.trans_a ? " A^T" : "") +
         (c.trans_b ? " B^T" : "") + " pad " + std::to_string(c.pad) + " offset " + std::to_string(c.offset) +
         " alpha " + std::to_string(c.alpha) + " beta " + std::to_string(c.beta);
}

// Runs one case on `entry`; returns false (with failures added) when it is wrong. A
// reference (cuBLAS) may refuse a case (its precondition), our kernels may not.
bool run_case(Context& ctx, const KernelEntry& entry, const I8Case& cs, std::uint32_t seed) {
  SCOPED_TRACE(entry.name + " " + describe(cs));
  const std::int64_t a_rows = cs.trans_a ? cs.k : cs.m, a_cols = cs.trans_a ? cs.m : cs.k;
  const std::int64_t b_rows = cs.trans_b ? cs.n : cs.k, b_cols = cs.trans_b ? cs.k : cs.n;
  const std::int64_t lda = std::max<std::int64_t>(a_cols, 1) + cs.pad, ldb = std::max<std::int64_t>(b_cols, 1) + cs.pad,
                     ldc = cs.n + cs.pad;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127), small(-1000, 1000);
  std::vector<std::int8_t> a(std::size_t(a_rows * lda + cs.offset)), b(std::size_t(b_rows * ldb + cs.offset));
  for (auto& x : a) x = std::int8_t(byte(rng));
  for (auto& x : b) x = std::int8_t(byte(rng));
  std::vector<std::int32_t> c0(std::size_t(cs.m * ldc));
  for (auto& x : c0) x = small(rng);

  cuda::DeviceBuffer<std::int8_t> da(a.size()), db(b.size());
  cuda::DeviceBuffer<std::int32_t> dc(c0.size());
  da.copy_from_host(a.data(), a.size());
  db.copy_from_host(b.data(), b.size());
  dc.copy_from_host(c0.data(), c0.size());

  GemmProblem p;
  p.dtype = DType::i8;
  p.out_dtype = DType::i32;
  p.trans_a = cs.trans_a, p.trans_b = cs.trans_b;
  p.m = cs.m, p.n = cs.n, p.k = cs.k;
  p.alpha = cs.alpha, p.beta = cs.beta;
  p.a = da.data() + cs.offset, p.lda = lda;
  p.b = db.data() + cs.offset, p.ldb = ldb;
  p.c = dc.data(), p.ldc = ldc;
  if (auto why = entry.rejects(p)) {
    if (entry.role == KernelRole::reference) return true;
    ADD_FAILURE() << "refused: " << *why;
    return false;
  }
  try {
    gemm(ctx, p, nullptr, GemmOptions{.kernel = entry.name});
  } catch (const Error& e) {
    ADD_FAILURE() << "error: " << e.what();
    return false;
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int32_t> c(c0.size());
  dc.copy_to_host(c.data(), c.size());

  const std::int8_t* ha = a.data() + cs.offset;
  const std::int8_t* hb = b.data() + cs.offset;
  int errors = 0;
  for (std::int64_t i = 0; i < cs.m; ++i)
    for (std::int64_t j = 0; j < ldc; ++j) {
      const std::size_t at = std::size_t(i * ldc + j);
      if (j >= cs.n) {  // padding: untouched
        if (c[at] != c0[at] && ++errors <= 5) ADD_FAILURE() << "C's padding written at (" << i << ", " << j << ")";
        continue;
      }
      std::int64_t sum = 0;
      for (std::int64_t l = 0; l < cs.k; ++l) {
        const std::int64_t x = cs.trans_a ? ha[l * lda + i] : ha[i * lda + l];
        const std::int64_t y = cs.trans_b ? hb[j * ldb + l] : hb[l * ldb + j];
        sum += x * y;
      }
      const std::int32_t want = std::int32_t(std::uint32_t(std::int64_t(cs.alpha) * sum + std::int64_t(cs.beta) * c0[at]));
      if (c[at] != want && ++errors <= 5)
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << c[at] << ", want " << want;
    }
  return errors == 0;
}

std::vector<const KernelEntry*> i8_entries(int cc) {
  std::vector<const KernelEntry*> v;
  for (const KernelEntry* e : Registry::instance().of_backend(Backend::cuda))
    if (e->supports(DType::i8) && cc >= e->min_compute_capability) v.push_back(e);
  return v;
}

}  // namespace

TEST(GpuI8, EdgeShapesEveryEntryExact) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const auto entries = i8_entries(ctx.compute_capability());
  if (entries.empty()) GTEST_SKIP() << "no int8 entry runs on this device";
  std::vector<I8Case> cases = {{1, 1, 1}, {2, 3, 5}, {17, 33, 65}, {64, 256, 128}, {128, 256, 128},
                               {129, 257, 129}, {1000, 3, 77}, {3, 1000, 77}, {200, 300, 0, false, true, 0, 0, 2, -3},
                               {260, 520, 4099}, {513, 255, 1000, false, true, 16}};
  // K remainders 1..31 and around 32, 64, 128, 256 (the wgmma step, a stage's 128).
  for (std::int64_t k : {3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257})
    cases.push_back({65, 130, k});
  // The four layouts, padded rows, unaligned bases, alpha/beta.
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      cases.push_back({97, 161, 200, ta, tb});
      cases.push_back({131, 67, 45, ta, tb, 3, 1, -2, 3});
      cases.push_back({256, 256, 256, ta, tb, 16, 0, 3, 1});
    }
  std::uint32_t seed = 1;
  for (const KernelEntry* e : entries) {
    int failed = 0;
    for (const I8Case& c : cases)
      if (!run_case(ctx, *e, c, seed++) && ++failed >= 5) break;  // a broken kernel fails every case
  }
}

TEST(GpuI8, LargeShapeAgreesWithTheReference) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const auto entries = i8_entries(ctx.compute_capability());
  if (entries.empty()) GTEST_SKIP() << "no int8 entry runs on this device";
  // 96 tiles of 128 x 256 in clusters of two: on 132 SMs (66 clusters) a round and a last
  // round of 30 shared out by stream-K.
  for (const KernelEntry* e : entries) run_case(ctx, *e, {2048, 3072, 768}, 99);
}

TEST(GpuI8, ValidationNeedsInt32C) {
  GemmProblem p;
  p.dtype = DType::i8;
  p.m = p.n = p.k = 4;
  p.lda = p.ldb = p.ldc = 4;
  std::int8_t x[16] = {};
  p.a = p.b = x, p.c = x;
  EXPECT_THROW(validate(p), Error);
  p.out_dtype = DType::i32;
  EXPECT_NO_THROW(validate(p));
}

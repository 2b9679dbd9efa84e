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

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
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
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda))
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

// Rung 24's overlapped int32 schedule (two sets of accumulators; i8_schedule.hpp picks it
// for large C with K of 13 K-blocks or more): shapes that several rounds of tiles cover, so
// that every cluster's tiles take turns between the sets, with one and two K-blocks per box
// of C, odd sizes, alpha. The whole of C is compared with cuBLAS INT8 (exact: int32 sums of
// int8 products cannot overflow at these K), and 4096 entries with the host's int64 sums.
TEST(GpuI8, OverlappedScheduleExact) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  if (ctx.compute_capability() != 90) GTEST_SKIP() << "rung 24 runs on sm_90 only";
  struct Shape {
    std::int64_t m, n, k;
    int alpha;
  };
  for (const Shape s : {Shape{4096, 4096, 2000, 1}, Shape{4000, 3900, 3000, 1}, Shape{4096, 4096, 3500, -3}}) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
    ExplainRequest r;
    r.kernel = "cuda_wgmma_i8", r.m = s.m, r.n = s.n, r.k = s.k, r.trans_b = true;
    r.recorded_path = GEMMKIT_KERNEL_RESOURCES_PATH;
    const Explanation plan = explain(r);
    ASSERT_FALSE(plan.launches.empty());
    EXPECT_NE(plan.launches.back().plan.mapping.find("overlapped"), std::string::npos)
        << "the overlapped schedule is not planned: " << plan.launches.back().plan.mapping;
    // Compiled ahead of time (the JIT kernels' spill check does not see it): its two sets of
    // sums must stay in registers.
    EXPECT_EQ(plan.launches.back().resources.local_bytes, 0u) << plan.launches.back().plan.kernel;

    std::mt19937 rng(unsigned(s.k));
    std::uniform_int_distribution<int> byte(-128, 127);
    std::vector<std::int8_t> a(std::size_t(s.m * s.k)), b(std::size_t(s.n * s.k));
    for (auto& x : a) x = std::int8_t(byte(rng));
    for (auto& x : b) x = std::int8_t(byte(rng));
    cuda::DeviceBuffer<std::int8_t> da(a.size()), db(b.size());
    cuda::DeviceBuffer<std::int32_t> ours(std::size_t(s.m * s.n)), ref(std::size_t(s.m * s.n));
    da.copy_from_host(a.data(), a.size());
    db.copy_from_host(b.data(), b.size());
    GemmProblem p;
    p.dtype = DType::i8, p.out_dtype = DType::i32;
    p.trans_b = true;  // B stored n x k: the layout the kernel reads without a copy
    p.m = s.m, p.n = s.n, p.k = s.k, p.alpha = s.alpha, p.beta = 0;
    p.a = da.data(), p.lda = s.k, p.b = db.data(), p.ldb = s.k;
    std::vector<std::int32_t> fill(std::size_t(s.m * s.n), 0x5a5a5a5a);  // stale values must not survive
    ours.copy_from_host(fill.data(), fill.size());
    p.c = ours.data(), p.ldc = s.n;
    gemm(ctx, p, nullptr, GemmOptions{.kernel = "cuda_wgmma_i8"});
    p.c = ref.data();
    gemm(ctx, p, nullptr, GemmOptions{.kernel = "cuda_cublas_i8"});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::int32_t> c(fill.size()), want(fill.size());
    ours.copy_to_host(c.data(), c.size());
    ref.copy_to_host(want.data(), want.size());
    std::int64_t differ = 0, first = -1;
    for (std::size_t i = 0; i < c.size(); ++i)
      if (c[i] != want[i] && differ++ == 0) first = std::int64_t(i);
    EXPECT_EQ(differ, 0) << "first at (" << first / s.n << ", " << first % s.n << "): " << c[std::size_t(first)]
                         << ", cuBLAS " << want[std::size_t(first)];
    std::uniform_int_distribution<std::int64_t> row(0, s.m - 1), col(0, s.n - 1);
    int wrong = 0;
    for (int t = 0; t < 4096; ++t) {
      const std::int64_t i = t < 4 ? (t / 2) * (s.m - 1) : row(rng), j = t < 4 ? (t % 2) * (s.n - 1) : col(rng);
      std::int64_t sum = 0;
      for (std::int64_t l = 0; l < s.k; ++l) sum += std::int64_t(a[std::size_t(i * s.k + l)]) * b[std::size_t(j * s.k + l)];
      const auto expect = std::int32_t(std::uint32_t(std::int64_t(s.alpha) * sum));
      if (c[std::size_t(i * s.n + j)] != expect && ++wrong <= 5)
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << c[std::size_t(i * s.n + j)] << ", want " << expect;
    }
  }
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

// The benchmark engine with kernels registered from outside (register_kernel), as
// examples/my_kernel uses it: a wrong kernel fails verification however fast it is, and
// every product of a batch is checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gemmkit/bench.hpp"
#include "gemmkit/registry.hpp"
#include "bench_test_support.hpp"

namespace gemmkit {
namespace {

// A correct f32 kernel, then a fault: the last element of C (of every product, or of
// batch item 0 only when `only_first` and the kernel runs batches itself) is off by one.
void plain_gemm(const GemmProblem& p) {
  const auto* a = static_cast<const float*>(p.a);
  const auto* b = static_cast<const float*>(p.b);
  auto* c = static_cast<float*>(p.c);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (std::int64_t l = 0; l < p.k; ++l)
        sum += double(p.trans_a ? a[l * p.lda + i] : a[i * p.lda + l]) *
               double(p.trans_b ? b[j * p.ldb + l] : b[l * p.ldb + j]);
      c[i * p.ldc + j] = float(p.alpha * sum);
    }
}

KernelEntry test_entry(const std::string& name, bool batched,
                       std::function<void(const GemmProblem&, const KernelLaunch&)> run) {
  KernelEntry e;
  e.name = name;
  e.backend = Backend::cpu;
  e.rung = 99;
  e.summary = "test kernel (test_bench.cpp)";
  e.dtypes = {DType::f32};
  e.batched = batched;
  e.run = std::move(run);
  return e;
}

// Registered once per test process, through the hook outside programs use.
void register_test_kernels() {
  static const bool registered = [] {
    register_kernel(test_entry("test_off_by_one", false, [](const GemmProblem& p, const KernelLaunch&) {
      plain_gemm(p);
      static_cast<float*>(p.c)[(p.m - 1) * p.ldc + p.n - 1] += 1.0f;
    }));
    // Claims to run batches itself but computes only the first product.
    register_kernel(test_entry("test_first_item_only", true, [](const GemmProblem& p, const KernelLaunch&) {
      plain_gemm(batch_item(p, 0));
    }));
    return true;
  }();
  (void)registered;
}

using test::bench_row;
using test::small_bench_options;

TEST(BenchEngineOutside, AWrongKernelFailsVerificationHoweverFast) {
  register_test_kernels();
  Context ctx(Backend::cpu);
  const BenchReport r = run_gemm_bench(ctx, small_bench_options({"test_off_by_one"}));
  ASSERT_EQ(r.rows.size(), 4u);  // cpu_openblas and the test kernel at two shapes
  for (const BenchRow& row : r.rows) {
    EXPECT_FALSE(row.skipped) << row.note;
    EXPECT_EQ(row.check.passed, row.kernel == "cpu_openblas") << row.kernel;
  }
  EXPECT_FALSE(bench_row(r, "test_off_by_one", 24).check.detail.empty());
  EXPECT_FALSE(r.all_passed());
  EXPECT_NE(bench_table(r, run_meta()).find("FAILED"), std::string::npos);
}

TEST(BenchEngineOutside, BatchesCountEveryProductAndVerifyEveryItem) {
  register_test_kernels();
  Context ctx(Backend::cpu);
  BenchOptions o = small_bench_options({"cpu_naive", "test_first_item_only"});
  o.batch = 3;
  const BenchReport r = run_gemm_bench(ctx, o);
  for (const BenchRow& row : r.rows) {
    EXPECT_EQ(row.gemm->batch, 3);
    ASSERT_FALSE(row.skipped) << row.note;
    EXPECT_DOUBLE_EQ(row.rate, 3 * row.gemm->shape.flops() / row.timing.median_s / 1e9);
  }
  EXPECT_TRUE(bench_row(r, "cpu_naive", 24).check.passed);
  EXPECT_TRUE(bench_row(r, "cpu_openblas", 24).check.passed);
  // Item 0 is right: only checking every item finds the others unwritten.
  const BenchRow& wrong = bench_row(r, "test_first_item_only", 24);
  EXPECT_FALSE(wrong.check.passed);
  EXPECT_NE(wrong.check.detail.find("batch item 1"), std::string::npos) << wrong.check.detail;
  EXPECT_NE(bench_table(r, run_meta()).find("3 x 24x20x16"), std::string::npos);
}

}  // namespace
}  // namespace gemmkit

// The benchmark engine's device path: a stream of its own, events on it, an L2 flush before
// each timed run, ABBA pairs beside cuBLAS, every result verified. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>

#include "gemmkit/bench.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit {
namespace {

class BenchEngineGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_available()) GTEST_SKIP() << no_device_message();
  }
};

TEST_F(BenchEngineGpu, PairsEachKernelWithCublasAndVerifies) {
  Context ctx(Backend::cuda);
  BenchOptions o;
  o.kernels = {"cuda_naive"};
  o.shapes = {{256, 192, 128}};
  o.reps = 3;
  const BenchReport r = run_gemm_bench(ctx, o);
  EXPECT_TRUE(r.paired);
  EXPECT_TRUE(r.l2_flushed);
  EXPECT_EQ(r.percent_of, "cuda_cublas");
  ASSERT_EQ(r.rows.size(), 3u);  // cuda_cublas, cuda_cublas_tf32, cuda_naive
  for (const BenchRow& row : r.rows) {
    ASSERT_FALSE(row.skipped) << row.kernel << ": " << row.note;
    EXPECT_TRUE(row.check.passed) << row.kernel << ": " << row.check.detail;
    EXPECT_GT(row.rate, 0.0);
    // The copy of the product's bytes, timed in the same run: a positive percentage.
    EXPECT_GT(row.percent_of_copy, 0.0) << row.kernel;
    if (row.kernel != "cuda_cublas") {
      // Timed in pairs: the ratio is against the reference's median in the same pairs.
      EXPECT_GT(row.reference_median_s, 0.0) << row.kernel;
      EXPECT_DOUBLE_EQ(row.percent_of_reference, 100.0 * row.reference_median_s / row.timing.median_s);
    }
  }
}

TEST_F(BenchEngineGpu, BatchesBesideCublasBatched) {
  Context ctx(Backend::cuda);
  BenchOptions o;
  o.kernels = {"cuda_naive"};
  o.shapes = {{128, 128, 64}};
  o.batch = 4;
  o.reps = 2;
  for (const Layout layout : {Layout::row_major, Layout::col_major}) {
    o.layout = layout;
    const BenchReport r = run_gemm_bench(ctx, o);
    ASSERT_FALSE(r.rows.empty());
    for (const BenchRow& row : r.rows) {
      ASSERT_FALSE(row.skipped) << row.kernel << ": " << row.note;
      EXPECT_EQ(row.gemm->batch, 4);
      EXPECT_TRUE(row.check.passed) << row.kernel << ": " << row.check.detail;
      EXPECT_DOUBLE_EQ(row.rate, 4 * row.gemm->shape.flops() / row.timing.median_s / 1e9);
    }
  }
}

TEST_F(BenchEngineGpu, CopyCeiling) {
  Context ctx(Backend::cuda);
  const std::size_t bytes = std::size_t(256) << 20;
  const double seconds = copy_ceiling_seconds(ctx, bytes);
  EXPECT_GT(seconds, 0.0);
  // Read + written bytes per second: between 10 GB/s and 20 TB/s on anything CUDA runs on.
  const double bandwidth = 2.0 * double(bytes) / seconds;
  EXPECT_GT(bandwidth, 1e10);
  EXPECT_LT(bandwidth, 2e13);
}

}  // namespace
}  // namespace gemmkit

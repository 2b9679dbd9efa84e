// Host-side logic of the CUDA backend that CI can test without a GPU: the ladder's registry
// entries, their preconditions, and the autotune table.
#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "cuda/autotune_table.hpp"
#include "gemmkit/registry.hpp"

using namespace gemmkit;

namespace {

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.lda = k, p.ldb = n, p.ldc = n;
  return p;
}

}  // namespace

TEST(AutotuneTable, PicksTheConfigurationMeasuredBestPerShape) {
  using cuda::TunedConfig;
  using cuda::choose_tuned_config;
  // The shapes the table was tuned on (docs/ladder.md).
  EXPECT_EQ(choose_tuned_config(shape(8192, 8192, 8192)), TunedConfig::tile_64x128);
  EXPECT_EQ(choose_tuned_config(shape(4096, 4096, 4096)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(4000, 4000, 4000)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(8192, 1024, 8192)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(1024, 8192, 256)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(2048, 2048, 2048)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(1024, 1024, 1024)), TunedConfig::tile_64x128);
  EXPECT_EQ(choose_tuned_config(shape(256, 256, 256)), TunedConfig::tile_64x64);
  EXPECT_EQ(choose_tuned_config(shape(1, 1, 1)), TunedConfig::tile_64x64);
}

#ifdef GEMMKIT_HAVE_CUDA

TEST(CudaRegistry, TheLadderHasEveryRungInOrder) {
  std::set<int> rungs;
  std::set<std::string> names;
  for (const KernelEntry* e : Registry::instance().of_backend(Backend::cuda)) {
    EXPECT_TRUE(names.insert(e->name).second) << e->name;
    EXPECT_EQ(e->name.rfind("cuda_", 0), 0u) << e->name;
    EXPECT_FALSE(e->summary.empty()) << e->name;
    EXPECT_GE(e->min_compute_capability, 50) << e->name;
    EXPECT_TRUE(e->supports(DType::f32)) << e->name;
    if (e->role == KernelRole::ladder) rungs.insert(e->rung);
  }
  for (int r = 1; r <= 15; ++r) EXPECT_TRUE(rungs.count(r)) << "rung " << r << " is missing";
  // TF32 results are judged by the TF32 tolerance; everything else by its dtype's.
  const KernelEntry* tf32 = Registry::instance().find("cuda_cublas_tf32");
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(tf32->accuracy, DType::tf32);
  EXPECT_EQ(tf32->auto_priority, 0) << "a less accurate kernel must not be chosen silently";
}

TEST(CudaRegistry, PreconditionsAcceptOrdinaryShapesAndRejectHugeOnes) {
  for (const KernelEntry* e : Registry::instance().of_backend(Backend::cuda)) {
    if (e->role != KernelRole::ladder) continue;
    GemmProblem ok = shape(4097, 3001, 2049);
    EXPECT_EQ(e->rejects(ok), std::nullopt) << e->name;
    // Sizes past the kernels' 32-bit index range are declined, not run wrongly.
    GemmProblem huge = shape(std::int64_t(INT_MAX) + 1, 1, 1);
    huge.lda = 1, huge.ldb = 1, huge.ldc = 1;
    EXPECT_NE(e->rejects(huge), std::nullopt) << e->name;
  }
}

#endif

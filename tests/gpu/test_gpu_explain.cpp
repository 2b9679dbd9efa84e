// gemmkit explain on the device: for every launch of every CUDA rung, the attributes
// recorded at build time equal cudaFuncGetAttributes, the occupancy explain computes equals
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, and the plans made from the records are
// the plans made from the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

namespace {

using namespace gemmkit;

std::optional<Explanation> try_explain(const KernelEntry& entry, DType dtype, std::int64_t m, std::int64_t n,
                                       std::int64_t k, bool live) {
  ExplainRequest r;
  r.kernel = entry.name, r.dtype = dtype, r.m = m, r.n = n, r.k = k, r.live = live;
  try {
    return explain(r);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not run"), std::string::npos) << entry.name << ": " << e.what();
    return std::nullopt;
  }
}

TEST(GpuExplain, RecordsAndOccupancyMatchTheDevice) {
  SKIP_WITHOUT_DEVICE();
  int device = 0, cc_major = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  const bool sm90 = cc_major == 9;  // the records are of the sm_90 code
  int launches = 0;
  for (const KernelEntry& entry : Registry::instance().entries()) {
    if (entry.backend != Backend::cuda || entry.role != KernelRole::ladder || !entry.launches) continue;
    for (const DType dtype : entry.dtypes)
      for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{70, 200, 64}, {1024, 1024, 1024}, {4097, 33, 3000},
                                    {8192, 8192, 8192}}) {
        const auto live = try_explain(entry, dtype, m, n, k, true);
        const auto rec = try_explain(entry, dtype, m, n, k, false);
        if (!live || !rec) continue;
        ASSERT_TRUE(live->live);
        ASSERT_EQ(live->launches.size(), rec->launches.size()) << entry.name;
        for (std::size_t i = 0; i < live->launches.size(); ++i) {
          const LaunchExplanation& e = live->launches[i];
          const LaunchExplanation& r = rec->launches[i];
          const std::string what = entry.name + " " + std::string(dtype_name(dtype)) + " " + std::to_string(m) + "x" +
                                   std::to_string(n) + "x" + std::to_string(k) + " " + e.plan.kernel;
          ++launches;
          cudaFuncAttributes a{};
          ASSERT_EQ(cudaFuncGetAttributes(&a, e.plan.function), cudaSuccess) << what;
          if (e.plan.dynamic_smem > 48 * 1024)
            ASSERT_EQ(cudaFuncSetAttribute(e.plan.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(e.plan.dynamic_smem)), cudaSuccess) << what;
          int blocks = -1;
          ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, e.plan.function, int(e.plan.block.count()),
                                                                  e.plan.dynamic_smem), cudaSuccess) << what;
          // Live: explain's attributes are the device's, its occupancy the runtime's, and
          // the calculator agrees with the runtime.
          EXPECT_EQ(e.resources.registers, a.numRegs) << what;
          EXPECT_EQ(e.occupancy.blocks_per_sm, blocks) << what;
          const KernelResources device_resources{a.numRegs, a.sharedSizeBytes, a.localSizeBytes, ""};
          const Occupancy computed = compute_occupancy(device_resources, e.plan.block, e.plan.dynamic_smem, live->limits);
          EXPECT_EQ(computed.blocks_per_sm, blocks) << what << " (limited by " << computed.limited_by << ")";
          // Recorded: the same numbers without the device (sm_90 only: the records are its code's).
          ASSERT_TRUE(r.resources_known) << what << ": " << r.note;
          EXPECT_EQ(r.plan.kernel, e.plan.kernel) << what;
          EXPECT_EQ(r.plan.grid.count(), e.plan.grid.count()) << what;
          EXPECT_EQ(r.plan.dynamic_smem, e.plan.dynamic_smem) << what;
          if (sm90) {
            EXPECT_EQ(r.resources.registers, a.numRegs) << what;
            EXPECT_EQ(r.resources.static_smem, a.sharedSizeBytes) << what;
            EXPECT_EQ(r.resources.local_bytes, a.localSizeBytes) << what;
            EXPECT_EQ(r.occupancy.blocks_per_sm, blocks) << what;
          }
          if (e.plan.cluster.count() > 1) {
            ASSERT_TRUE(e.occupancy.active_clusters) << what;
            std::printf("%s: clusters %d live, %d estimated from the records\n", what.c_str(),
                        *e.occupancy.active_clusters, r.occupancy.active_clusters.value_or(-1));
          }
        }
      }
  }
  EXPECT_GT(launches, 20);
}

}  // namespace

// gemmkit explain on the device: for every launch of every CUDA rung, the attributes
// recorded at build time equal cudaFuncGetAttributes, the occupancy explain computes equals
// cudaOccupancyMaxActiveBlocksPerMultiprocessor, and the plans made from the records are
// the plans made from the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/sparse.hpp"
#include "gemmkit/transpose.hpp"
#include "gpu/gpu_test_support.hpp"

namespace {

using namespace gemmkit;

std::optional<Explanation> try_explain(const std::string& operation, const std::string& kernel, DType dtype,
                                       std::int64_t m, std::int64_t n, std::int64_t k, bool live) {
  ExplainRequest r;
  r.kernel = kernel, r.dtype = dtype, r.m = m, r.n = n, r.k = k, r.live = live;
  r.recorded_path = GEMMKIT_KERNEL_RESOURCES_PATH;
  try {
    return explain_operation(operation, r);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not run"), std::string::npos) << kernel << ": " << e.what();
    return std::nullopt;
  }
}

// Every launch of `kernel` for the problem, live against recorded against the runtime.
void check_kernel(const std::string& operation, const std::string& kernel, DType dtype, std::int64_t m,
                  std::int64_t n, std::int64_t k, bool sm90, int& launches) {
        const auto live = try_explain(operation, kernel, dtype, m, n, k, true);
        const auto rec = try_explain(operation, kernel, dtype, m, n, k, false);
        if (!live || !rec) return;
        ASSERT_TRUE(live->live);
        ASSERT_EQ(live->launches.size(), rec->launches.size()) << kernel;
        for (std::size_t i = 0; i < live->launches.size(); ++i) {
          const LaunchExplanation& e = live->launches[i];
          const LaunchExplanation& r = rec->launches[i];
          const std::string what = operation + " " + kernel + " " + std::string(dtype_name(dtype)) + " " +
                                   std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
                                   e.plan.kernel;
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
          // Resident clusters without a device are an estimate (SMs / cluster size x blocks per
          // SM; the hardware keeps a cluster within one GPC): reported, not required equal.
          if (e.plan.cluster.count() > 1) ASSERT_TRUE(e.occupancy.active_clusters) << what;
          if (e.plan.cluster.count() > 1 || r.plan.cluster.count() > 1)
            std::printf("%s: cluster of %lld blocks live, %d resident; recorded plan: cluster of %lld, %d "
                        "estimated\n", what.c_str(), (long long)e.plan.cluster.count(),
                        e.occupancy.active_clusters.value_or(0), (long long)r.plan.cluster.count(),
                        r.occupancy.active_clusters.value_or(0));
        }
}

// The records this build made (its gemmkit_kernel_resources target), which the recorded
// half of every comparison reads.
bool have_records() {
  const bool there = std::ifstream(GEMMKIT_KERNEL_RESOURCES_PATH).good();
  EXPECT_TRUE(there) << "no recorded resources at " << GEMMKIT_KERNEL_RESOURCES_PATH
                     << " (the build's gemmkit_kernel_resources target writes them)";
  return there;
}

bool device_is_sm90() {
  int device = 0, cc_major = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  return cc_major == 9;  // the records are of the sm_90 code
}

TEST(GpuExplain, RecordsAndOccupancyMatchTheDevice) {
  SKIP_WITHOUT_DEVICE();
  if (!have_records()) return;
  const bool sm90 = device_is_sm90();
  int launches = 0;
  for (const KernelEntry& entry : gemm_registry().entries()) {
    if (entry.backend != Backend::cuda || entry.role != KernelRole::ladder || !entry.launches) continue;
    for (const DType dtype : entry.dtypes)
      for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{70, 200, 64}, {1024, 1024, 1024}, {4097, 33, 3000},
                                    {8192, 8192, 8192}, {8192, 64, 8192}})
        check_kernel("gemm", entry.name, dtype, m, n, k, sm90, launches);
  }
  EXPECT_GT(launches, 20);
}

TEST(GpuExplain, PrimitivesRecordsAndOccupancyMatchTheDevice) {
  SKIP_WITHOUT_DEVICE();
  if (!have_records()) return;
  const bool sm90 = device_is_sm90();
  int launches = 0;
  const auto each = [&](const auto& registry, const std::string& operation,
                        std::initializer_list<std::array<std::int64_t, 3>> shapes) {
    for (const auto& entry : registry.entries()) {
      if (entry.backend != Backend::cuda || !entry.launches) continue;
      for (const DType dtype : entry.dtypes)
        for (const auto& [m, n, k] : shapes) check_kernel(operation, entry.name, dtype, m, n, k, sm90, launches);
    }
  };
  each(reduce_registry(), "reduce", {{1, 1, 1}, {1000, 1, 1}, {1 << 24, 1, 1}});
  each(spmv_registry(), "spmv", {{1000, 1000, 5000}, {100000, 100000, 3000000}});
  each(conv1d_registry(), "conv1d", {{1000, 5, 1}, {1 << 20, 31, 1}});
  each(transpose_registry(), "transpose", {{1000, 37, 1}, {4096, 4096, 1}, {3000000, 3, 1}});
  EXPECT_GT(launches, 10);
}

}  // namespace

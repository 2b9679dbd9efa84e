// What `gemmkit explain` asks of the current CUDA device: its limits, a kernel's attributes
// and its occupancy, from the CUDA runtime (live), when there is a device.
#include <cuda_runtime.h>

#include "runtime/explain_device.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::explain_detail {

std::optional<SmLimits> live_limits() {
  if (!cuda_device_available()) return std::nullopt;
  int device = 0, reserved = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device) != cudaSuccess)
    return std::nullopt;
  for (const DeviceInfo& d : query_devices().devices) {
    if (d.index != device) continue;
    SmLimits l;
    l.source = "live: " + d.name;
    l.compute_capability = d.compute_capability();
    l.sm_count = d.sm_count;
    l.warp_size = d.warp_size;
    l.max_threads_per_block = d.max_threads_per_block;
    l.max_threads_per_sm = d.max_threads_per_sm;
    l.max_blocks_per_sm = d.max_blocks_per_sm;
    l.registers_per_sm = d.registers_per_sm;
    l.registers_per_block = d.registers_per_block;
    l.smem_per_sm = d.shared_memory_per_sm;
    l.smem_per_block = d.shared_memory_per_block;
    l.smem_per_block_optin = d.shared_memory_per_block_optin;
    l.smem_reserved_per_block = std::size_t(reserved);
    return l;
  }
  return std::nullopt;
}

std::optional<KernelResources> live_resources(const void* function) {
  if (!function || !cuda_device_available()) return std::nullopt;
  cudaFuncAttributes a{};
  if (cudaFuncGetAttributes(&a, function) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return KernelResources{a.numRegs, a.sharedSizeBytes, a.localSizeBytes,
                         "live (cudaFuncGetAttributes)"};
}

namespace {
// As the launchers do before a launch above 48 KiB (runtime/cuda/context.hpp).
bool opt_in(const LaunchPlan& plan) {
  if (plan.dynamic_smem <= 48 * 1024) return true;
  if (cudaFuncSetAttribute(plan.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           int(plan.dynamic_smem)) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}
}  // namespace

std::optional<int> live_blocks_per_sm(const LaunchPlan& plan) {
  if (!plan.function || !cuda_device_available() || !opt_in(plan)) return std::nullopt;
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plan.function, int(plan.block.count()),
                                                    plan.dynamic_smem) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return blocks;
}

std::optional<int> live_active_clusters(const LaunchPlan& plan) {
  if (!plan.function || !cuda_device_available() || plan.cluster.count() <= 1 || !opt_in(plan))
    return std::nullopt;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};
  // A grid of whole clusters, as the launch has; its size does not change the answer.
  config.gridDim = dim3(unsigned(plan.cluster.x), unsigned(plan.cluster.y), unsigned(plan.cluster.z));
  config.blockDim = dim3(unsigned(plan.block.x), unsigned(plan.block.y), unsigned(plan.block.z));
  config.dynamicSmemBytes = plan.dynamic_smem;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(plan.cluster.x);
  cluster.val.clusterDim.y = unsigned(plan.cluster.y);
  cluster.val.clusterDim.z = unsigned(plan.cluster.z);
  config.attrs = &cluster;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, plan.function, &config) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return clusters;
}

}  // namespace gemmkit::explain_detail

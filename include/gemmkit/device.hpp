// CUDA device query. Works in every build: without CUDA or without a device it reports that
// instead of failing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemmkit {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_block_dim[3] = {0, 0, 0};
  int max_grid_dim[3] = {0, 0, 0};
  int warp_size = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int clock_khz = 0;            // SM clock
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  std::size_t total_global_memory = 0;
  std::size_t shared_memory_per_block = 0;
  std::size_t shared_memory_per_block_optin = 0;
  std::size_t shared_memory_per_sm = 0;
  std::size_t constant_memory = 0;
  int registers_per_block = 0;
  int registers_per_sm = 0;
  int l2_cache_bytes = 0;
  int driver_version = 0, runtime_version = 0;

  int compute_capability() const { return cc_major * 10 + cc_minor; }
  // Derived peaks: FP32 FMA lanes per SM by architecture, x2 flops, x SMs x clock.
  double fp32_peak_tflops() const;
  double memory_bandwidth_gbs() const;  // 2 (DDR) x memory clock x bus width
};

bool cuda_compiled();  // was this build made with the CUDA backend?
struct DeviceQuery {
  std::vector<DeviceInfo> devices;
  std::string message;  // why there are none (no CUDA in this build, no driver, no device)
};
DeviceQuery query_devices();
bool cuda_device_available();
// Compute capability of the current device (e.g. 90), or 0 if there is none.
int current_compute_capability();

}  // namespace gemmkit

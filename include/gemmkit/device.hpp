// CUDA device query. Works in every build: without CUDA or without a device it reports that
// instead of failing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

// Why no CUDA device can be used.
enum class NoDeviceReason {
  none,            // there is a device
  not_built,       // this gemmkit was built without the CUDA backend
  no_driver,       // no NVIDIA driver installed (no libcuda) or loaded (no kernel module)
  driver_too_old,  // a driver older than the CUDA runtime this gemmkit was built with
  no_device,       // a working driver that sees no device
  runtime_error,   // anything else the CUDA runtime reported
};
std::string_view no_device_reason_name(NoDeviceReason reason);  // "no_driver", ... (for JSON)

struct DeviceQuery {
  std::vector<DeviceInfo> devices;
  NoDeviceReason reason = NoDeviceReason::none;
  std::string message;  // why there are none, as a clause (e.g. "no NVIDIA driver is installed ...")
};
DeviceQuery query_devices();
bool cuda_device_available();

// What the CUDA runtime said when asked for its devices: plain data, so that the diagnosis
// is host code, tested without a GPU.
struct CudaProbe {
  enum class Status { success, no_device, insufficient_driver, other };
  Status status = Status::success;
  std::string error_text;            // the runtime's own words (cudaGetErrorString)
  int device_count = 0;
  int driver_version = 0;            // cudaDriverGetVersion: 0 when no driver library is found
  int runtime_version = 0;
  bool kernel_module_loaded = true;  // /proc/driver/nvidia exists
};
// The reason and its clause for a probe that found no usable device (none when it found one).
DeviceQuery diagnose_devices(const CudaProbe& probe);

// The one sentence every command uses when it needs a CUDA device and there is none
// ("no CUDA device: <why>"), and the device error (exit 1) that carries it.
std::string no_device_message();
void require_cuda_device();  // throws unless cuda_device_available()
// Compute capability of the current device (e.g. 90), or 0 if there is none.
int current_compute_capability();

// The CUDA software this process runs with, as each library reports it: the runtime and the
// driver in CUDA's encoding (12080 is 12.8), cuBLAS as 10000 * major + 100 * minor + patch.
// All 0 in a build without CUDA; the driver 0 where none is installed. Needs no device.
struct CudaVersions {
  int runtime = 0, driver = 0, cublas = 0;
};
CudaVersions cuda_versions();

}  // namespace gemmkit

// Derived device figures and the diagnosis of a missing device; plain host code, shared by
// CUDA and CPU-only builds.
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit {

namespace {
// FP32 FMA lanes per SM, from the CUDA programming guide's throughput table.
int fp32_lanes_per_sm(int cc_major, int cc_minor) {
  if (cc_major == 8 && cc_minor == 0) return 64;  // A100
  if (cc_major >= 8) return 128;                  // GA10x, Ada, Hopper, Blackwell
  if (cc_major == 7) return 64;                   // Volta, Turing
  if (cc_major == 6 && cc_minor == 0) return 64;
  return 128;
}

// A CUDA version number (12020) as people write it (12.2).
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}
}  // namespace

double DeviceInfo::fp32_peak_tflops() const {
  // 2 flops per FMA x lanes x SMs x clock (kHz).
  return 2.0 * fp32_lanes_per_sm(cc_major, cc_minor) * sm_count * (clock_khz * 1e3) / 1e12;
}

double DeviceInfo::memory_bandwidth_gbs() const {
  // Double data rate: two transfers per memory clock, bus width in bits.
  return 2.0 * (memory_clock_khz * 1e3) * (memory_bus_width_bits / 8.0) / 1e9;
}

std::string_view no_device_reason_name(NoDeviceReason reason) {
  switch (reason) {
    case NoDeviceReason::none: return "none";
    case NoDeviceReason::not_built: return "not_built";
    case NoDeviceReason::no_driver: return "no_driver";
    case NoDeviceReason::driver_too_old: return "driver_too_old";
    case NoDeviceReason::no_device: return "no_device";
    case NoDeviceReason::runtime_error: return "runtime_error";
  }
  return "unknown";
}

DeviceQuery diagnose_devices(const CudaProbe& p) {
  using Status = CudaProbe::Status;
  auto why = [](NoDeviceReason reason, std::string message) {
    return DeviceQuery{{}, reason, std::move(message)};
  };
  if (p.status == Status::success && p.device_count > 0) return {};
  // The runtime says "driver version is insufficient" also when there is no driver at all;
  // the driver's own version (0 without libcuda) and the kernel module tell them apart.
  if (p.driver_version == 0)
    return why(NoDeviceReason::no_driver,
               "no NVIDIA driver is installed (the CUDA driver library libcuda.so.1 was not found)");
  if (!p.kernel_module_loaded)
    return why(NoDeviceReason::no_driver,
               "no NVIDIA driver is loaded (libcuda is installed, the nvidia kernel module is not)");
  if (p.status == Status::insufficient_driver && p.driver_version < p.runtime_version)
    return why(NoDeviceReason::driver_too_old,
               "the NVIDIA driver is too old: it supports CUDA " + cuda_version(p.driver_version) +
                   ", this gemmkit's CUDA runtime is " + cuda_version(p.runtime_version) +
                   " (update the driver)");
  if (p.status == Status::success || p.status == Status::no_device)
    return why(NoDeviceReason::no_device, "the NVIDIA driver (CUDA " + cuda_version(p.driver_version) +
                                              ") sees no device");
  return why(NoDeviceReason::runtime_error, "the CUDA runtime cannot use a device: " +
                                                p.error_text);
}

std::string no_device_message() { return "no CUDA device: " + query_devices().message; }

void require_cuda_device() {
  if (!cuda_device_available()) fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit

// Derived device figures; plain host arithmetic, shared by CUDA and CPU-only builds.
#include "gemmkit/device.hpp"

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
}  // namespace

double DeviceInfo::fp32_peak_tflops() const {
  // 2 flops per FMA x lanes x SMs x clock (kHz).
  return 2.0 * fp32_lanes_per_sm(cc_major, cc_minor) * sm_count * (clock_khz * 1e3) / 1e12;
}

double DeviceInfo::memory_bandwidth_gbs() const {
  // Double data rate: two transfers per memory clock, bus width in bits.
  return 2.0 * (memory_clock_khz * 1e3) * (memory_bus_width_bits / 8.0) / 1e9;
}

}  // namespace gemmkit

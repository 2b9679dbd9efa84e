// gemmkit device: what the CUDA devices are and what they can do. Without one it says why
// (no CUDA backend in this build, no NVIDIA driver, a driver too old, no device) and exits 1,
// like every command that needs a device.
#include <cstdio>

#include "cli.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::cli {
namespace {

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"max_threads_per_block", d.max_threads_per_block},
          {"max_block_dim", {d.max_block_dim[0], d.max_block_dim[1], d.max_block_dim[2]}},
          {"max_grid_dim", {d.max_grid_dim[0], d.max_grid_dim[1], d.max_grid_dim[2]}},
          {"warp_size", d.warp_size},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_blocks_per_sm", d.max_blocks_per_sm},
          {"sm_clock_mhz", d.clock_khz / 1000.0},
          {"memory_clock_mhz", d.memory_clock_khz / 1000.0},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"global_memory_bytes", d.total_global_memory},
          {"shared_memory_per_block_bytes", d.shared_memory_per_block},
          {"shared_memory_per_block_optin_bytes", d.shared_memory_per_block_optin},
          {"shared_memory_per_sm_bytes", d.shared_memory_per_sm},
          {"constant_memory_bytes", d.constant_memory},
          {"registers_per_block", d.registers_per_block},
          {"registers_per_sm", d.registers_per_sm},
          {"l2_cache_bytes", d.l2_cache_bytes},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version},
          {"fp32_peak_tflops", d.fp32_peak_tflops()},
          {"memory_bandwidth_gbs", d.memory_bandwidth_gbs()}};
}

void print(const DeviceInfo& d) {
  const double mib = 1024.0 * 1024.0;
  std::printf("device %d: %s (compute capability %d.%d)\n", d.index, d.name.c_str(), d.cc_major,
              d.cc_minor);
  std::printf("  SMs                       %d\n", d.sm_count);
  std::printf("  SM clock                  %.0f MHz\n", d.clock_khz / 1000.0);
  std::printf("  max threads per block     %d\n", d.max_threads_per_block);
  std::printf("  max block dimensions      %d x %d x %d\n", d.max_block_dim[0], d.max_block_dim[1], d.max_block_dim[2]);
  std::printf("  max grid dimensions       %d x %d x %d\n", d.max_grid_dim[0], d.max_grid_dim[1], d.max_grid_dim[2]);
  std::printf("  warp size                 %d\n", d.warp_size);
  std::printf("  max threads / blocks per SM  %d / %d\n", d.max_threads_per_sm, d.max_blocks_per_sm);
  std::printf("  registers per block / SM  %d / %d\n", d.registers_per_block, d.registers_per_sm);
  std::printf("  shared memory per block   %zu KiB (opt-in %zu KiB), per SM %zu KiB\n",
              d.shared_memory_per_block / 1024, d.shared_memory_per_block_optin / 1024,
              d.shared_memory_per_sm / 1024);
  std::printf("  constant memory           %zu KiB\n", d.constant_memory / 1024);
  std::printf("  L2 cache                  %.1f MiB\n", d.l2_cache_bytes / mib);
  std::printf("  global memory             %.1f GiB, %d-bit bus at %.0f MHz\n",
              double(d.total_global_memory) / (mib * 1024), d.memory_bus_width_bits,
              d.memory_clock_khz / 1000.0);
  std::printf("  FP32 peak (derived)       %.1f TFLOP/s\n", d.fp32_peak_tflops());
  std::printf("  memory bandwidth (derived) %.0f GB/s\n", d.memory_bandwidth_gbs());
  std::printf("  driver / runtime          %d / %d\n", d.driver_version, d.runtime_version);
}

}  // namespace

void add_device(CLI::App& app) {
  auto json = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("device", "Show the CUDA devices and their properties");
  add_json_option(cmd, *json, "Write the devices as JSON instead of printing them (without a device: why, "
                              "and still exit 1)");
  cmd->callback([json] {
    check_outputs({{"--json", *json}});
    const DeviceQuery q = query_devices();
    if (!json->empty()) {
      nlohmann::json out = json_document("device", {{"cuda_build", cuda_compiled()},
                                                    {"devices", nlohmann::json::array()}});
      for (const auto& d : q.devices) out["devices"].push_back(to_json(d));
      if (q.devices.empty()) {
        out["reason"] = no_device_reason_name(q.reason);
        out["message"] = q.message;
      }
      write_json(*json, out);
      // The document says why, as data: it is written, and the run still fails as every
      // command without a device does.
      if (q.devices.empty()) {
        try {
          require_cuda_device();
        } catch (const Error& e) {
          throw PartialFailure(e.category(), e.what());
        }
      }
      return;
    }
    if (q.devices.empty()) require_cuda_device();  // throws the one no-device error
    for (const auto& d : q.devices) print(d);
  });
}

}  // namespace gemmkit::cli

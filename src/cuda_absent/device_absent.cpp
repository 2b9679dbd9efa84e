// The CUDA-facing functions of a build made without nvcc: they say so instead of failing.
#include "core/dispatch.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"

namespace gemmkit {

bool cuda_compiled() { return false; }
DeviceQuery query_devices() {
  return {{}, NoDeviceReason::not_built,
          "this gemmkit was built without the CUDA backend (no nvcc at configure time)"};
}
bool cuda_device_available() { return false; }
int current_compute_capability() { return 0; }
CudaVersions cuda_versions() { return {}; }
std::optional<DeviceMemory> device_memory() { return std::nullopt; }

namespace detail {
void run_on_device(const KernelEntry&, const GemmProblem&) { require_cuda_device(); }
std::vector<double> time_on_device(const KernelEntry& entry, const GemmProblem& p, int, int,
                                   double) {
  run_on_device(entry, p);  // throws: no CUDA in this build
  return {};
}
PairedTimes time_pair_on_device(const KernelEntry& entry, const KernelEntry&, const GemmProblem& p,
                                int, int, double) {
  run_on_device(entry, p);  // throws: no CUDA in this build
  return {};
}
}  // namespace detail

}  // namespace gemmkit

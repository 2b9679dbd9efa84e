// The CUDA-facing functions of a build made without nvcc: they say so instead of failing.
#include "core/dispatch.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"
#include "graph/modular_int8.hpp"

namespace gemmkit {

bool cuda_compiled() { return false; }
DeviceQuery query_devices() {
  return {{}, NoDeviceReason::not_built,
          "this gemmkit was built without the CUDA backend (no nvcc at configure time)"};
}
bool cuda_device_available() { return false; }
int current_compute_capability() { return 0; }
std::optional<DeviceMemory> device_memory() { return std::nullopt; }

namespace detail {
// Each throws the device error: no CUDA in this build.
void cuda_launch_gemm(Context&, const KernelEntry&, const GemmProblem&, Stream, Workspace) {
  require_cuda_device();
}
void run_on_device(Context&, const KernelEntry&, const GemmProblem&) { require_cuda_device(); }
std::vector<double> time_on_device(Context&, const KernelEntry&, const GemmProblem&, int, int,
                                   double) {
  require_cuda_device();
  return {};
}
PairedTimes time_pair_on_device(Context&, const KernelEntry&, const KernelEntry&,
                                const GemmProblem&, int, int, double) {
  require_cuda_device();
  return {};
}
}  // namespace detail

namespace walks_detail {
bool gpu_int8_powers_available() { return false; }
Int8PowersReport gpu_int8_powers(const Graph&, const std::vector<std::uint32_t>&,
                                 const std::vector<PowerStep>&, const std::vector<std::int64_t>&,
                                 const std::vector<std::int64_t>&, std::vector<std::uint32_t>&,
                                 const std::function<void(const std::string&)>&) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
GemmReferenceTimes gpu_reference_gemm_times(std::int64_t) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
}  // namespace walks_detail

}  // namespace gemmkit

// The CUDA-facing functions of a build made without nvcc: they say so instead of failing.
#include "ops/gemm/dispatch.hpp"
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
// Each throws the device error: no CUDA in this build.
GemmRunReport cuda_launch_gemm(Context&, const KernelEntry&, const GemmProblem&, Stream, Workspace,
                               const GemmOptions&) {
  require_cuda_device();
  return {};
}
GemmRunReport run_on_device(Context&, const KernelEntry&, const GemmProblem&, const GemmOptions&) {
  require_cuda_device();
  return {};
}
}  // namespace detail

}  // namespace gemmkit

// The one stub left of a build without nvcc: the device queries, and the CUDA halves of the
// context, the GEMM launch, the benchmark engine and explain, which every build links. They
// answer "no device" (false, nullopt) or throw the device error; every operation's CUDA part
// is instead reached through GEMMKIT_CUDA_PART (runtime/cuda_part.hpp).
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"
#include "ops/gemm/bench_device.hpp"
#include "ops/gemm/dispatch.hpp"
#include "runtime/context_impl.hpp"
#include "runtime/explain_device.hpp"

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

// The context: a CUDA one cannot be made, so there is nothing to close or free.
void cuda_context_open(Context::Impl&, int) { require_cuda_device(); }
void cuda_context_close(Context::Impl&) {}
Workspace cuda_workspace_grow(Context::Impl&, Stream, Workspace, std::size_t) {
  require_cuda_device();
  return {};
}
void cuda_workspaces_release(Context::Impl&) {}

// The benchmark engine: no device to time on.
BenchStream::BenchStream(Context&) {}
BenchStream::~BenchStream() = default;
PairedTimes time_gemm_on_device(Context&, Stream, const KernelEntry&, const KernelEntry*, const GemmProblem&,
                                const TimingOptions&) {
  require_cuda_device();
  return {};
}
double device_copy_seconds(Context&, Stream, std::size_t, int, int) {
  require_cuda_device();
  return 0;
}
StreamTimes time_on_stream_device(Context&, Stream, int, int, bool, const std::function<void()>&) {
  require_cuda_device();
  return {};
}

}  // namespace detail

// explain's live queries: there is never a device to ask.
namespace explain_detail {
std::optional<SmLimits> live_limits() { return std::nullopt; }
std::optional<KernelResources> live_resources(const void*) { return std::nullopt; }
std::optional<int> live_blocks_per_sm(const LaunchPlan&) { return std::nullopt; }
std::optional<int> live_active_clusters(const LaunchPlan&) { return std::nullopt; }
}  // namespace explain_detail

}  // namespace gemmkit

// Reduction in a build made without nvcc: the CUDA entry points say so.
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"
#include "primitives/reduce_device.hpp"

namespace gemmkit {

namespace {
// The device error every command gives without a device (this build has none).
[[noreturn]] void no_cuda() { fail(ErrorCategory::device, no_device_message()); }
}  // namespace

bool reduce_cuda_available() { return false; }

namespace reduce_detail {
std::size_t cuda_workspace_bytes(std::string_view, const ReduceProblem&, const Context&) { no_cuda(); }
void cuda_run(std::string_view, const ReduceProblem&, const KernelLaunch&) { no_cuda(); }
std::vector<LaunchPlan> cuda_plans(std::string_view, const ReduceProblem&, const LaunchQueries&) { no_cuda(); }
template <class T>
T run_host_on_device(Context&, const T*, std::size_t, ReduceOp, std::string_view) {
  no_cuda();
}
template float run_host_on_device<float>(Context&, const float*, std::size_t, ReduceOp, std::string_view);
template double run_host_on_device<double>(Context&, const double*, std::size_t, ReduceOp, std::string_view);
}  // namespace reduce_detail

BenchReport reduce_bench(std::size_t, DType, ReduceOp, int, int, std::uint64_t) {
  no_cuda();
}

}  // namespace gemmkit

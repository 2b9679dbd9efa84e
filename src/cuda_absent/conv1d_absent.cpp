// conv1d in a build made without nvcc: the GPU rungs and the benchmark say so.
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "primitives/conv1d_device.hpp"

namespace gemmkit {

namespace conv1d_detail {
std::size_t cuda_workspace_bytes(std::string_view, const Conv1dProblem&, const Context&) {
  fail(ErrorCategory::device, no_device_message());
}
void cuda_run(std::string_view, const Conv1dProblem&, const KernelLaunch&) {
  fail(ErrorCategory::device, no_device_message());
}
std::vector<LaunchPlan> cuda_plans(std::string_view, const Conv1dProblem&, const LaunchQueries&) {
  fail(ErrorCategory::device, no_device_message());
}
template <class T>
void run_host_on_device(Context&, std::string_view, const T*, std::int64_t, const T*, std::int64_t, T*) {
  fail(ErrorCategory::device, no_device_message());
}
template void run_host_on_device<float>(Context&, std::string_view, const float*, std::int64_t,
                                        const float*, std::int64_t, float*);
template void run_host_on_device<double>(Context&, std::string_view, const double*, std::int64_t,
                                         const double*, std::int64_t, double*);
}  // namespace conv1d_detail

BenchReport conv1d_bench(DType, std::int64_t, std::int64_t, int, int, std::uint64_t) {
  fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit

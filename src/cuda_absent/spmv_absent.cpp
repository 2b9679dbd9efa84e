// The GPU SpMV of a build made without nvcc: it says so instead of failing.
#include "gemmkit/device.hpp"
#include "gemmkit/sparse.hpp"
#include "primitives/spmv_device.hpp"

namespace gemmkit {

bool spmv_cuda_available() { return false; }

namespace spmv_detail {
std::size_t cuda_workspace_bytes(std::string_view, const SpmvProblem&, const Context&) {
  fail(ErrorCategory::device, no_device_message());
}
void cuda_run(std::string_view, const SpmvProblem&, const KernelLaunch&) {
  fail(ErrorCategory::device, no_device_message());
}
std::vector<LaunchPlan> cuda_plans(std::string_view, const SpmvProblem&, const LaunchQueries&) {
  fail(ErrorCategory::device, no_device_message());
}
}  // namespace spmv_detail

template <class T>
std::vector<T> spmv_cuda(const CsrMatrix<T>&, const std::vector<T>&, const SpmvRunOptions&) {
  fail(ErrorCategory::device, no_device_message());
}

template <class T>
BenchReport spmv_bench_cuda(const CsrMatrix<T>&, const std::vector<T>&, const std::vector<T>&, int, int, bool) {
  fail(ErrorCategory::device, no_device_message());
}

template std::vector<float> spmv_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&, const SpmvRunOptions&);
template std::vector<double> spmv_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&, const SpmvRunOptions&);
template BenchReport spmv_bench_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                            const std::vector<float>&, int, int, bool);
template BenchReport spmv_bench_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                             const std::vector<double>&, int, int, bool);

}  // namespace gemmkit

// The benchmark engine's device half in a build without CUDA: no device to time on.
#include "ops/gemm/bench_device.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::detail {

BenchStream::BenchStream(Context&) {}
BenchStream::~BenchStream() = default;

PairedTimes time_gemm_on_device(Context&, Stream, const KernelEntry&, const KernelEntry*, const GemmProblem&,
                                const TimingOptions&) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}

double device_copy_seconds(Context&, Stream, std::size_t, int, int) {
  require_cuda_device();  // throws: no CUDA in this build
  return 0;
}

StreamTimes time_on_stream_device(Context&, Stream, int, int, bool, const std::function<void()>&) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}

}  // namespace gemmkit::detail

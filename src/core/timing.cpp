#include "gemmkit/timing.hpp"

#include "core/bench_device.hpp"

namespace gemmkit {

// One context and one stream per call: the benchmark engine (gemmkit/bench.hpp), which
// times many kernels, keeps one of each for its whole run.
std::vector<double> time_kernel(const KernelEntry& entry, const GemmProblem& p,
                                const TimingOptions& options) {
  Context ctx(entry.backend);
  const detail::BenchStream stream(ctx);
  return detail::time_gemm(ctx, stream.get(), entry, nullptr, p, options).entry;
}

PairedTimes time_kernel_beside(const KernelEntry& entry, const KernelEntry& reference,
                               const GemmProblem& p, const TimingOptions& options) {
  if (entry.backend != reference.backend)
    fail(ErrorCategory::internal, "time_kernel_beside: kernels of different backends");
  Context ctx(entry.backend);
  const detail::BenchStream stream(ctx);
  return detail::time_gemm(ctx, stream.get(), entry, &reference, p, options);
}

}  // namespace gemmkit

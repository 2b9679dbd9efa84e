#include "gemmkit/timing.hpp"

#include "core/bench_device.hpp"

#include <chrono>

#include "gemmkit/error.hpp"

namespace gemmkit {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

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

StreamTimes time_on_stream(Context& ctx, Stream stream, int warmup, int reps, bool each,
                           const std::function<void()>& body) {
  if (reps < 1 || warmup < 0) fail(ErrorCategory::usage, "time_on_stream: reps must be >= 1 and warmup >= 0");
  if (ctx.backend() == Backend::cuda)
    return detail::time_on_stream_device(ctx, stream, warmup, reps, each, body);
  for (int i = 0; i < warmup; ++i) body();
  StreamTimes times;
  const auto loop_start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    body();
    if (each) times.seconds.push_back(seconds_since(start));
  }
  times.host_seconds = seconds_since(loop_start);
  if (!each) times.seconds.push_back(times.host_seconds);
  return times;
}

}  // namespace gemmkit

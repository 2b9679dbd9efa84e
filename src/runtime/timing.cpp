#include "gemmkit/timing.hpp"

#include "ops/gemm/bench_device.hpp"

#include <algorithm>
#include <chrono>

#include "gemmkit/error.hpp"

namespace gemmkit {

std::vector<double> time_runs(const TimingOptions& options, const TimedRun& run) {
  double spent = 0;
  for (int i = 0; i < options.warmup && spent < options.max_seconds / 2; ++i) spent += run();
  std::vector<double> seconds;
  double total = 0;
  while (int(seconds.size()) < std::max(options.reps, 1) && (seconds.empty() || total < options.max_seconds)) {
    seconds.push_back(run());
    total += seconds.back();
  }
  return seconds;
}

PairedTimes time_runs_paired(const TimingOptions& options, const TimedRun& entry, const TimedRun& reference) {
  double spent = 0;
  for (int i = 0; i < options.warmup && spent < options.max_seconds / 2; ++i) spent += entry() + reference();
  PairedTimes t;
  double total = 0;
  while (int(t.entry.size()) < std::max(options.reps, 1) && (t.entry.empty() || total < 2 * options.max_seconds)) {
    if (t.entry.size() % 2 == 0) {
      t.entry.push_back(entry());
      t.reference.push_back(reference());
    } else {
      t.reference.push_back(reference());
      t.entry.push_back(entry());
    }
    total += t.entry.back() + t.reference.back();
  }
  return t;
}

double cpu_seconds(const std::function<void()>& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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
  times.host_seconds = cpu_seconds([&] {
    for (int i = 0; i < reps; ++i)
      if (each) times.seconds.push_back(cpu_seconds(body));
      else body();
  });
  if (!each) times.seconds.push_back(times.host_seconds);
  return times;
}

}  // namespace gemmkit

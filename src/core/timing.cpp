#include "gemmkit/timing.hpp"

#include <chrono>

#include "core/dispatch.hpp"

namespace gemmkit {

std::vector<double> time_kernel(const KernelEntry& entry, const GemmProblem& p,
                                const TimingOptions& options) {
  validate(p);
  if (auto why = entry.rejects(p))
    fail(ErrorCategory::usage, "kernel '" + entry.name + "' cannot run " + p.shape_string() + ": " + *why);
  if (entry.backend == Backend::cuda)
    return detail::time_on_device(entry, p, options.warmup, options.reps, options.max_seconds);

  using Clock = std::chrono::steady_clock;
  auto timed_run = [&] {
    const auto start = Clock::now();
    entry.run(p);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  // A slow kernel (the naive rungs at large sizes) spends at most half the budget warming up.
  double spent = 0;
  for (int i = 0; i < options.warmup && spent < options.max_seconds / 2; ++i) spent += timed_run();
  std::vector<double> seconds;
  double total = 0;
  while (int(seconds.size()) < std::max(options.reps, 1) &&
         (seconds.empty() || total < options.max_seconds)) {
    seconds.push_back(timed_run());
    total += seconds.back();
  }
  return seconds;
}

}  // namespace gemmkit

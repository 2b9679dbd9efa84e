#include "gemmkit/timing.hpp"

#include <chrono>
#include <vector>

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

PairedTimes time_kernel_beside(const KernelEntry& entry, const KernelEntry& reference,
                               const GemmProblem& p, const TimingOptions& options) {
  validate(p);
  for (const KernelEntry* e : {&entry, &reference})
    if (auto why = e->rejects(p))
      fail(ErrorCategory::usage, "kernel '" + e->name + "' cannot run " + p.shape_string() + ": " + *why);
  if (entry.backend != reference.backend)
    fail(ErrorCategory::internal, "time_kernel_beside: kernels of different backends");
  if (entry.backend == Backend::cuda)
    return detail::time_pair_on_device(entry, reference, p, options.warmup, options.reps,
                                       options.max_seconds);

  // The reference writes a private copy of C, so host C ends with the entry's result.
  const std::size_t c_bytes =
      std::size_t(p.m > 0 ? (p.m - 1) * p.ldc + p.n : 0) * dtype_size(p.c_dtype());
  std::vector<unsigned char> private_c(static_cast<const unsigned char*>(p.c),
                                       static_cast<const unsigned char*>(p.c) + c_bytes);
  GemmProblem reference_problem = p;
  reference_problem.c = private_c.data();
  using Clock = std::chrono::steady_clock;
  auto timed_run = [](const KernelEntry& e, const GemmProblem& problem) {
    const auto start = Clock::now();
    e.run(problem);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double spent = 0;
  for (int i = 0; i < options.warmup && spent < options.max_seconds; ++i)
    spent += timed_run(entry, p) + timed_run(reference, reference_problem);
  return detail::time_pairs_abba(options.reps, options.max_seconds,
                                 [&] { return timed_run(entry, p); },
                                 [&] { return timed_run(reference, reference_problem); });
}

}  // namespace gemmkit

#include "gemmkit/timing.hpp"

#include <chrono>
#include <vector>

#include "core/dispatch.hpp"
#include "gemmkit/context.hpp"

namespace gemmkit {

std::vector<double> time_kernel(const KernelEntry& entry, const GemmProblem& problem,
                                const TimingOptions& options) {
  validate(problem);
  const GemmProblem p = as_row_major(problem);
  if (auto why = entry.rejects(p))
    fail(ErrorCategory::usage, "kernel '" + entry.name + "' cannot run " + p.shape_string() + ": " + *why);
  Context ctx(entry.backend);
  if (entry.backend == Backend::cuda)
    return detail::time_on_device(ctx, entry, p, options.warmup, options.reps, options.max_seconds);

  using Clock = std::chrono::steady_clock;
  auto timed_run = [&] {
    const auto start = Clock::now();
    detail::launch_gemm(ctx, entry, p, nullptr, {});
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
                               const GemmProblem& problem, const TimingOptions& options) {
  validate(problem);
  const GemmProblem p = as_row_major(problem);
  for (const KernelEntry* e : {&entry, &reference})
    if (auto why = e->rejects(p))
      fail(ErrorCategory::usage, "kernel '" + e->name + "' cannot run " + p.shape_string() + ": " + *why);
  if (entry.backend != reference.backend)
    fail(ErrorCategory::internal, "time_kernel_beside: kernels of different backends");
  Context ctx(entry.backend);
  if (entry.backend == Backend::cuda)
    return detail::time_pair_on_device(ctx, entry, reference, p, options.warmup, options.reps,
                                       options.max_seconds);

  // The reference writes a private copy of C, so host C ends with the entry's result.
  const std::size_t c_bytes = std::size_t(p.c_span()) * dtype_size(p.c_dtype());
  std::vector<unsigned char> private_c(static_cast<const unsigned char*>(p.c),
                                       static_cast<const unsigned char*>(p.c) + c_bytes);
  GemmProblem reference_problem = p;
  reference_problem.c = private_c.data();
  using Clock = std::chrono::steady_clock;
  auto timed_run = [&ctx](const KernelEntry& e, const GemmProblem& problem) {
    const auto start = Clock::now();
    detail::launch_gemm(ctx, e, problem, nullptr, {});
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

// Timing one kernel for the benchmark. Performance is measured here, never in tests.
#pragma once

#include <functional>
#include <vector>

#include "gemmkit/registry.hpp"

namespace gemmkit {

struct TimingOptions {
  int warmup = 1;            // untimed runs first (caches, clocks, lazy initialisation)
  int reps = 5;              // timed runs at most
  double max_seconds = 3.0;  // stop timing once this much has been spent (after >= 1 run)
};

// Runs a validated host-memory problem with `entry` and returns the seconds of each timed
// run. CPU kernels are timed with a steady clock; CUDA kernels with CUDA events around the
// launch alone (operands are copied to the device once, outside the timing). On return C
// holds the last run's result, so it can be verified. Use beta == 0: runs repeat.
std::vector<double> time_kernel(const KernelEntry& entry, const GemmProblem& host_problem,
                                const TimingOptions& options);

// Times `entry` and `reference` (same backend) on one problem with their runs alternating
// in ABBA order (entry, reference, reference, entry, entry, ...), so both see the same clocks
// and temperature and a drift during the runs favours neither: a GPU under sustained load
// slows down, and a fixed order within each pair skewed the ratio. On the GPU both read and write the same device copies of the operands; on the
// CPU the reference writes a private C. On return host C holds `entry`'s result. The
// options apply to each of the two.
struct PairedTimes {
  std::vector<double> entry, reference;  // seconds of each timed run
};
PairedTimes time_kernel_beside(const KernelEntry& entry, const KernelEntry& reference,
                               const GemmProblem& host_problem, const TimingOptions& options);

// Times `body`, a call that queues work on `stream` of ctx's device (a caller's own call of
// the device API, say one gemm()), as that caller's program sees it: `warmup` untimed calls,
// then `reps` timed ones, in a plain loop. CUDA: with `each`, every call between its own pair
// of events on `stream`, else one pair around the whole loop; the CPU context: a steady clock.
// seconds: each call's (each) or the whole loop's (one entry); host_seconds: the loop's
// wall-clock time until its last call returned, before waiting for the stream: the host's
// cost of `reps` calls.
struct StreamTimes {
  std::vector<double> seconds;
  double host_seconds = 0;
};
StreamTimes time_on_stream(Context& ctx, Stream stream, int warmup, int reps, bool each,
                           const std::function<void()>& body);

}  // namespace gemmkit

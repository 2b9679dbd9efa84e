// Timing for the benchmarks: the one loop every timed row follows (warm-up, then timed runs)
// and the one CPU timer; the GPU timer is src/runtime/cuda/device_timing.hpp, on the same loop.
// Performance is measured here, never in tests.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "gemmkit/registry.hpp"

namespace gemmkit {

struct TimingOptions {
  int warmup = 1;            // untimed runs first (caches, clocks, lazy initialisation)
  int reps = 5;              // timed runs at most
  double max_seconds = 3.0;  // stop timing once this much has been spent (after >= 1 run)
};
// `warmup` and `reps` runs whatever they take (benchmarks without a time budget).
inline TimingOptions fixed_runs(int warmup, int reps) {
  return {warmup, reps, std::numeric_limits<double>::infinity()};
}

// One run of the work being timed, returning its seconds: cpu_seconds around a call, CUDA
// events on a stream (src/runtime/cuda/device_timing.hpp), barriers around a step of an MPI job.
using TimedRun = std::function<double()>;

// `warmup` untimed runs (at most half of max_seconds spent on them: one run of a slow rung at
// a large size can take seconds), then timed runs until `reps` (at least one) or, after the
// first, max_seconds of them. The seconds of each timed run.
std::vector<double> time_runs(const TimingOptions& options, const TimedRun& run);

// The seconds of each timed run of a kernel and of the reference timed beside it.
struct PairedTimes {
  std::vector<double> entry, reference;
};
// time_runs for `entry` beside `reference`: warm-up runs of both, then timed pairs in ABBA
// order (entry, reference, reference, entry, entry, ...) until `reps` pairs or, after the
// first, 2 * max_seconds. With the entry always first, a drift of the clocks during the runs
// (a GPU at its power limit) favoured one of the two by different amounts in different places
// of a bench run (the H200, bf16 4096^3: the same kernel listed eight times;
// docs/notes/ladder-log.md, "the bench's position effect").
PairedTimes time_runs_paired(const TimingOptions& options, const TimedRun& entry, const TimedRun& reference);

// The CPU timer: the seconds of one call, by the steady clock.
double cpu_seconds(const std::function<void()>& call);

// Runs a validated host-memory problem with `entry` and returns the seconds of each timed
// run. CPU kernels are timed with a steady clock; CUDA kernels with CUDA events around the
// launch alone (operands are copied to the device once, outside the timing). On return C
// holds the last run's result, so it can be verified. Use beta == 0: runs repeat.
std::vector<double> time_kernel(const KernelEntry& entry, const GemmProblem& host_problem,
                                const TimingOptions& options);

// Times `entry` and `reference` (same backend) on one problem with their runs alternating
// (time_runs_paired), so both see the same clocks and temperature. On the GPU both read and
// write the same device copies of the operands; on the CPU the reference writes a private C.
// On return host C holds `entry`'s result. The options apply to each of the two.
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

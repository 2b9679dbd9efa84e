// Timing one kernel for the benchmark. Performance is measured here, never in tests.
#pragma once

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

}  // namespace gemmkit

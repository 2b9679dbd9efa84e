// Internal: the pieces of the dispatcher that differ between CUDA and CPU-only builds.
#pragma once

#include <vector>

#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"

namespace gemmkit::detail {

// Copies a host-memory problem to the device, runs a CUDA entry on it, copies C back.
// In a build without CUDA it throws a usage error.
void run_on_device(const KernelEntry& entry, const GemmProblem& host_problem);

// Times a CUDA entry on a host-memory problem: copies the operands once, then runs it
// `warmup` times (stopping early once they took max_seconds / 2) and up to `reps` times under
// CUDA events, stopping after `max_seconds` of timed runs (at least one). Before each timed
// run it overwrites a scratch buffer of twice the device's L2 size (allocated once, on first
// use), outside the event pair, so operands that fit in L2 are still read from memory.
// Copies the last result back into host C.
std::vector<double> time_on_device(const KernelEntry& entry, const GemmProblem& host_problem,
                                   int warmup, int reps, double max_seconds);

// The same for two CUDA entries with their runs alternating (see time_kernel_beside).
PairedTimes time_pair_on_device(const KernelEntry& entry, const KernelEntry& reference,
                                const GemmProblem& host_problem, int warmup, int reps,
                                double max_seconds);

}  // namespace gemmkit::detail

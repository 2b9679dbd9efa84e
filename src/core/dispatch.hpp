// Internal: the pieces of the dispatcher that differ between CUDA and CPU-only builds.
#pragma once

#include <algorithm>
#include <vector>

#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"

namespace gemmkit::detail {

// Runs a validated row-major problem in ctx's memory on `entry` (chosen for it): the batch
// in one call when the entry is batched, else one product at a time. Nothing is checked
// here; the device API checks before calling it.
void launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& problem,
                 Stream stream, Workspace workspace);
// Its CUDA half: makes ctx's device current, checks that the operands are memory the
// device can read, and queues the entry's launches on `stream`.
void cuda_launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& problem,
                      Stream stream, Workspace workspace);

// Copies a host-memory problem to ctx's device, runs a CUDA entry on it, copies C back.
// In a build without CUDA it throws the device error of require_cuda_device().
void run_on_device(Context& ctx, const KernelEntry& entry, const GemmProblem& host_problem);

// Timed pairs in ABBA order (entry, reference, reference, entry, entry, ...) until `reps`
// pairs or, after the first, 2 * max_seconds of timed runs. With the entry always first, a
// drift of the clocks during the runs (a GPU at its power limit) favoured one of the two by
// different amounts in different places of a bench run (the H200, bf16 4096^3: the same
// kernel listed eight times; docs/notes/ladder-log.md, "the bench's position effect").
// time_entry / time_reference: one timed run, in seconds.
template <class TimeEntry, class TimeReference>
PairedTimes time_pairs_abba(int reps, double max_seconds, TimeEntry&& time_entry,
                            TimeReference&& time_reference) {
  PairedTimes t;
  double total = 0;
  while (int(t.entry.size()) < std::max(reps, 1) && (t.entry.empty() || total < 2 * max_seconds)) {
    if (t.entry.size() % 2 == 0) {
      t.entry.push_back(time_entry());
      t.reference.push_back(time_reference());
    } else {
      t.reference.push_back(time_reference());
      t.entry.push_back(time_entry());
    }
    total += t.entry.back() + t.reference.back();
  }
  return t;
}

}  // namespace gemmkit::detail

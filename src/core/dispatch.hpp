// Internal: the pieces of the dispatcher that differ between CUDA and CPU-only builds.
#pragma once

#include "gemmkit/registry.hpp"

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

}  // namespace gemmkit::detail

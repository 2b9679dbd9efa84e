// Internal: the pieces of the dispatcher that differ between CUDA and CPU-only builds.
#pragma once

#include "gemmkit/registry.hpp"

namespace gemmkit::detail {

// Runs a validated row-major problem in ctx's memory on `entry` (chosen for it): the batch
// in one call when the entry is batched, else one product at a time. Nothing is checked
// here; the device API checks before calling it.
// Kernels that take options get `options` (run_batch); their report is returned.
GemmRunReport launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& problem,
                          Stream stream, Workspace workspace, const GemmOptions& options = {});
// Its CUDA half: makes ctx's device current, checks that the operands are memory the
// device can read, and queues the entry's launches on `stream`.
GemmRunReport cuda_launch_gemm(Context& ctx, const KernelEntry& entry, const GemmProblem& problem,
                               Stream stream, Workspace workspace, const GemmOptions& options = {});

// Copies a host-memory problem to ctx's device, runs a CUDA entry on it, copies C back (or,
// with options.limbs in host memory, the limbs instead). In a build without CUDA it throws
// the device error of require_cuda_device().
GemmRunReport run_on_device(Context& ctx, const KernelEntry& entry, const GemmProblem& host_problem,
                            const GemmOptions& options = {});

}  // namespace gemmkit::detail

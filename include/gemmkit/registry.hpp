// GEMM's kernel registry: every GEMM kernel of this build, and those the calling program adds
// (register_kernel). The entry and registry types are every operation's (gemmkit/kernel.hpp);
// GEMM's own traits and rules are in gemmkit/gemm.hpp (KernelTraits<GemmProblem>, KernelEntry).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "gemmkit/gemm.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

// The process-wide GEMM registry ("gemm"), filled with every kernel compiled into this build.
const Registry<GemmProblem>& gemm_registry();

// An empty C (M, N or the batch 0): there is nothing to write, however K, alpha and beta
// read, so no kernel runs and none needs workspace.
inline bool writes_nothing(const GemmProblem& p) { return p.m == 0 || p.n == 0 || p.batch == 0; }

// Runs a row-major `problem` (the whole batch) through entry.run() (run_with_options, with
// `options`, for kernels that have it): in one call when the entry is batched, else product
// by product; nothing at all when C is empty (writes_nothing), so run() never sees such a
// problem from here. K = 0 is not empty: C becomes beta C. Returns the kernel's report (of
// the last product).
GemmRunReport run_batch(const KernelEntry& entry, const GemmProblem& problem, const KernelLaunch& launch,
                        const GemmOptions& options = {});
// Device bytes of workspace `entry` needs for a row-major problem with `options`
// (workspace_with_options for kernels that have it, else workspace_for).
std::size_t workspace_with(const KernelEntry& entry, const GemmProblem& problem, const Context& ctx,
                           const GemmOptions& options);
// Why `entry` cannot run with the kernel options `options` sets (one it does not take, or
// limbs for a batch), or nullopt. The words name the kernels that do take them.
std::optional<std::string> kernel_options_refusal(const KernelEntry& entry, const GemmOptions& options,
                                                  const GemmProblem& problem);
// Why "auto" on `backend` cannot take the kernel options `options` sets (no kernel it may
// choose there takes them), or nullopt (also when it sets none).
std::optional<std::string> auto_options_refusal(Backend backend, const GemmOptions& options);

// GEMM words its usage errors as it always has, and takes only "auto" as the auto choice (an
// empty name is an unknown kernel).
template <>
std::string Registry<GemmProblem>::refusal_message(const Refusal& refusal) const;
template <>
bool Registry<GemmProblem>::names_auto(std::string_view name);

// Adds a kernel of the calling program (not of gemmkit's src/) to the process-wide registry,
// so that `gemm(..., {.kernel = name})`, auto choice (when auto_priority > 0) and the
// benchmark engine see it like a built-in kernel. Usage errors: an empty or duplicate name
// (the built-in names included), "auto", no run function, no dtype, no summary, a CUDA
// kernel without min_compute_capability. Thread-safe against other registrations and
// against find/get/of_backend; iterating entries() while another thread registers is not,
// so register at start-up.
void register_kernel(KernelEntry entry);

namespace detail {
// Each backend contributes its entries through one of these.
void register_cpu_kernels(Registry<GemmProblem>& registry);
void register_cuda_kernels(Registry<GemmProblem>& registry);  // defined only in CUDA builds
}  // namespace detail

}  // namespace gemmkit

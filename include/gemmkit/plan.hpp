// A GEMM plan: the kernel, its workspace and its launches for one problem, decided once and
// run many times (cuBLASLt's matmul descriptor and algorithm; CUTLASS's can_implement,
// get_workspace_size and run). The device API's gemm(ctx, ...) is a plan made and run once.
//
// A plan is made for everything a problem says except its operands' addresses, alpha and
// beta: dtypes, shape, layout, transposes, leading dimensions, batch and strides. The
// addresses given at planning stand for the alignment the operands will have (null: aligned
// as well as any kernel asks), so a kernel that needs 16-byte rows is chosen only when they
// are; run() refuses operands that its kernel cannot take.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

class GemmPlan {
 public:
  // Plans `problem` (device memory of ctx's device, or host memory for the CPU context;
  // pointers may be null) with options.kernel ("auto" or a name) and its kernel options.
  // Usage errors for an invalid problem, an unknown kernel name, a backend that is not the
  // context's, or a kernel option that the kernel named (auto: every kernel it chooses) does
  // not take. A kernel that
  // refuses the problem, a device too old for it, or no kernel accepting it gives a plan that
  // cannot run, with the reason in why_not(). The plan keeps a reference to ctx: it must not
  // outlive it.
  GemmPlan(Context& ctx, const GemmProblem& problem, const GemmOptions& options = {});

  bool can_run() const { return entry_ != nullptr; }
  const std::string& why_not() const { return why_not_; }  // empty when it can run
  // The kernel it runs; a usage error (why_not) when it cannot run.
  const KernelEntry& kernel() const;
  // Device bytes of workspace a run needs (0 for most kernels).
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  // The problem planned, in the caller's layout, with the pointers it was given.
  const GemmProblem& problem() const { return problem_; }
  Context& context() const { return *ctx_; }

  // Why `operands` do not fit the plan (another shape, dtype, layout, leading dimension,
  // batch or stride, naming the first that differs), or nullopt when they do. Pointers, alpha
  // and beta may differ.
  std::optional<std::string> mismatch(const GemmProblem& operands) const;

  // Queues C = alpha op(A) op(B) + beta C for `operands` on `stream`, as gemm(ctx, ...) does:
  // the operands must fit the plan (mismatch) and its kernel must take them (their
  // alignment), else a usage error and nothing is queued. The workspace is the caller's (at
  // least workspace_bytes(), kWorkspaceAlignment-aligned) or, in the second form, the
  // context's pool's for `stream`.
  // Kernel options (GemmOptions: the Ozaki moduli, limbs out) are the plan's, and so is what
  // the run reports of itself (GemmRunReport; empty for most kernels).
  GemmRunReport run(const GemmProblem& operands, Stream stream, Workspace workspace) const;
  GemmRunReport run(const GemmProblem& operands, Stream stream = nullptr) const;

 private:
  // The entry that runs `operands`, or the usage error that refuses them (run's checks).
  const KernelEntry& check(const GemmProblem& operands) const;
  GemmRunReport launch(const KernelEntry& entry, const GemmProblem& operands, Stream stream, Workspace workspace) const;

  Context* ctx_;
  GemmProblem problem_;
  GemmOptions options_;  // the kernel options it runs with
  const KernelEntry* entry_ = nullptr;
  std::string why_not_;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace gemmkit

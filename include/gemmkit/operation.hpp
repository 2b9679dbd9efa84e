// One registry form for the operations besides GEMM (reduce, spmv, conv1d). An entry has the
// fields of the GEMM registry's KernelEntry with the same meaning; only its problem type, and
// so the signatures of precondition, workspace_bytes and run, are the operation's own. The
// launcher gets the same KernelLaunch (context, stream, workspace) as a GEMM kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

// Problem must have a `DType dtype` member.
template <class Problem>
struct OperationKernel {
  std::string name;  // unique within the operation
  Backend backend = Backend::cpu;
  int rung = 0;  // position in the ladder of its backend; references use 0
  KernelRole role = KernelRole::ladder;
  std::string summary;  // one line: what this kernel does differently
  std::vector<DType> dtypes;
  int min_compute_capability = 0;  // 0 for CPU kernels
  int auto_priority = 0;           // "auto" runs the accepting kernel with the highest (0: never)
  // Why the kernel cannot run this problem, or nullopt. Empty: every valid problem of a
  // supported dtype is accepted.
  std::function<std::optional<std::string>(const Problem&)> precondition;
  // Device bytes of scratch a launch needs (empty: none); the launcher gets them in
  // KernelLaunch::workspace and keeps no memory of its own between calls.
  std::function<std::size_t(const Problem&, const Context&)> workspace_bytes;
  // Queues a validated problem, whose pointers are in the backend's memory, on launch.stream
  // (CPU kernels run it).
  std::function<void(const Problem&, const KernelLaunch&)> run;
  // The launches run() makes for a problem (empty: not described), as KernelEntry::launches.
  std::function<std::vector<LaunchPlan>(const Problem&, const LaunchQueries&)> launches;

  bool supports(DType dtype) const {
    for (DType d : dtypes)
      if (d == dtype) return true;
    return false;
  }
  std::size_t workspace_for(const Problem& problem, const Context& ctx) const {
    return workspace_bytes ? workspace_bytes(problem, ctx) : 0;
  }
  std::optional<std::string> rejects(const Problem& problem) const {
    if (!supports(problem.dtype))
      return "kernel '" + name + "' does not run " + std::string(dtype_name(problem.dtype));
    if (precondition) return precondition(problem);
    return std::nullopt;
  }
};

// The kernels of one operation, in ladder order per backend.
template <class Problem>
class OperationRegistry {
 public:
  using Entry = OperationKernel<Problem>;

  explicit OperationRegistry(std::string operation) : operation_(std::move(operation)) {}

  void add(Entry entry) {
    if (find(entry.name))
      fail(ErrorCategory::internal, operation_ + ": kernel '" + entry.name + "' registered twice");
    entries_.push_back(std::move(entry));
  }
  const std::string& operation() const { return operation_; }
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const {
    for (const Entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  // "auto, a, b, ..." for messages.
  std::string names() const {
    std::string s = "auto";
    for (const Entry& e : entries_) s += ", " + e.name;
    return s;
  }
  // The entry by name or a usage error listing the known names.
  const Entry& get(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    fail(ErrorCategory::usage, operation_ + ": unknown kernel '" + std::string(name) +
                                   "' (expected " + names() + ")");
  }

  // The kernel a call runs on `ctx`: `name`, checked against the context's backend and
  // compute capability and the problem, or for "auto"/"" the accepting kernel of the
  // context's backend with the highest auto_priority. Usage errors say why not.
  const Entry& choose(const Context& ctx, const Problem& problem, std::string_view name) const {
    if (name.empty() || name == "auto") {
      const Entry* best = nullptr;
      for (const Entry& e : entries_)
        if (e.backend == ctx.backend() && e.auto_priority > 0 &&
            e.min_compute_capability <= ctx.compute_capability() && !e.rejects(problem) &&
            (!best || e.auto_priority > best->auto_priority))
          best = &e;
      if (!best)
        fail(ErrorCategory::usage, operation_ + ": no " + std::string(backend_name(ctx.backend())) +
                                       " kernel accepts this problem");
      return *best;
    }
    const Entry& e = get(name);
    if (e.backend != ctx.backend())
      fail(ErrorCategory::usage, operation_ + " kernel '" + e.name + "' runs on the " +
                                     std::string(backend_name(e.backend)) + " backend, not " +
                                     std::string(backend_name(ctx.backend())));
    if (e.min_compute_capability > ctx.compute_capability())
      fail(ErrorCategory::usage, operation_ + " kernel '" + e.name + "' needs sm_" +
                                     std::to_string(e.min_compute_capability) + "; the device is sm_" +
                                     std::to_string(ctx.compute_capability()));
    if (auto why = e.rejects(problem)) fail(ErrorCategory::usage, operation_ + ": " + *why);
    return e;
  }

 private:
  std::string operation_;
  std::vector<Entry> entries_;
};

// Runs `entry` on `ctx`: the workspace from the caller when given (checked for size and
// alignment), else from the context's pool for `stream`.
template <class Problem>
void run_operation(const OperationKernel<Problem>& entry, Context& ctx, const Problem& problem,
                   Stream stream, Workspace workspace) {
  const std::size_t need = entry.workspace_for(problem, ctx);
  if (workspace.data) {
    if (reinterpret_cast<std::uintptr_t>(workspace.data) % kWorkspaceAlignment != 0)
      fail(ErrorCategory::usage, "kernel '" + entry.name + "': the caller's workspace is not " +
                                     std::to_string(kWorkspaceAlignment) + "-byte aligned");
    if (workspace.bytes < need)
      fail(ErrorCategory::usage, "kernel '" + entry.name + "' needs " + std::to_string(need) +
                                     " bytes of workspace; the caller's has " +
                                     std::to_string(workspace.bytes));
  } else if (need > 0) {
    workspace = ctx.workspace(stream, need);
  }
  entry.run(problem, KernelLaunch{ctx, stream, workspace});
}

}  // namespace gemmkit

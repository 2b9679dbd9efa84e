// One kernel descriptor and one registry for every operation. A kernel is a Kernel<Problem>:
// what it is (KernelInfo, the same for every operation, which the catalogue lists), what it
// does on its operation's problem (KernelCode) and what only that operation's kernels say
// (KernelTraits: GEMM's are in gemm.hpp). A Registry<Problem> holds one operation's kernels
// and makes its one choice: a name checked, or "auto" (the measured table where the
// operation has one, then the priorities), with the reasons when asked (explain_auto).
// `gemmkit list`, the benchmark, the dispatchers and the tests all read the registries.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/launch_plan.hpp"

namespace gemmkit {

// What a launcher runs with besides the problem.
struct KernelLaunch {
  Context& context;
  Stream stream = nullptr;
  Workspace workspace;  // at least the entry's workspace_for(problem), or empty when 0
};

enum class KernelRole {
  ladder,     // one of our own kernels, a rung of the ladder
  reference,  // a vendor library (OpenBLAS, cuBLAS, CUB, cuSPARSE): the speed baseline
};

// What a kernel is, in the same form for every operation.
struct KernelInfo {
  std::string name;  // unique within its operation, e.g. "cpu_blocked"
  Backend backend = Backend::cpu;
  int rung = 0;  // position in the ladder of its backend; references use 0
  KernelRole role = KernelRole::ladder;
  std::string summary;  // one line: what this kernel does differently
  std::vector<DType> dtypes;
  int min_compute_capability = 0;  // e.g. 90 for sm_90; 0 for CPU kernels
  // "auto" runs the accepting kernel of the backend with the highest priority: the fastest
  // one we know of for that backend (0: never chosen automatically).
  int auto_priority = 0;

  bool supports(DType dtype) const { return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end(); }
};

// What a kernel does. Problems arrive as kernels take them (kernel_form: GEMM's row-major).
template <class Problem>
struct KernelCode {
  // Why the kernel cannot run this problem, or nullopt if it can. Leave empty when every
  // valid problem of a supported dtype is accepted.
  std::function<std::optional<std::string>(const Problem&)> precondition;
  // Device bytes of scratch a launch of this problem needs (empty: none). The launcher gets
  // them in KernelLaunch::workspace; it keeps no memory of its own between calls.
  std::function<std::size_t(const Problem&, const Context&)> workspace_bytes;
  // Queues a validated problem, whose pointers are in the backend's memory, on launch.stream
  // (CPU kernels run it).
  std::function<void(const Problem&, const KernelLaunch&)> run;
  // The launches run() makes for a problem, from the same configuration code (empty: not
  // described; `gemmkit explain` says so). Device facts come from the queries.
  std::function<std::vector<LaunchPlan>(const Problem&, const LaunchQueries&)> launches;
};

// What only one operation's kernels say of themselves; nothing for most.
template <class Problem>
struct KernelTraits {};

// The form in which kernels take a problem: the problem itself (GEMM: its row-major form).
template <class Problem>
const Problem& kernel_form(const Problem& problem) {
  return problem;
}

// A registry entry, written {{info}, {code}, {traits}}: designated initializers name direct
// members only, so each part is one brace. Problem must have a `DType dtype` member.
template <class Problem>
struct Kernel : KernelInfo, KernelCode<Problem>, KernelTraits<Problem> {
  // nullopt if the kernel accepts the problem (dtype supported and precondition met).
  std::optional<std::string> rejects(const Problem& problem) const {
    if (!supports(problem.dtype))
      return "kernel '" + name + "' does not run " + std::string(dtype_name(problem.dtype));
    if (this->precondition) return this->precondition(problem);
    return std::nullopt;
  }
  // Device bytes of workspace a call of `problem` needs.
  std::size_t workspace_for(const Problem& problem, const Context& ctx) const {
    return this->workspace_bytes ? this->workspace_bytes(problem, ctx) : 0;
  }
  // The precision it computes in when lower than the problem's dtype, which "auto" does not
  // choose; nullopt: the problem's own.
  std::optional<DType> computes_in(const Problem&) const { return std::nullopt; }
};

// How "auto" decides, with its reasons (`gemmkit list --auto` prints GEMM's). The rule: where
// the operation has a measured table for the backend and the device is of the compute
// capability it was measured on (or none is given), the kernel measured fastest at the
// nearest measured shape of the problem's class, if it accepts the problem; otherwise the
// backend's kernels with an auto priority, highest first (ties in ladder order), and the
// first that accepts the problem and that the device can run is chosen.
struct AutoCandidate {
  const KernelInfo* entry = nullptr;
  enum class Verdict {
    chosen,
    refused,      // it does not accept the problem, or the device is too old: `reason`
    passed_over,  // a candidate above it was chosen
    unchecked,    // no device given: accepts the problem, chosen on a device that runs it
  } verdict = Verdict::refused;
  std::string reason;  // why refused or passed over ("" when chosen)
};

struct AutoChoice {
  std::string rule;  // the rule in words
  // The chosen kernel; nullptr when none accepts. Without a compute capability: the first
  // candidate that accepts the problem, which a device of at least its min_compute_capability
  // runs; the candidates an older device would get instead are marked `unchecked` too.
  const KernelInfo* chosen = nullptr;
  bool device_checked = true;  // false: no compute capability was given
  // Nonzero when the measured table chose: the compute capability it was measured on (and
  // applies to); without a device, other devices get the priorities' choice (see candidates).
  int tuned_compute_capability = 0;
  std::vector<AutoCandidate> candidates;  // in the order considered
};

// An operation's measured table: for a problem, the kernels timed fastest at the nearest
// measured shapes, nearest first. It applies on its backend, on devices of its compute
// capability.
template <class Problem>
struct MeasuredTable {
  struct Pick {
    std::string kernel;
    std::string where;  // the measurement, e.g. "fastest at 512x512x512 (98.0% of cuBLAS) in ..."
  };
  Backend backend = Backend::cuda;
  int compute_capability = 0;
  std::string rule;  // how it picks, in words
  // The problem in kernel_form; `described`: fill in `where` (only an explanation reads it,
  // so a call's choice builds no text).
  std::function<std::vector<Pick>(const Problem&, bool described)> picks;
};

namespace detail {

// Guards every registry against additions after start-up (register_kernel): lookups share
// it, additions own it.
std::shared_mutex& registry_mutex();

// The auto rule over one backend's kernels, with nothing of the problem's type left.
struct AutoQuery {
  Backend backend = Backend::cpu;
  std::optional<int> compute_capability;  // nullopt: no device; requirements said, not checked
  DType dtype = DType::f32;                // the problem's
  std::vector<const KernelInfo*> ladder;   // the backend's kernels in ladder order
  struct Pick {
    const KernelInfo* kernel;
    std::string where;
  };
  std::vector<Pick> measured;  // the measured table's picks in this build, nearest first
  std::string_view measured_rule;  // empty: no table for the backend
  int measured_compute_capability = 0;
  std::function<std::optional<std::string>(const KernelInfo&)> rejects;
  std::function<std::optional<DType>(const KernelInfo&)> computes_in;
};

// The kernel auto runs, or nullptr. With `explain`, every candidate's verdict and the rule
// are recorded there; without it the walk stops at the chosen kernel (the per-call path).
const KernelInfo* choose_auto(const AutoQuery& query, AutoChoice* explain);

}  // namespace detail

// One operation's kernels, in the order registered. Entries are never removed and, in a
// deque, never moved: references to them stay valid while the process runs.
namespace detail {
// What an unknown kernel name may mean in a build without CUDA, whose CUDA parts register nothing.
inline std::string without_cuda_note() {
  return cuda_compiled() ? "" : "; this gemmkit was built without the CUDA backend, so it has no CUDA kernels";
}
}  // namespace detail

template <class Problem>
class Registry {
 public:
  using Entry = Kernel<Problem>;

  explicit Registry(std::string operation) : operation_(std::move(operation)) {}

  const std::string& operation() const { return operation_; }
  // An internal error on a duplicate name or an entry without run().
  void add(Entry entry) {
    if (!entry.run) fail(ErrorCategory::internal, operation_ + ": kernel '" + entry.name + "' has no launcher");
    const std::string name = entry.name;
    if (!try_add(std::move(entry)))
      fail(ErrorCategory::internal, operation_ + ": kernel '" + name + "' is registered twice");
  }
  // Adds the entry unless its name is taken (then false).
  bool try_add(Entry entry) {
    const std::unique_lock lock(detail::registry_mutex());
    if (find_unlocked(entry.name)) return false;
    entries_.push_back(std::move(entry));
    return true;
  }
  // Iterating while another thread adds is not safe: add at start-up.
  const std::deque<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const {  // nullptr if unknown
    const std::shared_lock lock(detail::registry_mutex());
    return find_unlocked(name);
  }
  // The entry by name or a usage error listing the known names.
  const Entry& get(std::string_view name) const {
    std::string known;
    {
      const std::shared_lock lock(detail::registry_mutex());
      if (const Entry* e = find_unlocked(name)) return *e;
      for (const Entry& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
    }
    fail(ErrorCategory::usage, refusal_message({Refusal::unknown_name, name, nullptr, nullptr, nullptr, known}));
  }
  // "auto, a, b, ..." for messages.
  std::string names() const {
    const std::shared_lock lock(detail::registry_mutex());
    std::string s = "auto";
    for (const Entry& e : entries_) s += ", " + e.name;
    return s;
  }
  // Entries of one backend in ladder order (references first, then by rung).
  std::vector<const Entry*> of_backend(Backend backend) const {
    std::vector<const Entry*> out;
    {
      const std::shared_lock lock(detail::registry_mutex());
      for (const Entry& e : entries_)
        if (e.backend == backend) out.push_back(&e);
    }
    std::stable_sort(out.begin(), out.end(), [](const Entry* a, const Entry* b) {
      if ((a->role == KernelRole::reference) != (b->role == KernelRole::reference))
        return a->role == KernelRole::reference;
      return a->rung < b->rung;
    });
    return out;
  }

  // The operation's measured table (none by default).
  void set_measured_table(MeasuredTable<Problem> table) { measured_ = std::move(table); }

  // What a caller refuses of a kernel besides what the kernel refuses (the operation's
  // options it does not take): nullopt when it is no matter.
  using Filter = std::function<std::optional<std::string>(const Entry&)>;

  // The kernel a call runs on `ctx`: `name`, checked against the context's backend, the
  // problem and the device's compute capability, or for "auto" the auto choice (among the
  // kernels `also` does not refuse). Usage errors say why not. `problem` is the caller's;
  // kernels judge its kernel_form.
  const Entry& choose(const Context& ctx, const Problem& problem, std::string_view name,
                      const Filter& also = {}) const {
    const auto& p = kernel_form(problem);
    if (names_auto(name)) {
      if (const Entry* e = choose_auto(ctx, p, also)) return *e;
      fail(ErrorCategory::usage, refusal_message({Refusal::none_accepts, name, nullptr, &problem, &ctx, {}}));
    }
    const Entry& e = get(name);
    if (e.backend != ctx.backend())
      fail(ErrorCategory::usage, refusal_message({Refusal::other_backend, name, &e, &problem, &ctx, {}}));
    if (auto why = e.rejects(p))
      fail(ErrorCategory::usage, refusal_message({Refusal::refused, name, &e, &problem, &ctx, *why}));
    if (auto why = also ? also(e) : std::nullopt)
      fail(ErrorCategory::usage, refusal_message({Refusal::refused, name, &e, &problem, &ctx, *why}));
    if (e.backend != Backend::cpu && e.min_compute_capability > ctx.compute_capability())
      fail(ErrorCategory::usage, refusal_message({Refusal::old_device, name, &e, &problem, &ctx, {}}));
    return e;
  }
  // The auto choice for a problem in kernel_form on `ctx`, or nullptr when none accepts it.
  const Entry* choose_auto(const Context& ctx, const Problem& problem, const Filter& also = {}) const {
    return static_cast<const Entry*>(
        detail::choose_auto(query(ctx.backend(), ctx.compute_capability(), problem, false, also), nullptr));
  }
  // The auto decision with its reasons, on `backend` with a device of `compute_capability`
  // (ignored for the CPU); nullopt: no device to ask, the candidates' requirements are
  // reported instead of checked. The problem is the caller's and is not validated.
  AutoChoice explain_auto(Backend backend, std::optional<int> compute_capability, const Problem& problem) const {
    AutoChoice choice;
    const auto& p = kernel_form(problem);
    detail::choose_auto(query(backend, compute_capability, p, true), &choice);
    return choice;
  }

 private:
  // A usage error of get() or choose(), worded by the operation (GEMM: registry.cpp).
  struct Refusal {
    enum Kind { unknown_name, other_backend, refused, old_device, none_accepts } kind;
    std::string_view name;   // as asked
    const Entry* entry;      // the kernel of that name
    const Problem* problem;  // the caller's
    const Context* ctx;
    std::string why;  // refused: the kernel's reason; unknown_name: the known names
  };
  std::string refusal_message(const Refusal& r) const {
    const auto backend = [](Backend b) { return std::string(backend_name(b)); };
    switch (r.kind) {
      case Refusal::unknown_name:
        return operation_ + ": unknown kernel '" + std::string(r.name) + "' (expected auto" +
               (r.why.empty() ? "" : ", " + r.why) + ")" + detail::without_cuda_note();
      case Refusal::other_backend:
        return operation_ + " kernel '" + r.entry->name + "' runs on the " + backend(r.entry->backend) +
               " backend, not " + backend(r.ctx->backend());
      case Refusal::refused: return operation_ + ": " + r.why;
      case Refusal::old_device:
        return operation_ + " kernel '" + r.entry->name + "' needs sm_" +
               std::to_string(r.entry->min_compute_capability) + "; the device is sm_" +
               std::to_string(r.ctx->compute_capability());
      case Refusal::none_accepts:
        return operation_ + ": no " + backend(r.ctx->backend()) + " kernel accepts this problem";
    }
    return operation_ + ": no kernel";
  }
  // Whether a name asks for the auto choice ("auto", or none).
  static bool names_auto(std::string_view name) { return name.empty() || name == "auto"; }

  const Entry* find_unlocked(std::string_view name) const {
    for (const Entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  // The auto rule's question for a problem in kernel_form, which must outlive the answer.
  detail::AutoQuery query(Backend backend, std::optional<int> cc, const Problem& p, bool described,
                          const Filter& also = {}) const {
    detail::AutoQuery q;
    q.backend = backend;
    q.compute_capability = cc;
    q.dtype = p.dtype;
    for (const Entry* e : of_backend(backend)) q.ladder.push_back(e);
    if (measured_ && measured_->backend == backend) {
      q.measured_rule = measured_->rule;
      q.measured_compute_capability = measured_->compute_capability;
      if (!cc || *cc == measured_->compute_capability)
        for (auto& pick : measured_->picks(p, described))
          if (const Entry* e = find(pick.kernel)) q.measured.push_back({e, std::move(pick.where)});  // else not built
    }
    q.rejects = [&p, &also](const KernelInfo& k) {
      const Entry& e = static_cast<const Entry&>(k);
      if (auto why = e.rejects(p)) return why;
      return also ? also(e) : std::nullopt;
    };
    q.computes_in = [&p](const KernelInfo& k) { return static_cast<const Entry&>(k).computes_in(p); };
    return q;
  }

  std::string operation_;
  std::deque<Entry> entries_;
  std::optional<MeasuredTable<Problem>> measured_;
};

// Runs `entry` on `ctx`: the workspace from the caller when given (checked for size and
// alignment), else from the context's pool for `stream`.
template <class Problem>
void run_operation(const Kernel<Problem>& entry, Context& ctx, const Problem& problem, Stream stream,
                   Workspace workspace) {
  const std::size_t need = entry.workspace_for(problem, ctx);
  if (workspace.data) {
    if (reinterpret_cast<std::uintptr_t>(workspace.data) % kWorkspaceAlignment != 0)
      fail(ErrorCategory::usage, "kernel '" + entry.name + "': the caller's workspace is not " +
                                     std::to_string(kWorkspaceAlignment) + "-byte aligned");
    if (workspace.bytes < need)
      fail(ErrorCategory::usage, "kernel '" + entry.name + "' needs " + std::to_string(need) +
                                     " bytes of workspace; the caller's has " + std::to_string(workspace.bytes));
  } else if (need > 0) {
    workspace = ctx.workspace(stream, need);
  }
  entry.run(problem, KernelLaunch{ctx, stream, workspace});
}

// An operation's device API in one call: the kernel `kernel` names ("auto": the choice by
// priority) for the problem on ctx, run with run_operation; returns the kernel that ran.
template <class Problem>
const Kernel<Problem>& choose_and_run(const Registry<Problem>& registry, Context& ctx, const Problem& problem,
                                      Stream stream, std::string_view kernel, Workspace workspace) {
  const Kernel<Problem>& entry = registry.choose(ctx, problem, kernel);
  run_operation(entry, ctx, problem, stream, workspace);
  return entry;
}

// The workspace of the kernel choose_and_run would run.
template <class Problem>
std::size_t chosen_workspace(const Registry<Problem>& registry, const Context& ctx, const Problem& problem,
                             std::string_view kernel) {
  return registry.choose(ctx, problem, kernel).workspace_for(problem, ctx);
}

// The CPU reference entry every operation but GEMM has: "cpu_reference", the reference role,
// and the lowest automatic priority (a CPU context's only choice, never a GPU's).
template <class Problem>
Kernel<Problem> cpu_reference_kernel(std::string summary, std::vector<DType> dtypes,
                                     std::function<void(const Problem&)> run) {
  Kernel<Problem> e;
  e.name = "cpu_reference";
  e.backend = Backend::cpu;
  e.role = KernelRole::reference;
  e.summary = std::move(summary);
  e.dtypes = std::move(dtypes);
  e.auto_priority = 1;
  e.run = [run = std::move(run)](const Problem& p, const KernelLaunch&) { run(p); };
  return e;
}

}  // namespace gemmkit

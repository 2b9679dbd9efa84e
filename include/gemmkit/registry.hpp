// The kernel registry: one entry per GEMM kernel. `gemmkit list`, the benchmark, the
// dispatcher and the tests all read it, so a kernel exists once it is registered here.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/dtype.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/launch_plan.hpp"

namespace gemmkit {

// What a launcher runs with besides the problem.
struct KernelLaunch {
  Context& context;
  Stream stream = nullptr;
  Workspace workspace;  // at least the entry's workspace_bytes(problem), or empty when 0
};

enum class KernelRole {
  ladder,     // one of our own kernels, a rung of the ladder
  reference,  // a vendor library (OpenBLAS, cuBLAS): the speed baseline
};

// An empty C (M, N or the batch 0): there is nothing to write, however K, alpha and beta
// read, so no kernel runs and none needs workspace.
inline bool writes_nothing(const GemmProblem& p) { return p.m == 0 || p.n == 0 || p.batch == 0; }

struct KernelEntry {
  std::string name;      // unique, e.g. "cpu_blocked"
  Backend backend = Backend::cpu;
  int rung = 0;          // position in the ladder of its backend; references use 0
  KernelRole role = KernelRole::ladder;
  std::string summary;   // one line: what this kernel does differently
  std::vector<DType> dtypes;
  std::optional<DType> accuracy;  // the precision it computes in when lower than the dtype (e.g. tf32); tolerances follow it
  int min_compute_capability = 0;  // e.g. 90 for sm_90; 0 for CPU kernels
  // `--kernel auto` runs the accepting kernel of the backend with the highest priority:
  // the fastest one we know of for that backend (0: never chosen automatically).
  int auto_priority = 0;
  // Accepts f16/bf16 inputs with C in f32 (GemmProblem::out_dtype).
  bool half_inputs_f32_output = false;
  // Accepts i32 inputs with C in i64 (GemmProblem::out_dtype): exact results wider than the inputs.
  bool wider_integer_output = false;
  // Runs a strided batch (GemmProblem::batch) itself, in one launch; otherwise the library
  // runs the batch's products one after another.
  bool batched = false;
  // Returns why the kernel cannot run this problem, or nullopt if it can. Leave empty when
  // every valid problem of a supported dtype is accepted. Problems arrive row-major.
  std::function<std::optional<std::string>(const GemmProblem&)> precondition;
  // Device bytes of scratch a launch of this problem needs (empty: none). The launcher
  // gets them in KernelLaunch::workspace; it keeps no memory of its own between calls.
  std::function<std::size_t(const GemmProblem&, const Context&)> workspace_bytes;
  // Queues a validated row-major problem, whose pointers are in the backend's memory, on
  // launch.stream (CPU kernels run it). Batched only when `batched` is set.
  std::function<void(const GemmProblem&, const KernelLaunch&)> run;
  // The launches run() makes for a row-major problem, from the same configuration code
  // (empty: not described; `gemmkit explain` says so). Device facts come from `queries`.
  std::function<std::vector<LaunchPlan>(const GemmProblem&, const LaunchQueries&)> launches;

  bool supports(DType dtype) const;
  // Workspace for a call of `problem`. An entry that does not batch runs the products one
  // after another on one stream, so one product's workspace serves them all.
  std::size_t workspace_for(const GemmProblem& problem, const Context& ctx) const {
    if (!workspace_bytes || writes_nothing(problem)) return 0;
    return workspace_bytes(batched || problem.batch <= 1 ? problem : batch_item(problem, 0), ctx);
  }
  // Runs `problem` (the whole batch) through run(): in one call when batched, else product
  // by product; nothing at all when C is empty (writes_nothing), so run() never sees such a
  // problem from here. K = 0 is not empty: C becomes beta C.
  void run_batch(const GemmProblem& problem, const KernelLaunch& launch) const;
  // nullopt if the kernel accepts the problem (dtype supported and precondition met).
  std::optional<std::string> rejects(const GemmProblem& problem) const;
};

class Registry {
 public:
  void add(KernelEntry entry);  // throws an internal error on a duplicate name
  // A deque: entries added later (register_kernel) leave references to earlier ones valid.
  const std::deque<KernelEntry>& entries() const { return entries_; }
  const KernelEntry* find(std::string_view name) const;  // nullptr if unknown
  // Entries of one backend in ladder order (references first).
  std::vector<const KernelEntry*> of_backend(Backend backend) const;
  // The entry by name or a usage error listing the known names.
  const KernelEntry& get(std::string_view name) const;

 private:
  std::deque<KernelEntry> entries_;
  friend void register_kernel(KernelEntry entry);
};

// The process-wide GEMM registry, filled with every kernel compiled into this build.
const Registry& gemm_registry();

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
void register_cpu_kernels(Registry& registry);
void register_cuda_kernels(Registry& registry);  // defined only in CUDA builds
}  // namespace detail

}  // namespace gemmkit

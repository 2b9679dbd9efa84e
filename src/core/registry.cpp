#include "gemmkit/registry.hpp"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

namespace gemmkit {

bool KernelEntry::supports(DType dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

void KernelEntry::run_batch(const GemmProblem& problem, const KernelLaunch& launch) const {
  if (writes_nothing(problem)) return;  // so no launcher needs to check
  if (batched) {
    run(problem, launch);
    return;
  }
  for (std::int64_t i = 0; i < problem.batch; ++i) run(batch_item(problem, i), launch);
}

std::optional<std::string> KernelEntry::rejects(const GemmProblem& problem) const {
  if (!supports(problem.dtype))
    return "dtype " + std::string(dtype_name(problem.dtype)) + " is not supported";
  // int8 inputs always come with int32 C (validate checks), which every int8 entry writes;
  // i32 inputs with i64 C only for entries that say so.
  const bool wider_integer = problem.dtype == DType::i32 && problem.c_dtype() == DType::i64;
  if (problem.c_dtype() != problem.dtype && problem.dtype != DType::i8 &&
      !(wider_integer ? wider_integer_output : half_inputs_f32_output))
    return "C in " + std::string(dtype_name(problem.c_dtype())) + " is not supported";
  if (!precondition) return std::nullopt;
  if (batched || problem.batch <= 1) return precondition(problem);
  // Run one product at a time: every product must be accepted. What preconditions check
  // (sizes, and alignments of pointers that advance by fixed strides) holds for every
  // product when it holds for the first two.
  if (auto why = precondition(batch_item(problem, 0))) return why;
  return precondition(batch_item(problem, 1));
}

namespace {

// Guards every registry against register_kernel: lookups share it, registration owns it.
std::shared_mutex& registry_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

const KernelEntry* find_in(const std::deque<KernelEntry>& entries, std::string_view name) {
  for (const auto& e : entries)
    if (e.name == name) return &e;
  return nullptr;
}

// The process-wide registry; only register_kernel changes it after it is made.
Registry& process_registry() {
  static Registry registry = [] {
    Registry r;
    detail::register_cpu_kernels(r);
#ifdef GEMMKIT_HAVE_CUDA
    detail::register_cuda_kernels(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace

const Registry& gemm_registry() { return process_registry(); }

void Registry::add(KernelEntry entry) {
  if (find_in(entries_, entry.name))
    fail(ErrorCategory::internal, "kernel '" + entry.name + "' is registered twice");
  if (!entry.run) fail(ErrorCategory::internal, "kernel '" + entry.name + "' has no launcher");
  entries_.push_back(std::move(entry));
}

void register_kernel(KernelEntry entry) {
  auto bad = [&](const std::string& why) {
    fail(ErrorCategory::usage, "cannot register kernel '" + entry.name + "': " + why);
  };
  if (entry.name.empty() || entry.name == "auto") bad("the name must be non-empty and not 'auto'");
  if (!entry.run) bad("it has no run function");
  if (entry.dtypes.empty()) bad("it declares no dtype");
  if (entry.summary.empty()) bad("it has no summary (gemmkit list shows it)");
  if (entry.backend == Backend::cuda && entry.min_compute_capability <= 0)
    bad("a CUDA kernel needs min_compute_capability (e.g. 80)");
  Registry& registry = process_registry();
  const std::unique_lock lock(registry_mutex());
  if (find_in(registry.entries_, entry.name)) bad("a kernel of that name is already registered");
  registry.entries_.push_back(std::move(entry));
}

const KernelEntry* Registry::find(std::string_view name) const {
  const std::shared_lock lock(registry_mutex());
  return find_in(entries_, name);
}

const KernelEntry& Registry::get(std::string_view name) const {
  const std::shared_lock lock(registry_mutex());
  if (const KernelEntry* e = find_in(entries_, name)) return *e;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  fail(ErrorCategory::usage, "unknown kernel '" + std::string(name) + "' (known: " + known +
                                 "; see 'gemmkit list')");
}

std::vector<const KernelEntry*> Registry::of_backend(Backend backend) const {
  std::vector<const KernelEntry*> out;
  {
    const std::shared_lock lock(registry_mutex());
    for (const auto& e : entries_)
      if (e.backend == backend) out.push_back(&e);
  }
  // References first, then the ladder in rung order.
  std::stable_sort(out.begin(), out.end(), [](const KernelEntry* a, const KernelEntry* b) {
    if ((a->role == KernelRole::reference) != (b->role == KernelRole::reference))
      return a->role == KernelRole::reference;
    return a->rung < b->rung;
  });
  return out;
}

}  // namespace gemmkit

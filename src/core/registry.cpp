#include "gemmkit/registry.hpp"

#include <algorithm>

namespace gemmkit {

bool KernelEntry::supports(DType dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

std::optional<std::string> KernelEntry::rejects(const GemmProblem& problem) const {
  if (!supports(problem.dtype))
    return "dtype " + std::string(dtype_name(problem.dtype)) + " is not supported";
  if (problem.c_dtype() != problem.dtype && !half_inputs_f32_output)
    return "C in " + std::string(dtype_name(problem.c_dtype())) + " is not supported";
  if (!precondition) return std::nullopt;
  if (batched || problem.batch <= 1) return precondition(problem);
  // Run one product at a time: every product must be accepted. What preconditions check
  // (sizes, and alignments of pointers that advance by fixed strides) holds for every
  // product when it holds for the first two.
  if (auto why = precondition(batch_item(problem, 0))) return why;
  return precondition(batch_item(problem, 1));
}

const Registry& Registry::instance() {
  static const Registry registry = [] {
    Registry r;
    detail::register_cpu_kernels(r);
#ifdef GEMMKIT_HAVE_CUDA
    detail::register_cuda_kernels(r);
#endif
    return r;
  }();
  return registry;
}

void Registry::add(KernelEntry entry) {
  if (find(entry.name))
    fail(ErrorCategory::internal, "kernel '" + entry.name + "' is registered twice");
  if (!entry.run) fail(ErrorCategory::internal, "kernel '" + entry.name + "' has no launcher");
  entries_.push_back(std::move(entry));
}

const KernelEntry* Registry::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const KernelEntry& Registry::get(std::string_view name) const {
  if (const KernelEntry* e = find(name)) return *e;
  std::string known;
  for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  fail(ErrorCategory::usage, "unknown kernel '" + std::string(name) + "' (known: " + known +
                                 "; see 'gemmkit list')");
}

std::vector<const KernelEntry*> Registry::of_backend(Backend backend) const {
  std::vector<const KernelEntry*> out;
  for (const auto& e : entries_)
    if (e.backend == backend) out.push_back(&e);
  // References first, then the ladder in rung order.
  std::stable_sort(out.begin(), out.end(), [](const KernelEntry* a, const KernelEntry* b) {
    if ((a->role == KernelRole::reference) != (b->role == KernelRole::reference))
      return a->role == KernelRole::reference;
    return a->rung < b->rung;
  });
  return out;
}

}  // namespace gemmkit

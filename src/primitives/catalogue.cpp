// The catalogue: every operation's registry in one form.
#include "gemmkit/catalogue.hpp"

#include "gemmkit/conv1d.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit {
namespace {

template <class Problem>
void add_operation(std::vector<CatalogueEntry>& out, const OperationRegistry<Problem>& registry) {
  for (const auto& e : registry.entries())
    out.push_back({registry.operation(), e.name, e.backend, e.rung, e.role, e.summary, e.dtypes,
                   std::nullopt, e.min_compute_capability, e.auto_priority});
}

}  // namespace

std::string_view kernel_role_name(KernelRole role) {
  return role == KernelRole::reference ? "reference" : "ladder";
}

const std::vector<std::string_view>& catalogue_operations() {
  static const std::vector<std::string_view> operations = {"gemm", "reduce", "spmv", "conv1d"};
  return operations;
}

std::vector<CatalogueEntry> catalogue(std::string_view operation) {
  bool known = operation.empty();
  std::string names;
  for (std::string_view op : catalogue_operations()) {
    known = known || op == operation;
    names += (names.empty() ? "" : ", ") + std::string(op);
  }
  if (!known)
    fail(ErrorCategory::usage, "unknown operation '" + std::string(operation) + "' (expected " + names + ")");
  const auto wanted = [&](std::string_view op) { return operation.empty() || operation == op; };
  std::vector<CatalogueEntry> out;
  if (wanted("gemm"))
    for (Backend b : {Backend::cpu, Backend::cuda})
      for (const KernelEntry* e : Registry::instance().of_backend(b))
        out.push_back({"gemm", e->name, e->backend, e->rung, e->role, e->summary, e->dtypes, e->accuracy,
                       e->min_compute_capability, e->auto_priority});
  if (wanted("reduce")) add_operation(out, reduce_registry());
  if (wanted("spmv")) add_operation(out, spmv_registry());
  if (wanted("conv1d")) add_operation(out, conv1d_registry());
  return out;
}

}  // namespace gemmkit

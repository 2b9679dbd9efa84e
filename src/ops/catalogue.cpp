// The catalogue: every operation's registry in one list.
#include "gemmkit/catalogue.hpp"

#include "gemmkit/conv1d.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit {
namespace {

template <class Problem>
void add_entries(std::vector<CatalogueEntry>& out, std::string_view operation, const Registry<Problem>& registry) {
  for (const Kernel<Problem>& e : registry.entries()) out.push_back({operation, &e, nullptr});
}

// The registries in catalogue order: each operation's name once, with how its entries join.
struct OperationRegistryRef {
  std::string_view name;
  void (*add)(std::vector<CatalogueEntry>& out, std::string_view name);
};

const std::vector<OperationRegistryRef>& registries() {
  static const std::vector<OperationRegistryRef> list = {
      {"gemm",
       [](std::vector<CatalogueEntry>& out, std::string_view name) {
         for (Backend b : {Backend::cpu, Backend::cuda})
           for (const KernelEntry* e : gemm_registry().of_backend(b)) out.push_back({name, e, e});
       }},
      {"reduce", [](std::vector<CatalogueEntry>& out, std::string_view name) { add_entries(out, name, reduce_registry()); }},
      {"spmv", [](std::vector<CatalogueEntry>& out, std::string_view name) { add_entries(out, name, spmv_registry()); }},
      {"conv1d", [](std::vector<CatalogueEntry>& out, std::string_view name) { add_entries(out, name, conv1d_registry()); }},
  };
  return list;
}

}  // namespace

std::string_view kernel_role_name(KernelRole role) {
  return role == KernelRole::reference ? "reference" : "ladder";
}

const std::vector<std::string_view>& catalogue_operations() {
  static const std::vector<std::string_view> operations = [] {
    std::vector<std::string_view> names;
    for (const OperationRegistryRef& r : registries()) names.push_back(r.name);
    return names;
  }();
  return operations;
}

std::vector<CatalogueEntry> catalogue(std::string_view operation) {
  std::vector<CatalogueEntry> out;
  std::string names;
  bool known = operation.empty();
  for (const OperationRegistryRef& r : registries()) {
    names += (names.empty() ? "" : ", ") + std::string(r.name);
    if (operation.empty() || operation == r.name) {
      known = true;
      r.add(out, r.name);
    }
  }
  if (!known)
    fail(ErrorCategory::usage, "unknown operation '" + std::string(operation) + "' (expected " + names + ")");
  return out;
}

}  // namespace gemmkit

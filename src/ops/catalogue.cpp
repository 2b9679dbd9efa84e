// The catalogue: every operation in one list, each defined by its own folder
// (src/ops/<op>/operation.cpp). A new operation is its folder and one line here.
#include "gemmkit/catalogue.hpp"

#include <string>

#include "gemmkit/error.hpp"

#define GEMMKIT_OPERATIONS(OPERATION) \
  OPERATION(gemm)                     \
  OPERATION(reduce)                   \
  OPERATION(spmv)                     \
  OPERATION(conv1d)                   \
  OPERATION(transpose)                \
  OPERATION(modular)                  \
  OPERATION(walks)

namespace gemmkit {
namespace detail {
#define GEMMKIT_DECLARE_OPERATION(op) Operation op##_operation();
GEMMKIT_OPERATIONS(GEMMKIT_DECLARE_OPERATION)
#undef GEMMKIT_DECLARE_OPERATION
}  // namespace detail

const std::vector<Operation>& operations() {
#define GEMMKIT_LIST_OPERATION(op) detail::op##_operation(),
  static const std::vector<Operation> list = {GEMMKIT_OPERATIONS(GEMMKIT_LIST_OPERATION)};
#undef GEMMKIT_LIST_OPERATION
  return list;
}

const std::vector<std::string_view>& catalogue_operations() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Operation& o : operations()) out.push_back(o.name);
    return out;
  }();
  return names;
}

const Operation& find_operation(std::string_view name) {
  std::string names;
  for (const Operation& o : operations()) {
    if (o.name == name) return o;
    names += (names.empty() ? "" : ", ") + std::string(o.name);
  }
  fail(ErrorCategory::usage, "unknown operation '" + std::string(name) + "' (expected " + names + ")");
}

std::string_view kernel_role_name(KernelRole role) {
  return role == KernelRole::reference ? "reference" : "ladder";
}

std::vector<CatalogueEntry> catalogue(std::string_view operation) {
  std::vector<CatalogueEntry> out;
  if (!operation.empty()) {
    find_operation(operation).add_entries(out);
    return out;
  }
  for (const Operation& o : operations()) o.add_entries(out);
  return out;
}

Explanation explain_operation(std::string_view operation, const ExplainRequest& request) {
  return find_operation(operation).explain(request);
}

}  // namespace gemmkit

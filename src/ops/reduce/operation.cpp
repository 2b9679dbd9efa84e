// reduce as the catalogue lists it: its registry, and a problem of N values for explain.
#include "gemmkit/reduce.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation reduce_operation() {
  return {"reduce", "N (values)", 1,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "reduce", reduce_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1) fail(ErrorCategory::usage, "explain reduce needs a length of at least 1 (--shape N)");
            ReduceProblem p;
            p.n = std::size_t(r.m);
            p.x = fake_device_pointer(1);
            p.result = fake_device_pointer(2);
            return explain_entry("reduce", reduce_registry(), r, p, "one thread", [&](const std::string& dtype) {
              return "reduce " + std::to_string(r.m) + " values, " + dtype;
            });
          }};
}

}  // namespace gemmkit::detail

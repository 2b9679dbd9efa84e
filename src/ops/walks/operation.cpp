// walks as the catalogue lists it: its registry (the engines), and a graph of N vertices for
// explain, which says what an engine is (the engines' launches are not described).
#include "gemmkit/walks.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation walks_operation() {
  return {"walks", "N (vertices)", 1,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "walks", walks_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1) fail(ErrorCategory::usage, "explain walks needs a graph of at least 1 vertex (--shape N)");
            return explain_entry("walks", walks_registry(), r, WalksProblem{}, "OpenMP threads",
                                 [&](const std::string& dtype) {
                                   return "walk counts on " + std::to_string(r.m) + " vertices, counts as " + dtype;
                                 });
          }};
}

}  // namespace gemmkit::detail

// transpose as the catalogue lists it: its registry, and a ROWSxCOLS matrix for explain.
#include "gemmkit/transpose.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation transpose_operation() {
  return {"transpose", "ROWSxCOLS (A's; B is COLS x ROWS)", 2,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "transpose", transpose_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1 || r.n < 1) fail(ErrorCategory::usage, "explain transpose needs ROWSxCOLS, both at least 1 (--shape)");
            TransposeProblem p;
            p.rows = r.m, p.cols = r.n;
            p.a = fake_device_pointer(1), p.lda = r.n;
            p.b = fake_device_pointer(2), p.ldb = r.m;
            return explain_entry("transpose", transpose_registry(), r, p, "one thread", [&](const std::string& dtype) {
              return "B (" + std::to_string(r.n) + " x " + std::to_string(r.m) + ") = A^T, A " + std::to_string(r.m) +
                     " x " + std::to_string(r.n) + ", " + dtype;
            });
          }};
}

}  // namespace gemmkit::detail

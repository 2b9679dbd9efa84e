// spmv as the catalogue lists it: its registry, and a CSR problem of ROWSxCOLSxNNZ for explain.
#include "gemmkit/sparse.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation spmv_operation() {
  return {"spmv", "ROWSxCOLSxNNZ", 3,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "spmv", spmv_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1 || r.n < 1 || r.k < 0)
              fail(ErrorCategory::usage,
                   "explain spmv needs ROWSxCOLSxNNZ with rows and columns of at least 1 (--shape)");
            SpmvProblem p;
            p.rows = r.m, p.cols = r.n, p.nnz = r.k;
            p.row_offsets = fake_device_pointer(1);
            p.col_indices = static_cast<const std::int32_t*>(fake_device_pointer(2));
            p.values = fake_device_pointer(3);
            p.x = fake_device_pointer(4);
            p.y = fake_device_pointer(5);
            return explain_entry("spmv", spmv_registry(), r, p, "OpenMP threads over rows", [&](const std::string& dtype) {
              return "y = A x, A " + std::to_string(r.m) + " x " + std::to_string(r.n) + " with " +
                     std::to_string(r.k) + " nonzeros, " + dtype;
            });
          }};
}

}  // namespace gemmkit::detail

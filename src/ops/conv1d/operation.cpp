// conv1d as the catalogue lists it: its registry, and N values with a mask of WIDTH taps for explain.
#include "gemmkit/conv1d.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation conv1d_operation() {
  return {"conv1d", "NxWIDTH (values, mask taps)", 2,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "conv1d", conv1d_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1 || r.n < 1) fail(ErrorCategory::usage, "explain conv1d needs NxWIDTH, both at least 1 (--shape)");
            Conv1dProblem p;
            p.n = r.m, p.width = r.n;
            p.x = fake_device_pointer(1);
            p.mask = nullptr;  // host memory: plans do not read it
            p.y = fake_device_pointer(2);
            return explain_entry("conv1d", conv1d_registry(), r, p, "one thread", [&](const std::string& dtype) {
              return "convolve " + std::to_string(r.m) + " values with a mask of " + std::to_string(r.n) + " taps, " + dtype;
            });
          }};
}

}  // namespace gemmkit::detail

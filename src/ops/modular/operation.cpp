// modular as the catalogue lists it: its registry, and a batch of one modulus (251) of
// MxNxK residues for explain.
#include "gemmkit/modular.hpp"
#include "ops/operation_parts.hpp"

namespace gemmkit::detail {

Operation modular_operation() {
  return {"modular", "MxNxK (one modulus, 251)", 3,
          [](std::vector<CatalogueEntry>& out) { add_registry_entries(out, "modular", modular_registry()); },
          [](const ExplainRequest& r) {
            if (r.m < 1 || r.n < 1 || r.k < 1)
              fail(ErrorCategory::usage, "explain modular needs MxNxK, each at least 1 (--shape)");
            ModularGemmProblem p;
            p.m = r.m, p.n = r.n, p.k = r.k, p.moduli = {251};
            p.a = static_cast<const std::int8_t*>(fake_device_pointer(1)), p.lda = r.k;
            p.b = static_cast<const std::int8_t*>(fake_device_pointer(2)), p.ldb = r.k;
            p.c = static_cast<std::int8_t*>(fake_device_pointer(3)), p.ldc = r.n;
            return explain_entry("modular", modular_registry(), r, p, "OpenMP threads over rows",
                                 [&](const std::string& dtype) {
                                   return "C = A B mod 251, A " + std::to_string(r.m) + " x " + std::to_string(r.k) +
                                          " and B " + std::to_string(r.k) + " x " + std::to_string(r.n) +
                                          " centred residues, " + dtype;
                                 });
          }};
}

}  // namespace gemmkit::detail

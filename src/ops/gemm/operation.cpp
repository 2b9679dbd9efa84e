// GEMM as the catalogue lists it: both backends' entries, and explain (src/runtime/explain.cpp).
#include "gemmkit/catalogue.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::detail {

Operation gemm_operation() {
  return {"gemm", "MxNxK (e.g. 70x200x64)", 3,
          [](std::vector<CatalogueEntry>& out) {
            for (Backend b : {Backend::cpu, Backend::cuda})
              for (const KernelEntry* e : gemm_registry().of_backend(b)) out.push_back({"gemm", e, e});
          },
          explain};
}

}  // namespace gemmkit::detail

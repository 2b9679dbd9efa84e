// Placeholder: filled in by the part's own change.
#include "bindings.hpp"

namespace gemmkit::python {

void bind_bench(nb::module_&) {}

}  // namespace gemmkit::python

// Placeholder: filled in by the part's own change.
#include "bindings.hpp"

namespace gemmkit::python {

void bind_primitives(nb::module_&) {}

}  // namespace gemmkit::python

// Placeholder: filled in by the part's own change.
#include "bindings.hpp"

namespace gemmkit::python {

void bind_matmul(nb::module_&) {}

}  // namespace gemmkit::python

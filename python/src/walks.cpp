// Placeholder: filled in by the part's own change.
#include "bindings.hpp"

namespace gemmkit::python {

void bind_walks(nb::module_&) {}

}  // namespace gemmkit::python

// The benchmark engine's device half in a build without CUDA.
#include "core/bench_device.hpp"

namespace gemmkit::detail {

int cublas_version() { return 0; }

}  // namespace gemmkit::detail

// The benchmark engine's device half: timing on a stream of the engine's own, under events.
#include <cublas_v2.h>

#include "core/bench_device.hpp"

namespace gemmkit::detail {

int cublas_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return 0;
  return major * 10000 + minor * 100 + patch;
}

}  // namespace gemmkit::detail

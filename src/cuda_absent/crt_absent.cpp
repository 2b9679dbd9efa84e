// The CRT rebuild in a build made without nvcc: the CUDA path says so.
#include "ops/exact/crt_device.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit::crt_detail {

void cuda_rebuild(Context&, const CrtConstants&, int, const CrtProblem&, Stream) {
  fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit::crt_detail

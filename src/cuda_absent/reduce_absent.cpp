// Reduction in a build made without nvcc: the CUDA entry points say so.
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"

namespace gemmkit {

namespace {
// The device error every command gives without a device (this build has none).
[[noreturn]] void no_cuda() { fail(ErrorCategory::device, no_device_message()); }
}  // namespace

bool reduce_cuda_available() { return false; }

template <class T>
T reduce_cuda_device(const T*, std::size_t, ReduceOp, std::string_view) {
  no_cuda();
}
template <class T>
T reduce_cuda(const T*, std::size_t, ReduceOp, std::string_view) {
  no_cuda();
}
template float reduce_cuda_device<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda_device<double>(const double*, std::size_t, ReduceOp, std::string_view);
template float reduce_cuda<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda<double>(const double*, std::size_t, ReduceOp, std::string_view);

ReduceBenchReport reduce_bench(std::size_t, DType, ReduceOp, int, int, std::uint64_t) {
  no_cuda();
}

}  // namespace gemmkit

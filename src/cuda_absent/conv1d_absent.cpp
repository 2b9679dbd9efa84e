// conv1d in a build made without nvcc: the GPU rungs and the benchmark say so.
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "primitives/conv1d_device.hpp"

namespace gemmkit {

namespace conv1d_detail {
template <class T>
void run_on_device(std::string_view, const T*, std::int64_t, const T*, std::int64_t, T*) {
  fail(ErrorCategory::device, no_device_message());
}
template void run_on_device<float>(std::string_view, const float*, std::int64_t, const float*,
                                   std::int64_t, float*);
template void run_on_device<double>(std::string_view, const double*, std::int64_t, const double*,
                                    std::int64_t, double*);
}  // namespace conv1d_detail

Conv1dBench conv1d_bench(DType, std::int64_t, std::int64_t, int, int, std::uint64_t) {
  fail(ErrorCategory::device, no_device_message());
}

}  // namespace gemmkit

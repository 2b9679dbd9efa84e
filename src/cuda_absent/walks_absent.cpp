// The GPU half of the walk counts in a build made without nvcc: it says so instead of failing.
#include "gemmkit/device.hpp"
#include "ops/walks/modular_int8.hpp"

namespace gemmkit {

namespace walks_detail {
bool gpu_int8_powers_available() { return false; }
Int8PowersReport gpu_int8_powers(Context&, const Graph&, const std::vector<std::uint32_t>&,
                                 const std::vector<PowerStep>&, const std::vector<std::int64_t>&,
                                 const std::vector<std::int64_t>&, int, std::uint64_t*,
                                 const std::function<void(const std::string&)>&, int) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
Int8PowersReport gpu_int8_power_planes(Context&, const Graph&, const std::vector<std::uint32_t>&, int,
                                       std::int8_t*, PlanesIn, const std::function<void(const std::string&)>&,
                                       int) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
Int8PowersReport gpu_counts_from_planes(Context&, const std::vector<std::uint32_t>&, const ResiduePlanes&, int,
                                        std::uint64_t*) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
GemmReferenceTimes gpu_reference_gemm_times(std::int64_t) {
  require_cuda_device();  // throws: no CUDA in this build
  return {};
}
}  // namespace walks_detail

}  // namespace gemmkit

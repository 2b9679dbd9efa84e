// The Ozaki FP64 emulation in a build made without nvcc: it says so instead of
// failing to link.
#include "ops/ozaki/ozaki_ranks.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/ozaki.hpp"

namespace gemmkit {

std::size_t ozaki_gemm_workspace_bytes(const Context&, const GemmProblem&, int) {
  require_cuda_device();  // throws: no CUDA in this build
  return 0;
}
OzakiPlan ozaki_gemm(Context&, const GemmProblem&, Stream, Workspace, int) {
  require_cuda_device();
  return {};
}

OzakiPlan ozaki_gemm(const GemmProblem&, int, Context*) {
  require_cuda_device();
  return {};
}

namespace ozaki_detail {
OzakiPlan ozaki_gemm_over_ranks(Context&, const GemmProblem&, int, OzakiExchange& exchange, Stream, Stream,
                                std::int64_t) {
  exchange.agree([] { require_cuda_device(); });
  return {};
}
}  // namespace ozaki_detail

}  // namespace gemmkit

// The CUDA half of Context in a build without nvcc: a CUDA context cannot be made.
#include "runtime/context_impl.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::detail {

void cuda_context_open(Context::Impl&, int) { require_cuda_device(); }
void cuda_context_close(Context::Impl&) {}
Workspace cuda_workspace_grow(Context::Impl&, Stream, Workspace, std::size_t) {
  require_cuda_device();
  return {};
}
void cuda_workspaces_release(Context::Impl&) {}

}  // namespace gemmkit::detail

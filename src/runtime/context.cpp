#include "gemmkit/context.hpp"

#include "runtime/context_impl.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit {

std::string_view backend_name(Backend backend) {
  return backend == Backend::cpu ? "cpu" : "cuda";
}

Context::Context() : Context(cuda_device_available() ? Backend::cuda : Backend::cpu) {}

Context::Context(Backend backend, int device) : impl_(std::make_unique<Impl>()) {
  impl_->backend = backend;
  if (backend == Backend::cuda) detail::cuda_context_open(*impl_, device);
}

Context::~Context() {
  if (impl_->backend == Backend::cuda) detail::cuda_context_close(*impl_);
}

Backend Context::backend() const { return impl_->backend; }
int Context::device() const { return impl_->device; }
const DeviceInfo& Context::device_info() const { return impl_->info; }
int Context::compute_capability() const {
  return impl_->backend == Backend::cuda ? impl_->info.compute_capability() : 0;
}

Workspace Context::workspace(Stream stream, std::size_t bytes) {
  if (bytes == 0) return {};
  if (impl_->backend != Backend::cuda)
    fail(ErrorCategory::internal, "a device workspace was asked of the CPU context");
  std::lock_guard lock(impl_->mutex);
  Workspace& held = impl_->workspaces[stream];
  if (held.bytes < bytes) {
    held = detail::cuda_workspace_grow(*impl_, stream, held, bytes);
    ++impl_->allocations;
  }
  return held;
}

std::size_t Context::workspace_bytes_held() const {
  std::lock_guard lock(impl_->mutex);
  std::size_t total = 0;
  for (const auto& [stream, w] : impl_->workspaces) total += w.bytes;
  return total;
}

std::uint64_t Context::workspace_allocations() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->allocations;
}

void Context::release_workspaces() {
  if (impl_->backend != Backend::cuda) return;
  std::lock_guard lock(impl_->mutex);
  detail::cuda_workspaces_release(*impl_);
}

int Context::cached(const void* key, const std::function<int()>& compute) const {
  {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->cached.find(key); it != impl_->cached.end()) return it->second;
  }
  // Computed outside the lock (it may launch queries); two threads may both compute it,
  // which is harmless: the value is a fact about the device.
  const int value = compute();
  std::lock_guard lock(impl_->mutex);
  return impl_->cached.emplace(key, value).first->second;
}

}  // namespace gemmkit

// explain's device queries in a build without CUDA: there is never a device to ask.
#include "runtime/explain_device.hpp"

namespace gemmkit::explain_detail {

std::optional<SmLimits> live_limits() { return std::nullopt; }
std::optional<KernelResources> live_resources(const void*) { return std::nullopt; }
std::optional<int> live_blocks_per_sm(const LaunchPlan&) { return std::nullopt; }
std::optional<int> live_active_clusters(const LaunchPlan&) { return std::nullopt; }

}  // namespace gemmkit::explain_detail

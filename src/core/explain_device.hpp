// Internal: what explain asks of a CUDA device (src/cuda/explain_device.cu; without CUDA,
// src/cuda_absent/explain_absent.cpp answers nullopt to everything).
#pragma once

#include <optional>

#include "gemmkit/explain.hpp"

namespace gemmkit::explain_detail {

std::optional<SmLimits> live_limits();  // nullopt: no usable device
std::optional<KernelResources> live_resources(const void* function);
// After opting the kernel into the plan's dynamic shared memory, as its launcher does.
std::optional<int> live_blocks_per_sm(const LaunchPlan& plan);
std::optional<int> live_active_clusters(const LaunchPlan& plan);

}  // namespace gemmkit::explain_detail

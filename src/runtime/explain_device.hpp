// Internal: what explain asks of a CUDA device (src/runtime/cuda/explain_device.cu; without CUDA,
// src/cuda_absent/cuda_absent.cpp answers nullopt to everything).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "gemmkit/explain.hpp"

namespace gemmkit::explain_detail {

std::optional<SmLimits> live_limits();  // nullopt: no usable device
std::optional<KernelResources> live_resources(const void* function);
// After opting the kernel into the plan's dynamic shared memory, as its launcher does.
std::optional<int> live_blocks_per_sm(const LaunchPlan& plan);
std::optional<int> live_active_clusters(const LaunchPlan& plan);

// What explain does for every operation: refuses CPU kernels, references, dtypes the kernel
// does not take and kernels without launch plans (out.kernel, backend and role set)...
void check_entry(Explanation& out, const ExplainRequest& request, const std::vector<DType>& dtypes, bool described,
                 const char* cpu_threading);
// ... then fills out.launches from the plans make_plans gives for the device's (or the
// recorded) figures.
void explain_plans(Explanation& out, const ExplainRequest& request,
                   const std::function<std::vector<LaunchPlan>(const LaunchQueries&)>& make_plans);

}  // namespace gemmkit::explain_detail

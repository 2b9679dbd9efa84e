// Internal: a CUDA registry entry of reduce, spmv or conv1d. Their launchers pick the kernel
// by name (<op>_detail::cuda_workspace_bytes and cuda_run in <op>_device.hpp), so every rung's
// entry is the same but for its name, rung, summary and automatic-choice priority.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "gemmkit/kernel.hpp"

namespace gemmkit::detail {

template <class Problem>
Kernel<Problem> cuda_operation_entry(
    std::string name, int rung, std::string summary, int auto_priority, KernelRole role,
    int min_compute_capability,
    std::size_t (*workspace_bytes)(std::string_view, const Problem&, const Context&),
    void (*run)(std::string_view, const Problem&, const KernelLaunch&),
    std::vector<LaunchPlan> (*plans)(std::string_view, const Problem&, const LaunchQueries&) = nullptr) {
  Kernel<Problem> e;
  e.name = name;
  e.backend = Backend::cuda;
  e.rung = rung;
  e.role = role;
  e.summary = std::move(summary);
  e.dtypes = {DType::f32, DType::f64};
  e.min_compute_capability = min_compute_capability;
  e.auto_priority = auto_priority;
  e.workspace_bytes = [name, workspace_bytes](const Problem& p, const Context& ctx) {
    return workspace_bytes(name, p, ctx);
  };
  e.run = [name, run](const Problem& p, const KernelLaunch& launch) { run(name, p, launch); };
  if (plans && role == KernelRole::ladder)
    e.launches = [name, plans](const Problem& p, const LaunchQueries& q) { return plans(name, p, q); };
  return e;
}

}  // namespace gemmkit::detail

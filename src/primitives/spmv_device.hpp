// The seam between the host code of spmv (src/primitives/sparse.cpp) and its device side:
// src/cuda/spmv.cu in a CUDA build, src/cuda_absent/spmv_absent.cpp without nvcc.
#pragma once

#include <cstddef>
#include <string_view>

#include "gemmkit/sparse.hpp"

namespace gemmkit::spmv_detail {

// Workspace bytes and the launch of GPU kernel `kernel` (a name from spmv_registry()) for a
// validated problem in device memory.
std::size_t cuda_workspace_bytes(std::string_view kernel, const SpmvProblem& problem, const Context& ctx);
void cuda_run(std::string_view kernel, const SpmvProblem& problem, const KernelLaunch& launch);
// The launches cuda_run makes, described (KernelEntry::launches).
std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const SpmvProblem& problem, const LaunchQueries& q);

}  // namespace gemmkit::spmv_detail

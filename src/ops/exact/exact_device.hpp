// What the host half of the exact integer GEMM (exact_plan.cpp) calls of its CUDA part
// (cuda/exact_gemm.cu), through GEMMKIT_CUDA_PART: a build without CUDA compiles neither.
#pragma once

#include <cstddef>

#include "gemmkit/exact.hpp"

namespace gemmkit::exact_detail {

// exact_integer_gemm_workspace_bytes, the device and host exact_integer_gemm, and
// exact_gemm_report (gemmkit/exact.hpp) on a device.
std::size_t workspace_bytes_on_device(const Context& ctx, const GemmProblem& problem);
ExactPlan gemm_on_device(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace,
                         const ExactLimbsOut* limbs_out);
ExactGemmReport report_on_device(const GemmProblem& problem, Stream stream, Workspace workspace);
// The host API's device part, after require_cuda_device().
ExactPlan run_host_on_device(const GemmProblem& host_problem, const ExactLimbsOut* limbs_out, Context* context);

}  // namespace gemmkit::exact_detail

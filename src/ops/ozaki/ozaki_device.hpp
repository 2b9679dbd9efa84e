// What the host half of the Ozaki emulation (ozaki_plan.cpp) calls of its CUDA part
// (cuda/ozaki_gemm.cu and cuda/ozaki_ranks.cu), through GEMMKIT_CUDA_PART: a build without CUDA compiles neither.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gemmkit/ozaki.hpp"
#include "ops/ozaki/ozaki_ranks.hpp"

namespace gemmkit::ozaki_detail {

// ozaki_gemm_workspace_bytes, the device and host ozaki_gemm (gemmkit/ozaki.hpp) and
// ozaki_gemm_over_ranks (ozaki_ranks.hpp) on a device.
std::size_t workspace_bytes_on_device(const Context& ctx, const GemmProblem& problem, int moduli);
OzakiPlan gemm_on_device(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace, int moduli);
// The host API's device part, after require_cuda_device().
OzakiPlan run_host_on_device(const GemmProblem& host_problem, int moduli, Context* context);
OzakiPlan over_ranks_on_device(Context& ctx, const GemmProblem& problem, int moduli, OzakiExchange& exchange,
                               Stream compute, Stream comm, std::int64_t pass_rows);

}  // namespace gemmkit::ozaki_detail

// What the host half of the modular int8 GEMM (modular.cpp) calls of its CUDA part
// (cuda/modular_gemm.cu), through GEMMKIT_CUDA_PART: a build without CUDA compiles neither.
#pragma once

#include <cstddef>

#include "gemmkit/modular.hpp"

namespace gemmkit::modular_detail {

// modular_gemm_workspace_bytes and modular_gemm (gemmkit/modular.hpp) on a device, the
// problem checked and the context a CUDA one.
std::size_t workspace_bytes_on_device(const Context& ctx, const ModularGemmProblem& problem);
void gemm_on_device(Context& ctx, const ModularGemmProblem& problem, Stream stream, Workspace workspace);

}  // namespace gemmkit::modular_detail

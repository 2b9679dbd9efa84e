// What the host half of the modular int8 GEMM (modular.cpp) calls of its CUDA part
// (cuda/modular_gemm.cu), through GEMMKIT_CUDA_PART: a build without CUDA compiles neither.
#pragma once

#include "gemmkit/modular.hpp"

namespace gemmkit::modular_detail {

// Adds cuda_modular_cublas and cuda_modular_fused to the registry.
void register_cuda_kernels(Registry<ModularGemmProblem>& registry);

}  // namespace gemmkit::modular_detail

// What the host half of transpose (transpose.cpp) calls of its CUDA part (cuda/transpose.cu),
// through GEMMKIT_CUDA_PART: a build without CUDA compiles neither the part nor the calls.
#pragma once

#include <vector>

#include "gemmkit/transpose.hpp"

namespace gemmkit::transpose_detail {

// Every dtype of 1, 2, 4 and 8 bytes: all of them, moved as bits.
const std::vector<DType>& transpose_dtypes();

// Adds the CUDA rungs to the registry.
void register_cuda_kernels(Registry<TransposeProblem>& registry);

}  // namespace gemmkit::transpose_detail

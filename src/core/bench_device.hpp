// Internal: the benchmark engine's device half (src/cuda/bench_device.cu; in a build without
// CUDA, src/cuda_absent/bench_absent.cpp, where each throws the no-device error).
#pragma once

#include <cstddef>
#include <vector>

#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"

namespace gemmkit::detail {

// cuBLAS's version (major*10000 + minor*100 + patch), 0 in a build without CUDA.
int cublas_version();

}  // namespace gemmkit::detail

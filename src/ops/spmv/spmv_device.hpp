// What the host half of spmv (spmv.cpp) calls of its CUDA part (cuda/spmv.cu), through
// GEMMKIT_CUDA_PART: a build without CUDA compiles neither the part nor the calls.
#pragma once

#include <vector>

#include "gemmkit/sparse.hpp"

namespace gemmkit::spmv_detail {

// Adds the CUDA rungs and cuSPARSE's references to the registry.
void register_cuda_kernels(Registry<SpmvProblem>& registry);

// spmv_cuda (with the kernel that ran) and spmv_bench_cuda (gemmkit/sparse.hpp) on a device.
template <class T>
SpmvHostResult<T> run_host_on_device(const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o);
template <class T>
BenchReport bench_on_device(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& reference,
                            int warmup, int reps, bool tune);

}  // namespace gemmkit::spmv_detail

// Checked CUDA and cuBLAS calls: every failure becomes a gemmkit::Error naming the call,
// the file and the line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "gemmkit/error.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  const auto category = status == cudaErrorMemoryAllocation ? ErrorCategory::out_of_memory
                                                            : ErrorCategory::device;
  throw Error(category, std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                            ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call,
                                            const char* file, int line) {
  throw Error(ErrorCategory::device, std::string(call) + " failed at " + file + ":" +
                                         std::to_string(line) + ": " +
                                         GEMMKIT_CUBLAS(cublasGetStatusName)(status) + " (" +
                                         GEMMKIT_CUBLAS(cublasGetStatusString)(status) + ")");
}

}  // namespace gemmkit::cuda

#define GEMMKIT_CUDA_CHECK(call)                                                        \
  do {                                                                                  \
    const cudaError_t gemmkit_status_ = (call);                                         \
    if (gemmkit_status_ != cudaSuccess)                                                 \
      ::gemmkit::cuda::throw_cuda_error(gemmkit_status_, #call, __FILE__, __LINE__);    \
  } while (0)

#define GEMMKIT_CUBLAS_CHECK(call)                                                      \
  do {                                                                                  \
    const cublasStatus_t gemmkit_status_ = (call);                                      \
    if (gemmkit_status_ != CUBLAS_STATUS_SUCCESS)                                       \
      ::gemmkit::cuda::throw_cublas_error(gemmkit_status_, #call, __FILE__, __LINE__);  \
  } while (0)

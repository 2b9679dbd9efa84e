// cuBLAS handle (RAII) and the row-major adapter.
#pragma once

#include <cublas_v2.h>

#include "cuda/check.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// The process-wide handle for the current device.
cublasHandle_t cublas_handle();

// C = alpha op(A) op(B) + beta C for a row-major problem in device memory (f32 or f64).
void cublas_gemm(const GemmProblem& device_problem, cublasMath_t math_mode);

// The same for tensor-core dtypes: f16 and bf16 (C in the input type or f32), tf32.
void cublas_gemm_tensor(const GemmProblem& device_problem);

}  // namespace gemmkit::cuda

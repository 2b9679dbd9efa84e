// The row-major adapter of cuBLAS (its handle lives in the Context: runtime/cuda/context.hpp).
#pragma once

#include <cublas_v2.h>

#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

// C = alpha op(A) op(B) + beta C for a row-major problem in device memory (f32 or f64).
void cublas_gemm(const GemmProblem& device_problem, const KernelLaunch& launch,
                 cublasMath_t math_mode);

// The same for tensor-core dtypes: f16 and bf16 (C in the input type or f32), tf32.
void cublas_gemm_tensor(const GemmProblem& device_problem, const KernelLaunch& launch);

// int8 inputs, int32 C and sums (cublasGemmEx 8I -> 32I, CUBLAS_COMPUTE_32I); alpha and beta
// integers (mod 2^32).
void cublas_gemm_i8(const GemmProblem& device_problem, const KernelLaunch& launch);

}  // namespace gemmkit::cuda

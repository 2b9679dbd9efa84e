// cuBLAS behind the row-major interface: the speed references every CUDA kernel is measured
// against. cuBLAS is column-major; a row-major M x N matrix is the column-major N x M
// matrix C^T, and C^T = op(B)^T op(A)^T, so swapping the operands needs no copy. Strided
// batches go through the StridedBatched calls in one launch.
#include "ops/gemm/cuda/cublas.hpp"

#include "ops/gemm/cuda/ladder.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit::cuda {
namespace {
// The C entry (cublas_api.h overloads it for C++ with cudaEmulationStrategy).
using SetEmulationStrategy = cublasStatus_t (*)(cublasHandle_t, cublasEmulationStrategy_t);

// One call's handle, bound to the launch's stream and workspace and set to `math`, and the
// operations on B and A (the operands swapped, as above).
struct Call {
  CublasCall call;
  cublasOperation_t op_b, op_a;
  Call(const GemmProblem& p, const KernelLaunch& l, cublasMath_t math)
      : call(l.context, l.stream, l.workspace),
        op_b(p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N),
        op_a(p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N) {
    GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetMathMode)(call.get(), math));
    // FP64 emulation as measured in docs/exact.md: the EAGER strategy (emulate whenever
    // it may be faster). Only this math mode reads the strategy, so other calls leave it.
    if (math == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS_AS(SetEmulationStrategy, cublasSetEmulationStrategy)(
          call.get(), CUBLAS_EMULATION_STRATEGY_EAGER));
  }
  cublasHandle_t handle() const { return call.get(); }
};
}  // namespace

void cublas_gemm(const GemmProblem& p, const KernelLaunch& l, cublasMath_t math_mode) {
  const Call call(p, l, math_mode);
  cublasHandle_t h = call.handle();
  const cublasOperation_t op_b = call.op_b, op_a = call.op_a;
  // A batch goes in one strided-batched call, B's stride beside B (the operands swapped).
  if (p.dtype == DType::f32) {
    const float alpha = float(p.alpha), beta = float(p.beta);
    const auto* a = static_cast<const float*>(p.a);
    const auto* b = static_cast<const float*>(p.b);
    auto* c = static_cast<float*>(p.c);
    if (p.batch == 1)
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSgemm_64)(h, op_b, op_a, p.n, p.m, p.k, &alpha, b, p.ldb, a,
                                          p.lda, &beta, c, p.ldc));
    else
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSgemmStridedBatched_64)(h, op_b, op_a, p.n, p.m, p.k, &alpha, b,
                                                        p.ldb, p.stride_b, a, p.lda, p.stride_a,
                                                        &beta, c, p.ldc, p.stride_c, p.batch));
  } else if (p.dtype == DType::f64) {
    const auto* a = static_cast<const double*>(p.a);
    const auto* b = static_cast<const double*>(p.b);
    auto* c = static_cast<double*>(p.c);
    if (p.batch == 1)
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasDgemm_64)(h, op_b, op_a, p.n, p.m, p.k, &p.alpha, b, p.ldb, a,
                                          p.lda, &p.beta, c, p.ldc));
    else
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasDgemmStridedBatched_64)(h, op_b, op_a, p.n, p.m, p.k, &p.alpha, b,
                                                        p.ldb, p.stride_b, a, p.lda, p.stride_a,
                                                        &p.beta, c, p.ldc, p.stride_c, p.batch));
  } else {
    fail(ErrorCategory::internal, "cublas_gemm: unsupported dtype");
  }
}

// f16, bf16 (C in the input type or f32) and tf32 (f32 throughout) on tensor cores, summed
// in FP32.
void cublas_gemm_tensor(const GemmProblem& p, const KernelLaunch& l) {
  const Call call(p, l, CUBLAS_DEFAULT_MATH);
  cublasHandle_t h = call.handle();
  const cublasOperation_t op_b = call.op_b, op_a = call.op_a;
  cudaDataType in = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (p.dtype == DType::bf16) in = CUDA_R_16BF;
  else if (p.dtype == DType::f16) in = CUDA_R_16F;
  else if (p.dtype == DType::tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  else fail(ErrorCategory::internal, "cublas_gemm_tensor: unsupported dtype");
  const cudaDataType out = p.c_dtype() == DType::f32 || p.dtype == DType::tf32 ? CUDA_R_32F : in;
  const float alpha = float(p.alpha), beta = float(p.beta);
  if (p.batch == 1)
    GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmEx_64)(h, op_b, op_a, p.n, p.m, p.k, &alpha, p.b, in, p.ldb,
                                         p.a, in, p.lda, &beta, p.c, out, p.ldc, compute,
                                         CUBLAS_GEMM_DEFAULT));
  else
    GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmStridedBatchedEx_64)(
        h, op_b, op_a, p.n, p.m, p.k, &alpha, p.b, in, p.ldb, p.stride_b, p.a, in, p.lda,
        p.stride_a, &beta, p.c, out, p.ldc, p.stride_c, p.batch, compute, CUBLAS_GEMM_DEFAULT));
}

void cublas_gemm_i8(const GemmProblem& p, const KernelLaunch& l) {
  const Call call(p, l, CUBLAS_DEFAULT_MATH);
  cublasHandle_t h = call.handle();
  const cublasOperation_t op_b = call.op_b, op_a = call.op_a;
  const int alpha = int(std::int64_t(p.alpha)), beta = int(std::int64_t(p.beta));
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmEx_64)(h, op_b, op_a, p.n, p.m, p.k, &alpha, p.b, CUDA_R_8I, p.ldb, p.a,
                                       CUDA_R_8I, p.lda, &beta, p.c, CUDA_R_32I, p.ldc, CUBLAS_COMPUTE_32I,
                                       CUBLAS_GEMM_DEFAULT));
}

namespace {
// cublasGemmEx refuses int8 operands (CUBLAS_STATUS_NOT_SUPPORTED, seen on the H200 with
// CUDA 13 for 1x1x1) unless A and B start on 4 bytes with leading dimensions that are
// multiples of 4, as its documentation of the CUDA_R_8I path has long said.
std::optional<std::string> cublas_i8_precondition(const GemmProblem& p) {
  const auto on4 = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 4 == 0; };
  if (p.lda % 4 != 0 || p.ldb % 4 != 0 || !on4(p.a) || !on4(p.b))
    return "cuBLAS's int8 GEMM needs A and B on 4 bytes with leading dimensions that are multiples of 4";
  return std::nullopt;
}

// Each call lends cuBLAS the workspace it asks for, from the call's stream's pool entry.
std::size_t cublas_workspace(const GemmProblem&, const Context& ctx) {
  return cublas_workspace_bytes(ctx);
}
}  // namespace

void register_cublas_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_cublas", .backend = Backend::cuda, .role = KernelRole::reference,
                 .summary = "cuBLAS SGEMM/DGEMM, pedantic FP32 (no TF32): the SIMT speed reference",
                 .dtypes = {DType::f32, DType::f64}, .min_compute_capability = 50, .auto_priority = 100},
                {.workspace_bytes = cublas_workspace,
                 .run = [](const GemmProblem& p, const KernelLaunch& l) { cublas_gemm(p, l, CUBLAS_PEDANTIC_MATH); }},
                {.batched = true}});
  // cuBLAS's own FP64 emulation on int8 tensor cores (cuBLAS 13.1 and later on sm_90+;
  // earlier, or elsewhere, cuBLAS runs native DGEMM instead): the reference for the Ozaki
  // emulation, cuda_ozaki_f64. auto never chooses it.
  registry.add({{.name = "cuda_cublas_f64_emulated", .backend = Backend::cuda, .role = KernelRole::reference,
                 .summary = "cuBLAS DGEMM with CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH (EAGER): cuBLAS's own FP64 emulation",
                 .dtypes = {DType::f64}, .min_compute_capability = 50},
                {.workspace_bytes = cublas_workspace, .run = [](const GemmProblem& p, const KernelLaunch& l) {
                   cublas_gemm(p, l, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH);
                 }},
                {.batched = true}});
  // TF32 tensor cores on FP32 data: the speed a user gets from cuBLAS by allowing TF32.
  // auto never chooses it for f32 (it is less accurate than the FP32 contract); for a tf32
  // GEMM it is the last choice, for the shapes no tf32 rung of ours accepts.
  registry.add({{.name = "cuda_cublas_tf32", .backend = Backend::cuda, .role = KernelRole::reference,
                 .summary = "cuBLAS SGEMM with TF32 tensor cores allowed (10-bit mantissa inputs)",
                 .dtypes = {DType::f32, DType::tf32}, .min_compute_capability = 80, .auto_priority = 1},
                {.workspace_bytes = cublas_workspace, .run = [](const GemmProblem& p, const KernelLaunch& l) {
                   if (p.dtype == DType::tf32) cublas_gemm_tensor(p, l);
                   else cublas_gemm(p, l, CUBLAS_TF32_TENSOR_OP_MATH);
                 }},
                {.accuracy = DType::tf32, .batched = true}});
  // Half-precision references: the speed the tensor-core rungs are measured against.
  for (const DType dtype : {DType::bf16, DType::f16})
    registry.add({{.name = "cuda_cublas_" + std::string(dtype_name(dtype)), .backend = Backend::cuda,
                   .role = KernelRole::reference,
                   .summary = "cuBLAS GemmEx, " + std::string(dtype_name(dtype)) + " inputs on tensor cores, FP32 accumulation",
                   .dtypes = {dtype}, .min_compute_capability = 80, .auto_priority = 100},
                  {.workspace_bytes = cublas_workspace, .run = cublas_gemm_tensor},
                  {.half_inputs_f32_output = true, .batched = true}});
  // INT8 tensor cores with int32 sums: the reference of rung 24 and of the modular GEMM.
  registry.add({{.name = "cuda_cublas_i8", .backend = Backend::cuda, .role = KernelRole::reference,
                 .summary = "cuBLAS GemmEx, int8 inputs on tensor cores, int32 sums and C", .dtypes = {DType::i8},
                 .min_compute_capability = 75, .auto_priority = 100},
                {.precondition = cublas_i8_precondition, .workspace_bytes = cublas_workspace, .run = cublas_gemm_i8}});
}

}  // namespace gemmkit::cuda

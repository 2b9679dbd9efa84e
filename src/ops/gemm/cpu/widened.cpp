// cpu_widened: f16, bf16 and tf32 on the CPU, computed as the tensor cores compute them.
// Their values are exact in f32, so the operands are widened to f32 (tf32 first cut to its
// 10 mantissa bits, as the wgmma path reads it) and multiplied by OpenBLAS's SGEMM: exact
// products summed in FP32. A C of f16/bf16 is rounded once at the end. The widened copies
// cost 4 bytes per element of A, B and a half-precision C.
#include <cblas.h>

#include <cstring>
#include <vector>

#include "runtime/lazy_library.hpp"
#include "ops/gemm/cpu/cpu_kernels.hpp"
#include "gemmkit/half.hpp"

namespace gemmkit::cpu {
namespace {

// An f32 as tf32: the 13 low mantissa bits dropped, as the Hopper wgmma path drops them
// (truncation, see verify.cpp's tf32 tolerance); infinities and NaN pass through.
float to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits &= ~0x1fffu;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// The (rows, cols) stored matrix at `data` (leading dimension ld) of `dtype`, as a dense f32
// copy with leading dimension cols.
std::vector<float> widened(DType dtype, const void* data, std::int64_t rows, std::int64_t cols,
                           std::int64_t ld) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t at = i * ld + j;
      float x = 0;
      switch (dtype) {
        case DType::f16: x = static_cast<float>(static_cast<const Half*>(data)[at]); break;
        case DType::bf16: x = static_cast<float>(static_cast<const BFloat16*>(data)[at]); break;
        case DType::tf32: x = to_tf32(static_cast<const float*>(data)[at]); break;
        default: x = static_cast<const float*>(data)[at]; break;  // f32
      }
      out[static_cast<std::size_t>(i * cols + j)] = x;
    }
  return out;
}

}  // namespace

namespace {

void widened_one(const GemmProblem& p) {
  const std::vector<float> a = widened(p.dtype, p.a, p.a_rows(), p.a_cols(), p.lda);
  const std::vector<float> b = widened(p.dtype, p.b, p.b_rows(), p.b_cols(), p.ldb);
  const DType c_dtype = p.c_dtype();
  const bool c_is_f32 = c_dtype == DType::f32 || c_dtype == DType::tf32;
  // SGEMM straight into an f32 C; a half C goes through an f32 copy (read only if beta != 0).
  std::vector<float> c_wide;
  if (!c_is_f32)
    c_wide = p.beta != 0 ? widened(c_dtype, p.c, p.m, p.n, p.ldc)
                         : std::vector<float>(static_cast<std::size_t>(p.m * p.n));
  float* c = c_is_f32 ? static_cast<float*>(p.c) : c_wide.data();
  const auto ldc = static_cast<int>(c_is_f32 ? p.ldc : p.n);
  const auto m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  GEMMKIT_OPENBLAS(cblas_sgemm)(CblasRowMajor, p.trans_a ? CblasTrans : CblasNoTrans,
              p.trans_b ? CblasTrans : CblasNoTrans, m, n, k, static_cast<float>(p.alpha),
              a.data(), static_cast<int>(std::max<std::int64_t>(p.a_cols(), 1)), b.data(),
              static_cast<int>(std::max<std::int64_t>(p.b_cols(), 1)), static_cast<float>(p.beta),
              c, ldc);
  if (c_is_f32) return;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      const float x = c_wide[static_cast<std::size_t>(i * p.n + j)];
      if (c_dtype == DType::f16) static_cast<Half*>(p.c)[i * p.ldc + j] = Half(x);
      else static_cast<BFloat16*>(p.c)[i * p.ldc + j] = BFloat16(x);
    }
}

}  // namespace

// Side by side, each matrix's widening loops run on its own thread (no nested parallelism).
void widened_gemm(const GemmProblem& p) {
  run_batch(p, openblas_runs_side_by_side(p), widened_one);
}

// The tensor-core dtypes on the CPU: what the GPU computes (exact products, FP32 sums).
KernelEntry widened_entry() {
  KernelEntry e = cpu_entry("cpu_widened", 0,
                            "f16/bf16/tf32 widened to f32 (tf32 cut as the GPU reads it) and multiplied by "
                            "OpenBLAS SGEMM; C rounded once",
                            {DType::f16, DType::bf16, DType::tf32}, 40, widened_gemm);
  e.role = KernelRole::reference;
  e.half_inputs_f32_output = true;
  e.batched = true;
  e.precondition = openblas_rejects;
  return e;
}

}  // namespace gemmkit::cpu

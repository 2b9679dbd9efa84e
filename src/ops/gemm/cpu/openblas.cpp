// cpu_openblas (reference, rung 0): OpenBLAS's SGEMM/DGEMM, the speed baseline for the CPU
// ladder. cblas speaks row-major with leading dimensions and transposes just as GemmProblem
// does, so everything is passed straight through without a copy.
#include <cblas.h>

#include <climits>

#include "runtime/lazy_library.hpp"
#include "ops/gemm/cpu/cpu_kernels.hpp"
#include "gemmkit/openblas.hpp"

namespace gemmkit::cpu {

std::optional<std::string> openblas_rejects(const GemmProblem& p) {
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"m", p.m}, {"n", p.n}, {"k", p.k}, {"lda", p.lda}, {"ldb", p.ldb}, {"ldc", p.ldc}};
  for (const auto& [name, value] : sizes)
    if (value > INT_MAX)
      return std::string("cblas takes int sizes: ") + name + " = " + std::to_string(value) +
             " exceeds " + std::to_string(INT_MAX);
  return std::nullopt;
}

namespace {

void openblas_one(const GemmProblem& p) {
  const CBLAS_TRANSPOSE ta = p.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = p.trans_b ? CblasTrans : CblasNoTrans;
  const auto m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const auto lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb),
             ldc = static_cast<int>(p.ldc);
  switch (p.dtype) {
    case DType::f32:
      GEMMKIT_OPENBLAS(cblas_sgemm)(CblasRowMajor, ta, tb, m, n, k, static_cast<float>(p.alpha),
                  static_cast<const float*>(p.a), lda, static_cast<const float*>(p.b), ldb,
                  static_cast<float>(p.beta), static_cast<float*>(p.c), ldc);
      return;
    case DType::f64:
      GEMMKIT_OPENBLAS(cblas_dgemm)(CblasRowMajor, ta, tb, m, n, k, p.alpha, static_cast<const double*>(p.a), lda,
                  static_cast<const double*>(p.b), ldb, p.beta, static_cast<double*>(p.c), ldc);
      return;
    default:
      fail(ErrorCategory::internal,
           "cpu_openblas was given a " + std::string(dtype_name(p.dtype)) + " problem");
  }
}

}  // namespace

bool openblas_runs_side_by_side(const GemmProblem& p) {
  // OpenBLAS's OpenMP build runs a call made inside a parallel region on the calling thread
  // alone; its pthreads build would start its own threads under each of ours.
  return GEMMKIT_OPENBLAS(openblas_get_parallel)() == 2 && batch_side_by_side(p);
}

void openblas_gemm(const GemmProblem& p) {
  run_batch(p, openblas_runs_side_by_side(p), openblas_one);
}

// auto_priority: OpenBLAS for floats, cpu_blocked for integers (OpenBLAS has none).
KernelEntry openblas_entry() {
  KernelEntry e = cpu_entry("cpu_openblas", 0, "OpenBLAS sgemm/dgemm, row-major, transposes passed through",
                            kCpuFloats, 40, openblas_gemm);
  e.role = KernelRole::reference;
  e.batched = true;  // strided batches: see batch.cpp
  e.precondition = openblas_rejects;
  return e;
}

}  // namespace gemmkit::cpu

namespace gemmkit {

OpenBlasInfo openblas_info() {
  OpenBlasInfo info;
  info.config = GEMMKIT_OPENBLAS(openblas_get_config)();
  switch (GEMMKIT_OPENBLAS(openblas_get_parallel)()) {
    case 0: info.threading = "serial"; break;
    case 1: info.threading = "pthreads"; break;
    case 2: info.threading = "openmp"; break;
    default: info.threading = "unknown"; break;
  }
  info.threads = GEMMKIT_OPENBLAS(openblas_get_num_threads)();
  info.openmp_build_linked = GEMMKIT_OPENBLAS_OPENMP;
  return info;
}

}  // namespace gemmkit

// The stand-alone benchmarks' CUDA plumbing (gemmkit_exact_bench, gemmkit_modular_bench,
// gemmkit_ozaki_bench): a failed CUDA or cuBLAS call ends the run with one line on stderr
// (the program, what failed, why) and exit status 1; timing by CUDA events.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <errno.h>  // program_invocation_short_name (glibc)

#include <cstdio>
#include <cstdlib>

namespace gemmkit::bench {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, cudaGetErrorString(status));
    std::exit(1);
  }
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: %s: cuBLAS status %d\n", program_invocation_short_name, what, int(status));
    std::exit(1);
  }
}

// Milliseconds between events recorded on `stream` before and after f() queues its work.
template <class F>
double time_ms(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, F&& f) {
  check(cudaEventRecord(start, stream), "record");
  f();
  check(cudaEventRecord(stop, stream), "record");
  check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  return ms;
}

}  // namespace gemmkit::bench

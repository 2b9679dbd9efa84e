// The OpenBLAS behind cpu_openblas, as loaded at run time: what a CPU benchmark should report,
// since its threading runtime decides how it and the OpenMP kernels share the cores.
#pragma once

#include <string>

namespace gemmkit {

struct OpenBlasInfo {
  std::string config;     // openblas_get_config(), e.g. "OpenBLAS 0.3.21 ... USE_OPENMP Haswell ..."
  std::string threading;  // "openmp", "pthreads" or "serial" (openblas_get_parallel())
  int threads = 0;        // openblas_get_num_threads()
  // Configure linked Debian's OpenMP build (libopenblas-openmp-dev) by its path; without it
  // another OpenBLAS was linked and threading says which kind it is.
  bool openmp_build_linked = false;
};
OpenBlasInfo openblas_info();

}  // namespace gemmkit

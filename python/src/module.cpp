// gemmkit._gemmkit: the library's API for the Python package. See bindings.hpp.
#include "bindings.hpp"

NB_MODULE(_gemmkit, m) {
  m.doc() =
      "gemmkit's C++ library for Python: GEMM on host and device pointers, exact walk counts, "
      "reduce, spmv, conv1d, the benchmark engine and the kernel catalogue. Use the gemmkit "
      "package, which takes numpy arrays, DLPack and CUDA-array-interface tensors.";
  using namespace gemmkit::python;
  bind_errors(m);
  bind_context(m);
  bind_info(m);
  bind_matmul(m);
  bind_walks(m);
  bind_primitives(m);
  bind_bench(m);
}

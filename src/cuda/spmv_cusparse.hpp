// cuSPARSE cusparseSpMV on device CSR arrays: the reference entry of the SpMV ladder. The
// handle, descriptors, work buffer and preprocess are made in the constructor, so run()
// is the multiply alone (what the benchmark times).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gemmkit::cuda {

class CusparseSpmv {
 public:
  // offsets: rows + 1 entries, int32 or int64 (offsets_64bit); cols: int32 or int64 alike
  // (cuSPARSE wants one index type for both); values, x, y: float or double (f64).
  CusparseSpmv(std::int64_t rows, std::int64_t cols, std::int64_t nnz, const void* offsets,
               const void* col_indices, bool indices_64bit, const void* values, bool f64,
               const void* x, void* y, bool alg2);
  ~CusparseSpmv();
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;
  void run();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace gemmkit::cuda

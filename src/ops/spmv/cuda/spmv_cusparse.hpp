// cuSPARSE's cusparseSpMV on device CSR arrays: the reference entries of the SpMV ladder.
// CusparseSpmv holds the descriptors of one product (host objects, cheap to make) and no
// device memory: the work buffer is the caller's (a call's workspace), the handle the
// context's (cuda::CusparseCall, bound to the call's stream).
#pragma once

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>


namespace gemmkit::cuda {

class CusparseSpmv {
 public:
  // offsets: rows + 1 entries, int32 or int64 (indices_64bit); col_indices: int32 or int64
  // alike (cuSPARSE wants one index type for both); values, x, y: float or double (f64).
  CusparseSpmv(std::int64_t rows, std::int64_t cols, std::int64_t nnz, const void* offsets,
               const void* col_indices, bool indices_64bit, const void* values, bool f64,
               const void* x, void* y, bool alg2);
  ~CusparseSpmv();
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;

  // The work buffer cusparseSpMV needs, in bytes.
  std::size_t buffer_bytes(cusparseHandle_t handle) const;
  // Optional analysis of the matrix into `buffer` (the benchmark does it outside the timing).
  void preprocess(cusparseHandle_t handle, void* buffer) const;
  // y = A x on the handle's stream.
  void run(cusparseHandle_t handle, void* buffer) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace gemmkit::cuda

#include "cuda/spmv_cusparse.hpp"

#include <cusparse.h>

#include <string>

#include "cuda/check.hpp"

#define GEMMKIT_CUSPARSE_CHECK(call)                                                        \
  do {                                                                                      \
    const cusparseStatus_t gemmkit_status_ = (call);                                        \
    if (gemmkit_status_ != CUSPARSE_STATUS_SUCCESS)                                         \
      throw ::gemmkit::Error(::gemmkit::ErrorCategory::device,                              \
                             std::string(#call) + " failed at " + __FILE__ + ":" +          \
                                 std::to_string(__LINE__) + ": " +                          \
                                 cusparseGetErrorString(gemmkit_status_));                  \
  } while (0)

namespace gemmkit::cuda {

struct CusparseSpmv::Impl {
  cusparseHandle_t handle = nullptr;
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  void* buffer = nullptr;
  cudaDataType type = CUDA_R_32F;
  cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
  float one_f = 1, zero_f = 0;
  double one_d = 1, zero_d = 0;
  const void* one() const { return type == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return type == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f; }
  ~Impl() {
    if (buffer) cudaFree(buffer);
    if (y) cusparseDestroyDnVec(y);
    if (x) cusparseDestroyDnVec(x);
    if (a) cusparseDestroySpMat(a);
    if (handle) cusparseDestroy(handle);
  }
};

CusparseSpmv::CusparseSpmv(std::int64_t rows, std::int64_t cols, std::int64_t nnz, const void* offsets,
                           const void* col_indices, bool indices_64bit, const void* values, bool f64,
                           const void* x, void* y, bool alg2)
    : impl_(new Impl) {
  try {
    Impl& s = *impl_;
    s.type = f64 ? CUDA_R_64F : CUDA_R_32F;
    s.alg = alg2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_ALG_DEFAULT;
    const cusparseIndexType_t index = indices_64bit ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    GEMMKIT_CUSPARSE_CHECK(cusparseCreate(&s.handle));
    GEMMKIT_CUSPARSE_CHECK(cusparseCreateConstCsr(&s.a, rows, cols, nnz, offsets, col_indices, values,
                                                  index, index, CUSPARSE_INDEX_BASE_ZERO, s.type));
    GEMMKIT_CUSPARSE_CHECK(cusparseCreateConstDnVec(&s.x, cols, x, s.type));
    GEMMKIT_CUSPARSE_CHECK(cusparseCreateDnVec(&s.y, rows, y, s.type));
    std::size_t bytes = 0;
    GEMMKIT_CUSPARSE_CHECK(cusparseSpMV_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a,
                                                   s.x, s.zero(), s.y, s.type, s.alg, &bytes));
    if (bytes) GEMMKIT_CUDA_CHECK(cudaMalloc(&s.buffer, bytes));
    GEMMKIT_CUSPARSE_CHECK(cusparseSpMV_preprocess(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a,
                                                   s.x, s.zero(), s.y, s.type, s.alg, s.buffer));
  } catch (...) {
    delete impl_;
    throw;
  }
}

CusparseSpmv::~CusparseSpmv() { delete impl_; }

void CusparseSpmv::run() {
  Impl& s = *impl_;
  GEMMKIT_CUSPARSE_CHECK(cusparseSpMV(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a, s.x,
                                      s.zero(), s.y, s.type, s.alg, s.buffer));
}

}  // namespace gemmkit::cuda

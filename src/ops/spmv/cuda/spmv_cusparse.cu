#include "ops/spmv/cuda/spmv_cusparse.hpp"

#include <string>

#include "runtime/cuda/check.hpp"
#include "runtime/lazy_library.hpp"

#define GEMMKIT_CUSPARSE_CHECK(call)                                                        \
  do {                                                                                      \
    const cusparseStatus_t gemmkit_status_ = (call);                                        \
    if (gemmkit_status_ != CUSPARSE_STATUS_SUCCESS)                                         \
      throw ::gemmkit::Error(::gemmkit::ErrorCategory::device,                              \
                             std::string(#call) + " failed at " + __FILE__ + ":" +          \
                                 std::to_string(__LINE__) + ": " +                          \
                                 GEMMKIT_CUSPARSE(cusparseGetErrorString)(gemmkit_status_));                  \
  } while (0)

namespace gemmkit::cuda {

struct CusparseSpmv::Impl {
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  cudaDataType type = CUDA_R_32F;
  cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT;
  float one_f = 1, zero_f = 0;
  double one_d = 1, zero_d = 0;
  const void* one() const { return type == CUDA_R_64F ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return type == CUDA_R_64F ? static_cast<const void*>(&zero_d) : &zero_f; }
  ~Impl() {
    if (y) GEMMKIT_CUSPARSE(cusparseDestroyDnVec)(y);
    if (x) GEMMKIT_CUSPARSE(cusparseDestroyDnVec)(x);
    if (a) GEMMKIT_CUSPARSE(cusparseDestroySpMat)(a);
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
    GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseCreateConstCsr)(&s.a, rows, cols, nnz, offsets, col_indices, values,
                                                  index, index, CUSPARSE_INDEX_BASE_ZERO, s.type));
    GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseCreateConstDnVec)(&s.x, cols, x, s.type));
    GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseCreateDnVec)(&s.y, rows, y, s.type));
  } catch (...) {
    delete impl_;
    throw;
  }
}

CusparseSpmv::~CusparseSpmv() { delete impl_; }

std::size_t CusparseSpmv::buffer_bytes(cusparseHandle_t handle) const {
  const Impl& s = *impl_;
  std::size_t bytes = 0;
  GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseSpMV_bufferSize)(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a, s.x,
                                                 s.zero(), s.y, s.type, s.alg, &bytes));
  return bytes;
}

void CusparseSpmv::preprocess(cusparseHandle_t handle, void* buffer) const {
  const Impl& s = *impl_;
  GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseSpMV_preprocess)(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a, s.x,
                                                 s.zero(), s.y, s.type, s.alg, buffer));
}

void CusparseSpmv::run(cusparseHandle_t handle, void* buffer) const {
  const Impl& s = *impl_;
  GEMMKIT_CUSPARSE_CHECK(GEMMKIT_CUSPARSE(cusparseSpMV)(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, s.one(), s.a, s.x, s.zero(),
                                      s.y, s.type, s.alg, buffer));
}

}  // namespace gemmkit::cuda

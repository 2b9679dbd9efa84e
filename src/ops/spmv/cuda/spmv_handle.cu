// The context's cuSPARSE handle. Here, in gemmkit_primitives (the part that links cuSPARSE),
// not in src/runtime/cuda/context.cu: gemmkit_core, GEMM only, must not need cuSPARSE. The handle
// comes with the function that frees it, which the context calls when it closes.
#include "runtime/cuda/context.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit::cuda {

CusparseCall::CusparseCall(Context& ctx, Stream stream) : lock_(ctx.impl().cusparse_mutex) {
  Context::Impl& impl = ctx.impl();
  if (!impl.cusparse) {
    cusparseHandle_t h = nullptr;
    if (GEMMKIT_CUSPARSE(cusparseCreate)(&h) != CUSPARSE_STATUS_SUCCESS)
      fail(ErrorCategory::device, "cusparseCreate failed");
    impl.cusparse = h;
    impl.cusparse_destroy = [](void* handle) { GEMMKIT_CUSPARSE(cusparseDestroy)(static_cast<cusparseHandle_t>(handle)); };
  }
  handle_ = static_cast<cusparseHandle_t>(impl.cusparse);
  if (GEMMKIT_CUSPARSE(cusparseSetStream)(handle_, stream) != CUSPARSE_STATUS_SUCCESS)
    fail(ErrorCategory::device, "cusparseSetStream failed");
}

}  // namespace gemmkit::cuda

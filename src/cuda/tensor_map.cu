// cuTensorMapEncodeTiled lives in the driver library; it is looked up through the runtime
// so the build links no libcuda and CPU-only machines can still load the binary.
#include "cuda/tensor_map.hpp"

#include <cuda_runtime.h>

#include <string>

#include "cuda/check.hpp"

namespace gemmkit::cuda {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static const EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GEMMKIT_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                        cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      fail(ErrorCategory::device, "the CUDA driver has no cuTensorMapEncodeTiled (needs CUDA 12+)");
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  return encode;
}

}  // namespace

CUtensorMap make_tile_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                          std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_rows,
                          int box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost first
  const cuuint64_t strides[1] = {cuuint64_t(ld) * cuuint64_t(elem_bytes)};  // bytes, dim 1
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status =
      encode_tiled()(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    fail(ErrorCategory::device, "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(status)) +
                                    ") for a " + std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix, leading dimension " + std::to_string(ld));
  return map;
}

}  // namespace gemmkit::cuda

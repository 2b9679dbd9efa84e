// cuTensorMapEncodeTiled lives in the driver library; it is looked up through the runtime
// so the build links no libcuda and CPU-only machines can still load the binary.
#include "launch/tensor_map.hpp"

#include <cuda_runtime.h>

#include <string>

#include "runtime/cuda/check.hpp"

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

// A map of rank 2 (one matrix) or 3 (a batch of them, the batch outermost).
CUtensorMap encode(int rank, const void* base, CUtensorMapDataType type, int elem_bytes,
                   std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                   std::int64_t stride, int box_rows, int box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(batch)};  // innermost first
  const cuuint64_t strides[2] = {cuuint64_t(ld) * cuuint64_t(elem_bytes),
                                 cuuint64_t(stride) * cuuint64_t(elem_bytes)};  // bytes, dims 1, 2
  const cuuint32_t box[3] = {cuuint32_t(box_cols), cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const int box_row_bytes = box_cols * elem_bytes;  // the swizzle spans one box row
  const CUtensorMapSwizzle swizzle = box_row_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : box_row_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                           : CU_TENSOR_MAP_SWIZZLE_32B;
  const CUresult status = encode_tiled()(
      &map, type, cuuint32_t(rank), const_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    fail(ErrorCategory::device,
         "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(status)) + ") for a " +
             std::to_string(rows) + " x " + std::to_string(cols) + " matrix, leading dimension " +
             std::to_string(ld) +
             (rank == 3 ? ", batch of " + std::to_string(batch) + " at a stride of " +
                              std::to_string(stride)
                        : std::string()));
  return map;
}

}  // namespace

CUtensorMap make_tile_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                          std::int64_t rows, std::int64_t cols, std::int64_t ld, int box_rows,
                          int box_cols) {
  return encode(2, base, type, elem_bytes, rows, cols, ld, 1, 0, box_rows, box_cols);
}

CUtensorMap make_batched_tile_map(const void* base, CUtensorMapDataType type, int elem_bytes,
                                  std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                  std::int64_t batch, std::int64_t stride, int box_rows,
                                  int box_cols) {
  return encode(3, base, type, elem_bytes, rows, cols, ld, batch, stride, box_rows, box_cols);
}

}  // namespace gemmkit::cuda

// Distributed matrices in device memory: allocation, and copies of a rank's blocks between
// host and device (scatter and gather go through host memory on their way to rank 0).
#include "runtime/cuda/device_buffer.hpp"
#include "distributed/nccl_common.hpp"

namespace gemmkit::dist {
namespace {

void check_device_dtype(DType dtype) {
  switch (dtype) {
    case DType::f64: case DType::f32: case DType::i32: case DType::i64:
    case DType::f16: case DType::bf16: case DType::i8: return;
    default: break;
  }
  fail(ErrorCategory::usage, "distributed matrices in device memory hold f64, f32, i32, i64, f16, bf16 or "
                             "i8, not " + std::string(dtype_name(dtype)));
}

}  // namespace

DistMatrix::DistMatrix(const GpuGrid& gpus, DType dtype, std::int64_t rows, std::int64_t cols,
                       std::int64_t mb, std::int64_t nb)
    : grid_(&gpus.grid()), dtype_(dtype), dist_{rows, cols, mb, nb, gpus.grid().shape()}, gpus_(&gpus) {
  collective(grid_->comm(), [&] {
    check_blocks(rows, cols, mb, nb);
    check_device_dtype(dtype);
    const std::int64_t lr = local_rows(), lc = local_cols();
    const auto size = std::int64_t(dtype_size(dtype));
    const std::int64_t per_16 = 16 / size;  // rows start on 16 bytes
    device_ld_ = std::max<std::int64_t>(per_16, (lc + per_16 - 1) / per_16 * per_16);
    const std::size_t bytes = std::size_t(lr * device_ld_ * size);
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    void* data = nullptr;
    if (bytes > 0) {
      const cudaError_t status = cudaMalloc(&data, bytes);
      if (status == cudaErrorMemoryAllocation) cuda::throw_device_oom(bytes, std::size_t(size));
      GEMMKIT_CUDA_CHECK(status);
    }
    device_ = std::shared_ptr<void>(data, [](void* p) {
      if (p) cudaFree(p);
    });
    if (bytes > 0) GEMMKIT_CUDA_CHECK(cudaMemset(data, 0, bytes));
  });
}

void upload_local(const DistMatrix& m, const AnyMatrix& host) {
  const std::size_t size = dtype_size(m.dtype());
  if (m.local_rows() == 0 || m.local_cols() == 0) return;
  GEMMKIT_CUDA_CHECK(cudaSetDevice(m.gpus()->device()));
  std::visit(
      [&](const auto& h) {
        GEMMKIT_CUDA_CHECK(cudaMemcpy2D(m.device_data(), std::size_t(m.device_ld()) * size, h.data(),
                                        std::size_t(h.ld()) * size, std::size_t(m.local_cols()) * size,
                                        std::size_t(m.local_rows()), cudaMemcpyHostToDevice));
      },
      host);
}

AnyMatrix download_local(const DistMatrix& m) {
  const std::size_t size = dtype_size(m.dtype());
  AnyMatrix host = zero_matrix(m.dtype(), m.local_rows(), m.local_cols());
  if (m.local_rows() == 0 || m.local_cols() == 0) return host;
  GEMMKIT_CUDA_CHECK(cudaSetDevice(m.gpus()->device()));
  std::visit(
      [&](auto& h) {
        GEMMKIT_CUDA_CHECK(cudaMemcpy2D(h.data(), std::size_t(h.ld()) * size, m.device_data(),
                                        std::size_t(m.device_ld()) * size, std::size_t(m.local_cols()) * size,
                                        std::size_t(m.local_rows()), cudaMemcpyDeviceToHost));
      },
      host);
  return host;
}

}  // namespace gemmkit::dist

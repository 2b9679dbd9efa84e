// DeviceBuffer<T>: RAII device memory. Every call is checked; an allocation failure says
// how much was asked, how much is free, and the largest square matrix that would fit.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "runtime/cuda/check.hpp"

namespace gemmkit::cuda {

[[noreturn]] inline void throw_device_oom(std::size_t bytes, std::size_t element_size) {
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaGetLastError();  // clear the allocation error so the query below is not refused
  cudaMemGetInfo(&free_bytes, &total_bytes);
  // Three N x N operands (A, B, C) of this element size fit when 3 N^2 size <= free.
  const auto largest_n = static_cast<long long>(std::sqrt(double(free_bytes) / (3.0 * element_size)));
  throw Error(ErrorCategory::out_of_memory,
              "device allocation of " + std::to_string(bytes) + " bytes failed: " +
                  std::to_string(free_bytes) + " of " + std::to_string(total_bytes) +
                  " bytes free; the largest square GEMM that fits is about N = " +
                  std::to_string(largest_n));
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T));
    if (status == cudaErrorMemoryAllocation) throw_device_oom(count * sizeof(T), sizeof(T));
    GEMMKIT_CUDA_CHECK(status);
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // never throws from a destructor
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void copy_from_host(const T* host, std::size_t count) {
    GEMMKIT_CUDA_CHECK(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  void copy_to_host(T* host, std::size_t count) const {
    GEMMKIT_CUDA_CHECK(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace gemmkit::cuda

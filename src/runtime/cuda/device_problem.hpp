// Internal: a host problem's operands copied to the device, for the host APIs that run a
// device path (gemm's CUDA kernels, the exact GEMM, the Ozaki emulation, its distributed form).
#pragma once

#include <cstddef>

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/gemm.hpp"

namespace gemmkit::cuda {

// A, B and C of `host` (the whole batch, as stored: same layout and leading dimensions)
// copied to the current device, and the problem on those copies. C is copied too, so that C0
// and the gaps between C's rows come back as they were, unless with_c is false (a C the call
// does not read or write: the problem's C is then null).
class DeviceProblem {
 public:
  explicit DeviceProblem(const GemmProblem& host, bool with_c = true)
      : host_(host),
        a_(copy(host.a, std::size_t(host.a_span()) * dtype_size(host.dtype))),
        b_(copy(host.b, std::size_t(host.b_span()) * dtype_size(host.dtype))),
        c_(copy(host.c, with_c ? std::size_t(host.c_span()) * dtype_size(host.c_dtype()) : 0)) {
    problem_ = host;
    problem_.a = a_.data();
    problem_.b = b_.data();
    problem_.c = with_c ? c_.data() : nullptr;
  }
  const GemmProblem& get() const { return problem_; }
  void copy_c_back() const { c_.copy_to_host(static_cast<unsigned char*>(host_.c), c_.size()); }

 private:
  static DeviceBuffer<unsigned char> copy(const void* host, std::size_t bytes) {
    DeviceBuffer<unsigned char> d(bytes);
    if (bytes) d.copy_from_host(static_cast<const unsigned char*>(host), bytes);
    return d;
  }
  GemmProblem host_, problem_;
  DeviceBuffer<unsigned char> a_, b_, c_;
};

}  // namespace gemmkit::cuda

// Shared by the GPU test files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/dtype.hpp"

// Skips the test, visibly and with the reason, when no CUDA device can be used.
#define SKIP_WITHOUT_DEVICE()                                                   \
  do {                                                                          \
    if (!gemmkit::cuda_device_available())                                      \
      GTEST_SKIP() << gemmkit::no_device_message();                             \
  } while (0)

namespace gpu_test {

// The CUDA context of the edge-case sweeps. A host call without one makes its own, which
// costs a device query (and a cuBLAS handle for the cuBLAS entries) per call, far more than
// a small case's kernel. Never destroyed, so that no CUDA call runs after the runtime's own
// teardown at exit.
inline gemmkit::Context& sweep_context() {
  static gemmkit::Context* const context = new gemmkit::Context(gemmkit::Backend::cuda);
  return *context;
}

// Elements of the tensor-core dtypes (and f32) in host memory, as the kernels store them.
inline std::size_t element_bytes(gemmkit::DType d) {
  return d == gemmkit::DType::bf16 || d == gemmkit::DType::f16 ? 2 : 4;
}
inline void store_element(gemmkit::DType d, unsigned char* p, float v) {
  if (d == gemmkit::DType::bf16) {
    const __nv_bfloat16 x = __float2bfloat16_rn(v);
    std::memcpy(p, &x, 2);
  } else if (d == gemmkit::DType::f16) {
    const __half x = __float2half_rn(v);
    std::memcpy(p, &x, 2);
  } else {
    std::memcpy(p, &v, 4);
  }
}
inline float load_element(gemmkit::DType d, const unsigned char* p) {
  if (d == gemmkit::DType::bf16) {
    __nv_bfloat16 x;
    std::memcpy(&x, p, 2);
    return __bfloat162float(x);
  }
  if (d == gemmkit::DType::f16) {
    __half x;
    std::memcpy(&x, p, 2);
    return __half2float(x);
  }
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace gpu_test

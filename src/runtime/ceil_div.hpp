// ceil_div: how many blocks of b cover a, for host code and CUDA code alike.
#pragma once

#include <cstdint>

#include "runtime/host_device.hpp"

namespace gemmkit {

// a / b rounded up, for a >= 0 and b > 0.
GEMMKIT_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace gemmkit

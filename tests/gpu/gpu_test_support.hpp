// Shared by the GPU test files.
#pragma once

#include <gtest/gtest.h>

#include "gemmkit/device.hpp"

// Skips the test, visibly and with the reason, when no CUDA device can be used.
#define SKIP_WITHOUT_DEVICE()                                                   \
  do {                                                                          \
    if (!gemmkit::cuda_device_available())                                      \
      GTEST_SKIP() << gemmkit::no_device_message();                             \
  } while (0)

// GEMMKIT_CUDA_PART(statements): the statements in a build with the CUDA backend; without it,
// the same statements compiled (so both builds check them) but discarded, so that what they
// call needs no definition. An operation's host half calls its cuda/ folder (compiled only in
// CUDA builds) through it: the CUDA entries register themselves, and the host API's device
// path needs no stub that says "no CUDA" in a build without nvcc. What follows it runs only in
// such a build.
#pragma once

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

#if GEMMKIT_HAVE_CUDA
#define GEMMKIT_CUDA_PART(...) __VA_ARGS__
#else
#define GEMMKIT_CUDA_PART(...) \
  if constexpr (false) {        \
    __VA_ARGS__                 \
  }
#endif

namespace gemmkit::detail {

// After GEMMKIT_CUDA_PART(return ...;): the device error every command gives without one.
[[noreturn]] inline void fail_without_cuda() { fail(ErrorCategory::device, no_device_message()); }

}  // namespace gemmkit::detail

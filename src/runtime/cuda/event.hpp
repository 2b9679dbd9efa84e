// RAII CUDA events and streams, and the time between two events.
#pragma once

#include <cuda_runtime.h>

#include "runtime/cuda/check.hpp"

namespace gemmkit::cuda {

class Event {
 public:
  Event() { GEMMKIT_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// A non-blocking stream of the holder's own, destroyed with it (on the device current when
// it was made).
class OwnStream {
 public:
  OwnStream() { GEMMKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~OwnStream() { cudaStreamDestroy(stream_); }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Seconds from start to stop, once stop has completed.
inline double elapsed_seconds(const Event& start, const Event& stop) {
  GEMMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  GEMMKIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms / 1e3;
}

}  // namespace gemmkit::cuda

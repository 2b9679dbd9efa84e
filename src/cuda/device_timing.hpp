// Timing memory-bound work on the device (reduction, SpMV, convolution): CUDA events around
// each run, warm-up first, the median of the timed runs; and the device-to-device copy that
// their bandwidth is measured against, timed the same way in the same process.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/event.hpp"
#include "gemmkit/timing_spread.hpp"

namespace gemmkit::cuda {

// reps, min_s, median_s, max_s, the spread and whether the runs were noisy: the library's
// one rule for every timed row (gemmkit/timing_spread.hpp).
using DeviceTiming = TimingSpread;

inline DeviceTiming summarize(std::vector<double> seconds) { return timing_spread(std::move(seconds), false); }

// `launch()` enqueues the work on the default stream (and may throw). Each run is timed on
// its own between two events, so a stray slow run does not move the median.
template <class Launch>
DeviceTiming time_on_device(Launch&& launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) launch();
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  Event start, stop;
  std::vector<double> seconds;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    GEMMKIT_CUDA_CHECK(cudaEventRecord(start.get()));
    launch();
    GEMMKIT_CUDA_CHECK(cudaEventRecord(stop.get()));
    seconds.push_back(elapsed_seconds(start, stop));
  }
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  return summarize(std::move(seconds));
}

// The ceiling of a streaming kernel: cudaMemcpy device to device of `bytes`. Its bandwidth,
// counting bytes read plus bytes written, is 2 * bytes / median_s.
inline DeviceTiming time_device_copy(std::size_t bytes, int warmup, int reps) {
  DeviceBuffer<unsigned char> from(bytes), to(bytes);
  GEMMKIT_CUDA_CHECK(cudaMemset(from.data(), 1, bytes));
  return time_on_device(
      [&] { GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice)); },
      warmup, reps);
}

}  // namespace gemmkit::cuda

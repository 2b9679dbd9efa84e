// The one GPU timer: CUDA events on the caller's stream around each run, in the loop every
// benchmark follows (gemmkit/timing.hpp's time_runs: warm-up, then timed runs); and the
// device-to-device copy that memory-bound work is measured against, timed the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/event.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/timing_spread.hpp"

namespace gemmkit::cuda {

// Work queued on one stream between two events recorded there.
class StreamTimer {
 public:
  explicit StreamTimer(cudaStream_t stream) : stream_(stream) {}
  void start() { GEMMKIT_CUDA_CHECK(cudaEventRecord(start_.get(), stream_)); }
  void stop() { GEMMKIT_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_)); }
  double seconds() const { return elapsed_seconds(start_, stop_); }  // waits for stop
  // One run of `launch` (which queues work on the stream), in seconds.
  template <class Launch>
  double time(Launch&& launch) {
    start();
    launch();
    stop();
    return seconds();
  }

 private:
  cudaStream_t stream_;
  Event start_, stop_;
};

struct NothingAfter {
  void operator()() const {}
};

// time_runs with each run of `launch()` (queueing it on `stream`; it may throw) between
// events there. `after()` follows every run, outside its events (a look at its result).
template <class Launch, class After = NothingAfter>
std::vector<double> time_on_device(cudaStream_t stream, const TimingOptions& options, Launch&& launch,
                                   After&& after = {}) {
  StreamTimer timer(stream);
  std::vector<double> seconds = time_runs(options, [&] {
    const double s = timer.time(launch);
    after();
    return s;
  });
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  return seconds;
}

// The ceiling of streaming work: a device-to-device copy of `bytes` on `stream`. Its
// bandwidth, counting bytes read plus bytes written, is 2 * bytes / median.
inline std::vector<double> time_device_copy(cudaStream_t stream, std::size_t bytes, const TimingOptions& options) {
  const DeviceBuffer<unsigned char> from(bytes), to(bytes);
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(from.data(), 1, bytes, stream));
  return time_on_device(stream, options, [&] {
    GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
}

}  // namespace gemmkit::cuda

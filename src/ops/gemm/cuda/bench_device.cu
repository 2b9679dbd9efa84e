// The benchmark engine's device half: GEMMs timed through the device API on a stream of the
// engine's own, under the GPU timer (runtime/cuda/device_timing.hpp), each run after an L2 flush
// (nothing kept in statics).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "ops/gemm/bench_device.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_timing.hpp"
#include "runtime/cuda/workspace_parts.hpp"

namespace gemmkit::detail {

BenchStream::BenchStream(Context& ctx) {
  if (ctx.backend() != Backend::cuda) return;
  const cuda::DeviceScope scope(ctx.device());
  cudaStream_t stream = nullptr;
  GEMMKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_ = stream;
}

BenchStream::~BenchStream() {
  if (!stream_) return;
  cudaStreamSynchronize(stream_);  // never throws from a destructor
  cudaStreamDestroy(stream_);
}

namespace {

// A host problem's operands (the whole batch) copied to the device with the same layout, in
// the order of `stream` (a non-blocking stream does not wait for the legacy stream's copies).
class DeviceProblem {
 public:
  DeviceProblem(const GemmProblem& host, cudaStream_t stream)
      : host_(host),
        stream_(stream),
        a_(std::size_t(host.a_span()) * dtype_size(host.dtype)),
        b_(std::size_t(host.b_span()) * dtype_size(host.dtype)),
        c_(std::size_t(host.c_span()) * dtype_size(host.c_dtype())) {
    copy(a_.data(), host.a, a_.size(), cudaMemcpyHostToDevice);
    copy(b_.data(), host.b, b_.size(), cudaMemcpyHostToDevice);
    restore_c();
    problem_ = host;
    problem_.a = a_.data();
    problem_.b = b_.data();
    problem_.c = c_.data();
  }
  const GemmProblem& get() const { return problem_; }
  // Puts the host's C back on the device, for a run from C0 again.
  void restore_c() { copy(c_.data(), host_.c, c_.size(), cudaMemcpyHostToDevice); }
  // Host C gets the device's, once the stream's work is done.
  void copy_c_back() {
    copy(host_.c, c_.data(), c_.size(), cudaMemcpyDeviceToHost);
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind) {
    if (bytes) GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream_));
  }
  GemmProblem host_, problem_;
  cudaStream_t stream_;
  cuda::DeviceBuffer<unsigned char> a_, b_, c_;
};

// Launches GEMMs of one kernel set on the engine's stream, each timed run under the GPU timer
// after an L2 flush. Its scratch holds the flush's bytes (twice the device's L2, at least 64
// MiB: nvbench flushes the same way) and, after them, the kernels' own workspace. It is the
// timer's: not the context's pool, which keeps a buffer per stream for the context's life,
// and the engine's stream lives for one run.
class Timer {
 public:
  Timer(Context& ctx, cudaStream_t stream, const GemmProblem& problem,
        std::initializer_list<const KernelEntry*> entries)
      : ctx_(ctx), stream_(stream), flush_bytes_(flush_bytes(ctx)), clock_(stream) {
    for (const KernelEntry* e : entries)
      if (e)
        kernel_bytes_ = std::max(kernel_bytes_,
                                 workspace_aligned(e->workspace_for(problem, ctx)));
    scratch_ = cuda::DeviceBuffer<unsigned char>(flush_bytes_ + kernel_bytes_);
    if (kernel_bytes_) kernel_ = {scratch_.data() + flush_bytes_, kernel_bytes_};
  }

  // One timed run of `entry`, as a TimedRun. The flush first overwrites the scratch, outside
  // the timed pair, so operands that fit in L2 are read from memory.
  TimedRun run(const KernelEntry& entry, const GemmProblem& device_problem) {
    return [this, &entry, &device_problem] {
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), ++flush_value_, flush_bytes_, stream_));
      const double seconds = clock_.time([&] { launch(entry, device_problem); });
      GEMMKIT_CUDA_CHECK(cudaGetLastError());
      return seconds;
    };
  }
  void launch(const KernelEntry& entry, const GemmProblem& device_problem) {
    launch_gemm(ctx_, entry, device_problem, stream_, kernel_);
  }

 private:
  static std::size_t flush_bytes(const Context& ctx) {
    return workspace_aligned(std::max<std::size_t>(2 * std::size_t(ctx.device_info().l2_cache_bytes),
                                          std::size_t(64) << 20));
  }
  Context& ctx_;
  cudaStream_t stream_;
  std::size_t flush_bytes_ = 0, kernel_bytes_ = 0;
  cuda::DeviceBuffer<unsigned char> scratch_;
  Workspace kernel_;
  unsigned char flush_value_ = 0;
  cuda::StreamTimer clock_;
};

}  // namespace

// Both kernels run on the same device copies of A, B and C, so where those landed in memory
// is the same for both. Every run starts with a cold L2, as the benchmark's method asks
// (docs/ladder.md): otherwise operands that fit in the 60 MiB L2 (every f32 size up to about
// 2048) would be read from cache.
PairedTimes time_gemm_on_device(Context& ctx, Stream stream, const KernelEntry& entry,
                                const KernelEntry* reference, const GemmProblem& host,
                                const TimingOptions& options) {
  const cuda::DeviceScope scope(ctx.device());
  DeviceProblem device(host, stream);
  Timer timer(ctx, stream, device.get(), {&entry, reference});
  const GemmProblem& p = device.get();
  PairedTimes t;
  if (reference) {
    t = time_runs_paired(options, timer.run(entry, p), timer.run(*reference, p));
    // The reference may have written C last: one more run of the entry, from C0 again,
    // leaves the entry's own result for verification.
    device.restore_c();
    timer.launch(entry, p);
  } else {
    t.entry = time_runs(options, timer.run(entry, p));
  }
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  device.copy_c_back();
  return t;
}

double device_copy_seconds(Context& ctx, Stream stream, std::size_t bytes, int warmup, int reps) {
  const cuda::DeviceScope scope(ctx.device());
  return median_of(cuda::time_device_copy(stream, bytes, fixed_runs(warmup, reps)));
}

StreamTimes time_on_stream_device(Context& ctx, Stream stream, int warmup, int reps, bool each,
                                  const std::function<void()>& body) {
  const cuda::DeviceScope scope(ctx.device());
  for (int i = 0; i < warmup; ++i) body();
  // Made before the loop, and read after it: reading one waits for its work.
  std::deque<cuda::StreamTimer> timers;
  for (int i = 0; i < (each ? reps : 1); ++i) timers.emplace_back(stream);
  StreamTimes times;
  times.host_seconds = cpu_seconds([&] {
    if (!each) timers.front().start();
    for (int i = 0; i < reps; ++i) {
      if (each) timers[std::size_t(i)].start();
      body();
      if (each) timers[std::size_t(i)].stop();
    }
    if (!each) timers.front().stop();
  });
  for (const cuda::StreamTimer& timer : timers) times.seconds.push_back(timer.seconds());
  return times;
}

}  // namespace gemmkit::detail

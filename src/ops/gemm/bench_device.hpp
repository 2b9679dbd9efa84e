// Internal: the benchmark engine's timing. time_gemm (src/ops/gemm/bench.cpp) times on either
// backend; its device half is src/ops/gemm/cuda/bench_device.cu (in a build without CUDA,
// src/cuda_absent/cuda_absent.cpp, whose functions throw the no-device error).
#pragma once

#include <cstddef>

#include "ops/gemm/dispatch.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"

namespace gemmkit::detail {

// A stream of the engine's own, on ctx's device (nullptr for the CPU context): the work it
// times runs on it, apart from anything else queued on the device. Synchronised and
// destroyed with the object.
class BenchStream {
 public:
  explicit BenchStream(Context& ctx);
  ~BenchStream();
  BenchStream(const BenchStream&) = delete;
  BenchStream& operator=(const BenchStream&) = delete;
  Stream get() const { return stream_; }

 private:
  Stream stream_ = nullptr;
};

// Times `entry` on a validated host-memory problem (any layout, any batch) in ctx, as
// time_runs says (gemmkit/timing.hpp). With a `reference` (same backend), the two alternate
// in ABBA order (time_runs_paired) and the reference writes a private C. On return host C holds
// `entry`'s result. Usage errors for a kernel of another backend or one that rejects it.
// Runs go through the device API's launch path (launch_gemm: batches one product at a time
// for entries that are not `batched`). CUDA: the operands are copied to the device once;
// every run is queued on `stream` (a BenchStream's), under events on that stream, each timed
// run after an L2 flush (the timer's own scratch, freed when it returns).
PairedTimes time_gemm(Context& ctx, Stream stream, const KernelEntry& entry, const KernelEntry* reference,
                      const GemmProblem& host_problem, const TimingOptions& options);

// time_gemm's CUDA half, for a row-major problem its kernels accept.
PairedTimes time_gemm_on_device(Context& ctx, Stream stream, const KernelEntry& entry, const KernelEntry* reference,
                                const GemmProblem& host_problem, const TimingOptions& options);

// Median seconds of a device-to-device copy of `bytes` on `stream`.
double device_copy_seconds(Context& ctx, Stream stream, std::size_t bytes, int warmup, int reps);

// time_on_stream's CUDA half (gemmkit/timing.hpp).
StreamTimes time_on_stream_device(Context& ctx, Stream stream, int warmup, int reps, bool each,
                                  const std::function<void()>& body);

}  // namespace gemmkit::detail

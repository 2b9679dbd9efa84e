// Launcher and registry entries for rung 15: rung 14's tuned configurations with the
// partial last wave split by K iterations (stream-K, src/cuda/stream_k_schedule.hpp).
#include <map>
#include <string>

#include "cuda/device_buffer.hpp"
#include "cuda/kernels/15_stream_k.cuh"
#include "cuda/ladder.hpp"
#include "cuda/launch.hpp"
#include "cuda/warptile_configs.cuh"

namespace gemmkit::cuda {
namespace {

using kernels::GemmArgs;

// The fewest K tiles worth giving a stream-K block: below that the pipeline's prologue
// and the fix-up cost more than the extra parallelism gains.
constexpr int kMinItersPerBlock = 8;

// Device memory the blocks of a launch share: partial tiles, flags and the block counter.
// Kept per device and grown on demand (allocating ~17 MB per call would cost more than the
// tail it saves); never freed, like the cuBLAS handle, because freeing it during static
// teardown can run after the CUDA runtime has shut down. Launches on one stream run one
// after another, so they can share it.
kernels::StreamKWorkspace workspace(std::size_t partial_floats, int sk_blocks) {
  struct Buffers {
    DeviceBuffer<float> partials;
    DeviceBuffer<int> counters;  // sk_blocks flags, then the block counter
  };
  static std::map<int, Buffers*> per_device;
  int device = 0;
  GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
  Buffers*& b = per_device[device];
  if (!b) b = new Buffers;
  if (b->partials.size() < partial_floats) b->partials = DeviceBuffer<float>(partial_floats);
  const std::size_t counters = std::size_t(sk_blocks) + 1;
  if (b->counters.size() < counters) b->counters = DeviceBuffer<int>(counters);
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(b->counters.data(), 0, counters * sizeof(int)));
  return {b->partials.data(), b->counters.data(), b->counters.data() + sk_blocks};
}

// Blocks of Kernel the device runs at once: one wave. Asked once per kernel (the first
// device it runs on): the query costs host time inside every timed call otherwise.
template <auto Kernel, int Threads, int SmemBytes>
int resident_blocks() {
  static const int resident = [] {
    allow_dynamic_smem<Kernel, SmemBytes>();
    int device = 0, sms = 0, per_sm = 0;
    GEMMKIT_CUDA_CHECK(cudaGetDevice(&device));
    GEMMKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GEMMKIT_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, Threads, SmemBytes));
    if (per_sm < 1)
      fail(ErrorCategory::device, "stream_k_kernel does not fit on a multiprocessor of this device");
    return sms * per_sm;
  }();
  return resident;
}

// Rung 15 is stream-K over rung 14's 128x256 tile, the configuration that runs the large
// problems, where a partial last wave costs the most.
using StreamKConfig = Tile128x256;
constexpr TunedConfig kTunedConfig = TunedConfig::tile_128x256;

void run_stream_k(const GemmProblem& p) {
  using Cfg = StreamKConfig;
  if (p.m == 0 || p.n == 0) return;
  const GemmArgs<float> g = gemm_args<float>(p);
  const std::int64_t tiles = ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN);
  const std::int64_t k_tiles = ceil_div(p.k, Cfg::BK);
  with_transposes_and_vectors(p, [&](auto ta, auto tb, auto va, auto vb) {
    constexpr auto kernel = kernels::stream_k_kernel<Cfg, decltype(ta)::value, decltype(tb)::value,
                                                     decltype(va)::value, decltype(vb)::value>;
    const int resident = resident_blocks<kernel, Cfg::kThreads, Cfg::kSmemBytes>();
    const StreamKSchedule s = make_stream_k_schedule(tiles, k_tiles, resident, kMinItersPerBlock);
    if (s.sk_blocks == 0) {
      // Whole waves, or K too short to split: rung 14's kernel, which measured up to 25%
      // faster on such problems than this one running the same tiles (1024x8192x256).
      run_tuned_config(kTunedConfig, p);
      return;
    }
    const std::size_t partial_floats = std::size_t(s.sk_blocks) * Cfg::kThreads * Cfg::TM * Cfg::TN;
    const kernels::StreamKWorkspace w = workspace(partial_floats, s.sk_blocks);
    launch_with_smem<kernel, Cfg::kSmemBytes>(dim3(s.blocks()), dim3(Cfg::kThreads), g, s, w);
    check_launch("stream_k_kernel");
  });
}

std::optional<std::string> fits(const GemmProblem& p) {
  // The grid is the tiles plus at most one wave of stream-K blocks.
  constexpr std::int64_t kMostResident = 1 << 16;
  return fits_grid(p, ceil_div(p.m, StreamKConfig::BM) * ceil_div(p.n, StreamKConfig::BN) + kMostResident, 1);
}

}  // namespace

void register_stream_k_kernels(Registry& registry) {
  registry.add({.name = "cuda_stream_k",
                .backend = Backend::cuda,
                .rung = 15,
                .role = KernelRole::ladder,
                .summary = "cuda_tuned_128x256 with the partial last wave of tiles split by K "
                           "over a full wave of blocks (stream-K), so every SM finishes together",
                .dtypes = {DType::f32},
                .min_compute_capability = 80,
                .auto_priority = 0,
                .precondition = fits,
                .run = run_stream_k});
}

}  // namespace gemmkit::cuda

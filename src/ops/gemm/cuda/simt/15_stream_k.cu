// Launcher and registry entries for rung 15: rung 14's tuned configurations with the
// partial last wave split by K iterations (stream-K, src/ops/gemm/cuda/common/stream_k_schedule.hpp).
// Its kernels are compiled on first use (runtime/cuda/jit_kernels.hpp): this file names them
// (stream_k_kernel_for) but instantiates none.
#include <string>

#include "runtime/cuda/device_buffer.hpp"
#include "ops/gemm/cuda/simt/15_stream_k.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "ops/gemm/cuda/simt/14_autotuned.cuh"
#include "runtime/cuda/jit_kernels.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::GemmArgs;

// The fewest K tiles worth giving a stream-K block: below that the pipeline's prologue
// and the fix-up cost more than the extra parallelism gains.
constexpr int kMinItersPerBlock = 8;

// Rung 15 is stream-K over rung 14's 128x256 tile, the configuration that runs the large
// problems, where a partial last wave costs the most.
using StreamKConfig = Tile128x256;
constexpr TunedConfig kTunedConfig = TunedConfig::tile_128x256;

// One block per data-parallel tile, then one per stream-K share.
Geometry stream_k_geometry(const StreamKSchedule& s) {
  using Cfg = StreamKConfig;
  return {dim3(unsigned(s.blocks())), dim3(Cfg::kThreads), std::size_t(Cfg::kSmemBytes)};
}

// Rung 15's kernel for the operands' transposes and 16-byte loads.
template <bool TA, bool TB, bool VA, bool VB>
const JitKernel& stream_k_kernel_for() {
  return jit_instance<"ops/gemm/cuda/simt/15_stream_k.cuh", "gemmkit::cuda::kernels::stream_k_kernel", StreamKConfig,
                      Value<TA>, Value<TB>, Value<VA>, Value<VB>>("f32", 80);
}

// Blocks of the kernel the device runs at once: one wave.
int resident_blocks(const Context& ctx, const JitKernel& kernel) {
  const int per_sm = blocks_per_sm(ctx, jit_kernel(ctx, kernel), stream_k_geometry({}));
  if (per_sm < 1) fail(ErrorCategory::device, "stream_k_kernel does not fit on a multiprocessor of this device");
  return ctx.device_info().sm_count * per_sm;
}

// The schedule for `resident` blocks at once (the launcher asks the context, explain its
// queries).
StreamKSchedule schedule(const GemmProblem& p, int resident) {
  using Cfg = StreamKConfig;
  const std::int64_t tiles = ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN);
  const std::int64_t k_tiles = ceil_div(p.k, Cfg::BK);
  return make_stream_k_schedule(tiles, k_tiles, resident, kMinItersPerBlock);
}

StreamKSchedule schedule(const GemmProblem& p, const Context& ctx, const JitKernel& kernel) {
  return schedule(p, resident_blocks(ctx, kernel));
}

// Workspace: the stream-K blocks' partial tiles (floats), then their flags and the block
// counter (ints), zeroed on the stream before each launch.
std::size_t partial_bytes(const StreamKSchedule& s) {
  using Cfg = StreamKConfig;
  return std::size_t(s.sk_blocks) * Cfg::kThreads * Cfg::TM * Cfg::TN * sizeof(float);
}
std::size_t workspace_bytes(const StreamKSchedule& s) {
  return s.sk_blocks == 0 ? 0 : partial_bytes(s) + (std::size_t(s.sk_blocks) + 1) * sizeof(int);
}

// Every instantiation has the same threads and shared memory, so the same schedule.
std::size_t stream_k_workspace_bytes(const GemmProblem& p, const Context& ctx) {
  return workspace_bytes(schedule(p, ctx, stream_k_kernel_for<false, false, false, false>()));
}

void run_stream_k(const GemmProblem& p, const KernelLaunch& l) {
  const GemmArgs<float> g = gemm_args<float>(p);
  with_transposes_and_vectors(p, [&](auto ta, auto tb, auto va, auto vb) {
    const JitKernel& kernel =
        stream_k_kernel_for<decltype(ta)::value, decltype(tb)::value, decltype(va)::value, decltype(vb)::value>();
    const StreamKSchedule s = schedule(p, l.context, kernel);
    if (s.sk_blocks == 0) {
      // Whole waves, or K too short to split: rung 14's kernel, which measured faster on
      // such problems than this one running the same tiles (1024x8192x256).
      run_tuned_config(kTunedConfig, p, l);
      return;
    }
    if (l.workspace.bytes < workspace_bytes(s))
      fail(ErrorCategory::internal, "cuda_stream_k: the workspace is smaller than declared");
    auto* base = static_cast<unsigned char*>(l.workspace.data);
    auto* flags = reinterpret_cast<unsigned*>(base + partial_bytes(s));  // sk_blocks flags, then the counter
    GEMMKIT_CUDA_CHECK(cudaMemsetAsync(flags, 0, (std::size_t(s.sk_blocks) + 1) * sizeof(int), l.stream));
    const kernels::StreamKWorkspace w{reinterpret_cast<float*>(base), flags, reinterpret_cast<int*>(flags + s.sk_blocks)};
    launch_kernel<kernels::StreamKParameters>(l.context, l.stream, stream_k_geometry(s), jit_kernel(l.context, kernel), g,
                                              s, w);
  });
}

// The launches run_stream_k makes: rung 14's 128x256 kernel when nothing is split, else the
// stream-K kernel (after zeroing its flags, a memset rather than a kernel).
std::vector<LaunchPlan> stream_k_plans(const GemmProblem& p, const LaunchQueries& q) {
  std::vector<LaunchPlan> out;
  bool whole = false;
  with_transposes_and_vectors(p, [&](auto ta, auto tb, auto va, auto vb) {
    const KernelRef kernel = jit_kernel(
        q, stream_k_kernel_for<decltype(ta)::value, decltype(tb)::value, decltype(va)::value, decltype(vb)::value>());
    const int resident = q.sm_count * q.blocks_per_sm(plan_of(kernel, stream_k_geometry({}), "", ""));
    const StreamKSchedule s = schedule(p, resident);
    if (s.sk_blocks == 0) {
      whole = true;
      return;
    }
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    out.push_back(plan_of(
        kernel, stream_k_geometry(s), "the product",
        "blocks take numbers from an atomic counter as they start (not blockIdx.x); numbers 0.." + n(s.dp_tiles - 1) +
            " each write one whole 128x256 tile (rung 14's order and lane layout); the " + n(s.sk_blocks) +
            " after them share the last " + n(s.tiles - s.dp_tiles) + " tiles' " + n(s.sk_iters) +
            " K iterations evenly (about " + n(s.sk_iters / std::max(s.sk_blocks, 1)) +
            " each): a block that ends a tile adds the others' partial sums and writes it, the others leave "
            "partial sums in the workspace and raise a flag"));
  });
  if (whole) return tuned_config_plans(kTunedConfig, p, q);
  return out;
}

std::optional<std::string> fits(const GemmProblem& p) {
  // The grid is the tiles plus at most one wave of stream-K blocks.
  constexpr std::int64_t kMostResident = 1 << 16;
  return fits_grid(p, ceil_div(p.m, StreamKConfig::BM) * ceil_div(p.n, StreamKConfig::BN) + kMostResident, 1);
}

}  // namespace

// Every kernel rung 15 can launch, for `gemmkit cache warm` and the test that compiles them all.
std::vector<const JitKernel*> stream_k_jit_kernels() {
  std::vector<const JitKernel*> out;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const bool va : {false, true})
        for (const bool vb : {false, true})
          if ((ta || !va) && (!tb || !vb))  // with_transposes_and_vectors: 16-byte loads of A^T and B only
            with_bools(
                [&](auto... flags) { out.push_back(&stream_k_kernel_for<decltype(flags)::value...>()); }, ta, tb, va,
                vb);
  return out;
}

void register_stream_k_kernels(Registry<GemmProblem>& registry) {
  registry.add({{.name = "cuda_stream_k", .backend = Backend::cuda, .rung = 15, .summary = "stream-K",
                 .dtypes = {DType::f32}, .min_compute_capability = 80},
                {.precondition = fits, .workspace_bytes = stream_k_workspace_bytes, .run = run_stream_k,
                 .launches = stream_k_plans}});
}

}  // namespace gemmkit::cuda

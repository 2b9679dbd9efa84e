// What the device API costs per call: a 256^3 bf16 GEMM (rung 19 on Hopper, cuBLAS
// elsewhere) queued three ways: gemmkit::gemm(ctx, problem, stream) (a plan made and run
// each call), a GemmPlan made once and run each call (the cached plan), and the entry's
// launcher called directly with a prepared launch (the kernel "launched directly": the
// same tensor maps, the same launch). Each loop queues `calls` back-to-back launches on one
// stream; per call we report the host time to queue it (the API's validation, kernel
// choice, pointer checks and workspace lookup are host work) and the stream's time per
// call between two events (what a caller waiting on the stream sees). Medians of 7 trials,
// the paths in a rotating order. Also the pool's allocations over the timed calls (must be 0).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/plan.hpp"
#include "gemmkit/registry.hpp"

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "api_overhead: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gemmkit;
  if (!cuda_device_available()) {
    std::fprintf(stderr, "api_overhead: %s\n", no_device_message().c_str());
    return 1;
  }
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 256;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 2000;
  Context ctx(Backend::cuda);
  const std::string kernel = ctx.compute_capability() >= 90 ? "cuda_wgmma_ws" : "cuda_cublas_bf16";
  const KernelEntry& entry = gemm_registry().get(kernel);

  std::vector<__nv_bfloat16> host(std::size_t(n * n));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = __float2bfloat16(float(int(i % 7) - 3) / 4);
  void *a, *b, *c;
  check(cudaMalloc(&a, host.size() * 2), "cudaMalloc");
  check(cudaMalloc(&b, host.size() * 2), "cudaMalloc");
  check(cudaMalloc(&c, host.size() * 2), "cudaMalloc");
  check(cudaMemcpy(a, host.data(), host.size() * 2, cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(b, host.data(), host.size() * 2, cudaMemcpyHostToDevice), "copy");
  GemmProblem p;
  p.dtype = DType::bf16;
  p.m = p.n = p.k = n;
  p.a = a, p.b = b, p.c = c, p.lda = p.ldb = p.ldc = n;

  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const GemmOptions options{.kernel = kernel};
  const Workspace workspace = ctx.workspace(stream, entry.workspace_for(p, ctx));
  const KernelLaunch launch{ctx, stream, workspace};
  const GemmPlan plan(ctx, p, options);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");

  // One trial: `calls` launches through one path; host and stream seconds per call.
  enum Path { api, cached_plan, direct, paths };
  auto trial = [&](int path) {
    check(cudaStreamSynchronize(stream), "sync");
    check(cudaEventRecord(start, stream), "record");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
      if (path == api) gemm(ctx, p, stream, options);
      else if (path == cached_plan) plan.run(p, stream, workspace);
      else entry.run(p, launch);
    }
    const auto t1 = std::chrono::steady_clock::now();
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    return std::pair{std::chrono::duration<double>(t1 - t0).count() / calls, ms * 1e-3 / calls};
  };
  for (int path = 0; path < paths; ++path) trial(path);  // warm-up: module loading, the pool, clocks
  const std::uint64_t allocations = ctx.workspace_allocations();
  std::vector<double> host_s[paths], stream_s[paths];
  for (int t = 0; t < 7; ++t) {
    for (int i = 0; i < paths; ++i) {
      const int path = (t + i) % paths;
      const auto [h, s] = trial(path);
      host_s[path].push_back(h);
      stream_s[path].push_back(s);
    }
  }
  const DeviceInfo& d = ctx.device_info();
  std::printf("device: %s (cc %d), kernel %s, %lldx%lldx%lld bf16, %d calls per trial, median of 7\n",
              d.name.c_str(), d.compute_capability(), kernel.c_str(), (long long)n, (long long)n,
              (long long)n, calls);
  std::printf("%-30s %14s %16s\n", "path", "host us/call", "stream us/call");
  const char* names[paths] = {"gemm(ctx, problem, stream)", "plan.run(problem, stream, ws)",
                              "entry.run(problem, launch)"};
  for (int path = 0; path < paths; ++path)
    std::printf("%-30s %14.2f %16.2f\n", names[path], median(host_s[path]) * 1e6, median(stream_s[path]) * 1e6);
  std::printf("difference from entry.run (us/call): gemm host %.2f, plan host %.2f\n",
              (median(host_s[api]) - median(host_s[direct])) * 1e6,
              (median(host_s[cached_plan]) - median(host_s[direct])) * 1e6);
  std::printf("workspace allocations during the timed calls: %llu\n",
              (unsigned long long)(ctx.workspace_allocations() - allocations));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}

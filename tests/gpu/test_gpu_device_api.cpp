// The device API on the GPU: operands in device memory, user streams, workspaces from the
// context's pool or lent by the caller, and rung 19's stream-K path running on two streams
// and from two threads at once. Rung 19 gives the same bits every run (its reduction order
// is fixed), so every concurrent result must equal the one computed alone, bit for bit; a
// shared partial-sum buffer or flag would break that.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// Device memory for one bf16 problem (row-major, C in f32) with random operands.
struct DeviceGemm {
  std::int64_t m, n, k;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<float> host_a, host_b;  // the values as bf16 holds them

  DeviceGemm(std::int64_t m_, std::int64_t n_, std::int64_t k_, std::uint64_t seed) : m(m_), n(n_), k(k_) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto upload = [&](std::int64_t count, std::vector<float>& values) {
      std::vector<__nv_bfloat16> bits(static_cast<std::size_t>(count));
      values.resize(static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < bits.size(); ++i) {
        bits[i] = __float2bfloat16_rn(u(rng));
        values[i] = __bfloat162float(bits[i]);
      }
      void* d = nullptr;
      EXPECT_EQ(cudaMalloc(&d, bits.size() * 2), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(d, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
      return d;
    };
    a = upload(m * k, host_a);
    b = upload(k * n, host_b);
    EXPECT_EQ(cudaMalloc(&c, std::size_t(m * n) * 4), cudaSuccess);
  }
  ~DeviceGemm() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  GemmProblem problem() const {
    GemmProblem p;
    p.dtype = DType::bf16;
    p.out_dtype = DType::f32;
    p.m = m, p.n = n, p.k = k;
    p.a = a, p.lda = k, p.b = b, p.ldb = n, p.c = c, p.ldc = n;
    return p;
  }
  std::vector<float> result() const {
    std::vector<float> out(std::size_t(m * n));
    EXPECT_EQ(cudaMemcpy(out.data(), c, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  // max over rows i of |C x - A (B x)| / (|A| |B| |x|) for a random x, in double: C is
  // right to about FP32 sums of exact products.
  double residual(const std::vector<float>& out) const {
    std::mt19937_64 rng(99);
    std::normal_distribution<double> g;
    std::vector<double> x(static_cast<std::size_t>(n)), bx(static_cast<std::size_t>(k), 0.0), bx_abs(static_cast<std::size_t>(k), 0.0);
    for (double& v : x) v = g(rng);
    for (std::int64_t q = 0; q < k; ++q)
      for (std::int64_t j = 0; j < n; ++j) {
        bx[q] += double(host_b[q * n + j]) * x[j];
        bx_abs[q] += std::fabs(double(host_b[q * n + j]) * x[j]);
      }
    double worst = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      double abx = 0, scale = 0, cx = 0;
      for (std::int64_t q = 0; q < k; ++q) {
        abx += double(host_a[i * k + q]) * bx[q];
        scale += std::fabs(double(host_a[i * k + q])) * bx_abs[q];
      }
      for (std::int64_t j = 0; j < n; ++j) cx += double(out[i * n + j]) * x[j];
      worst = std::max(worst, std::fabs(cx - abx) / scale);
    }
    return worst;
  }
};

const KernelEntry* rung19(const Context& ctx) {
  const KernelEntry* e = gemm_registry().find("cuda_wgmma_ws");
  return e && ctx.compute_capability() >= e->min_compute_capability ? e : nullptr;
}

// Shapes whose last round of cluster tiles (256 x 256 each) rung 19 splits by K on a
// 132-SM GPU (66 clusters of two): 16 x 6 = 96 and 10 x 10 = 100 cluster tiles leave last
// rounds of 30 and 34.
constexpr std::int64_t kShapes[2][3] = {{4096, 1536, 2048}, {2560, 2560, 1536}};

TEST(GpuDeviceApi, StreamKOnTwoStreamsAndTwoThreadsGivesTheBitsOfARunAlone) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const KernelEntry* e = rung19(ctx);
  if (!e) GTEST_SKIP() << "cuda_wgmma_ws needs compute capability 90";
  const GemmOptions rung = {.kernel = e->name};
  DeviceGemm g0(kShapes[0][0], kShapes[0][1], kShapes[0][2], 1);
  DeviceGemm g1(kShapes[1][0], kShapes[1][1], kShapes[1][2], 2);
  for (const DeviceGemm* g : {&g0, &g1}) {
    if (gemm_workspace_bytes(ctx, g->problem(), rung) == 0)
      GTEST_SKIP() << "this GPU's cluster count gives " << g->m << "x" << g->n
                   << " no stream-K round";
  }

  // Alone, on the default stream: the bits every later run must give.
  std::vector<float> alone[2];
  for (int i = 0; i < 2; ++i) {
    const DeviceGemm& g = i == 0 ? g0 : g1;
    gemm(ctx, g.problem(), nullptr, rung);
    CUDA_OK(cudaDeviceSynchronize());
    alone[i] = g.result();
    EXPECT_LT(g.residual(alone[i]), 1e-5) << "run alone, shape " << i;
  }

  // Two streams of one thread, each call queued before the other's finishes.
  cudaStream_t s[2];
  for (cudaStream_t& st : s) CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::uint64_t warm_allocations = 0;
  for (int round = 0; round < 8; ++round) {
    CUDA_OK(cudaMemset(g0.c, 0xff, std::size_t(g0.m * g0.n) * 4));
    CUDA_OK(cudaMemset(g1.c, 0xff, std::size_t(g1.m * g1.n) * 4));
    // cudaMemset is queued on the legacy stream, which non-blocking streams do not wait for.
    CUDA_OK(cudaDeviceSynchronize());
    for (int rep = 0; rep < 3; ++rep) {
      gemm(ctx, g0.problem(), s[0], rung);
      gemm(ctx, g1.problem(), s[1], rung);
    }
    CUDA_OK(cudaDeviceSynchronize());
    ASSERT_EQ(g0.result(), alone[0]) << "two streams, round " << round;
    ASSERT_EQ(g1.result(), alone[1]) << "two streams, round " << round;
    if (round == 0) warm_allocations = ctx.workspace_allocations();
  }
  EXPECT_EQ(ctx.workspace_allocations(), warm_allocations) << "calls allocated once warm";

  // Two threads, one context, a stream each.
  std::string failures[2];
  auto worker = [&](int i) {
    const DeviceGemm& g = i == 0 ? g0 : g1;
    for (int round = 0; round < 8; ++round) {
      if (cudaMemsetAsync(g.c, 0xff, std::size_t(g.m * g.n) * 4, s[i]) != cudaSuccess) {
        failures[i] = "memset failed";
        return;
      }
      gemm(ctx, g.problem(), s[i], rung);
      std::vector<float> out(std::size_t(g.m * g.n));
      if (cudaMemcpyAsync(out.data(), g.c, out.size() * 4, cudaMemcpyDeviceToHost, s[i]) != cudaSuccess ||
          cudaStreamSynchronize(s[i]) != cudaSuccess) {
        failures[i] = "copy failed";
        return;
      }
      if (out != alone[i]) {
        failures[i] = "round " + std::to_string(round) + " differs from the run alone";
        return;
      }
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(failures[0], "") << "thread 0";
  EXPECT_EQ(failures[1], "") << "thread 1";

  // A caller's workspace instead of the pool's.
  const std::size_t bytes = gemm_workspace_bytes(ctx, g0.problem(), rung);
  void* lent = nullptr;
  CUDA_OK(cudaMalloc(&lent, bytes));
  CUDA_OK(cudaMemsetAsync(g0.c, 0xff, std::size_t(g0.m * g0.n) * 4, s[0]));
  gemm(ctx, g0.problem(), s[0], Workspace{lent, bytes}, rung);
  CUDA_OK(cudaStreamSynchronize(s[0]));
  EXPECT_EQ(g0.result(), alone[0]) << "with the caller's workspace";
  try {
    gemm(ctx, g0.problem(), s[0], Workspace{lent, bytes - 1}, rung);
    ADD_FAILURE() << "a workspace one byte short was taken";
  } catch (const Error& err) {
    EXPECT_EQ(err.category(), ErrorCategory::usage) << err.what();
  }
  CUDA_OK(cudaFree(lent));
  for (cudaStream_t st : s) CUDA_OK(cudaStreamDestroy(st));
}

TEST(GpuDeviceApi, HostPointersAndOtherDevicesAreRefusedClearly) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  GemmProblem p;
  p.m = p.n = p.k = 64;
  p.a = a.data(), p.b = b.data(), p.c = c.data();
  p.lda = p.ldb = p.ldc = 64;
  try {
    gemm(ctx, p);
    ADD_FAILURE() << "host pointers were taken by the device API";
  } catch (const Error& err) {
    EXPECT_EQ(err.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(err.what()).find("not device memory"), std::string::npos) << err.what();
  }
  EXPECT_EQ(c[0], 0.0f);
}

// auto takes every tf32 shape (cuBLAS TF32 where no rung of ours accepts it), and never
// answers an f32 problem with a kernel that computes in TF32.
TEST(GpuDeviceApi, AutoTakesEveryTf32ShapeAndNeverLowersF32) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  for (const std::int64_t size : {17, 65, 1000, 4096}) {
    GemmProblem p;
    p.m = size, p.n = size + 3, p.k = size + 1;
    p.lda = p.k, p.ldb = p.n, p.ldc = p.n;
    p.dtype = DType::tf32;
    const KernelEntry& tf32 = choose_gemm_kernel(ctx, p);
    EXPECT_TRUE(tf32.supports(DType::tf32)) << tf32.name;
    p.dtype = DType::f32;
    const KernelEntry& f32 = choose_gemm_kernel(ctx, p);
    EXPECT_FALSE(f32.accuracy.has_value()) << f32.name << " for " << p.shape_string();
  }
}

// Every CUDA entry through the device API on a user stream, against the host API's result
// of the same entry (which goes through the same launcher on the default stream).
TEST(GpuDeviceApi, EveryEntryRunsOnAUserStream) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t m = 200, n = 136, k = 72;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (auto* v : {&a, &b, &c0})
    for (float& x : *v) x = u(rng);
  float *da, *db, *dc;
  CUDA_OK(cudaMalloc(&da, a.size() * 4));
  CUDA_OK(cudaMalloc(&db, b.size() * 4));
  CUDA_OK(cudaMalloc(&dc, c0.size() * 4));
  CUDA_OK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  // A copy from pageable memory may return before its DMA lands, and the non-blocking stream
  // below would not wait for it.
  CUDA_OK(cudaDeviceSynchronize());
  for (const KernelEntry& e : gemm_registry().entries()) {
    if (e.backend != Backend::cuda || !e.supports(DType::f32) ||
        ctx.compute_capability() < e.min_compute_capability)
      continue;
    GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.alpha = 1.5, p.beta = -0.5;
    p.lda = k, p.ldb = n, p.ldc = n;
    std::vector<float> host_c = c0;
    p.a = a.data(), p.b = b.data(), p.c = host_c.data();
    if (e.rejects(p)) continue;
    gemm(p, GemmOptions{.kernel = e.name, .context = &ctx});
    p.a = da, p.b = db, p.c = dc;
    CUDA_OK(cudaMemcpyAsync(dc, c0.data(), c0.size() * 4, cudaMemcpyHostToDevice, stream));
    gemm(ctx, p, stream, GemmOptions{.kernel = e.name});
    std::vector<float> device_c(c0.size());
    CUDA_OK(cudaMemcpyAsync(device_c.data(), dc, c0.size() * 4, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_EQ(device_c, host_c) << e.name;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaStreamDestroy(stream);
}

}  // namespace

namespace {

// Each device gets its own context; a call makes its context's device current and gives
// the caller's current device back. With one device, device 0 is checked that way alone.
TEST(GpuDeviceApi, EachDeviceItsOwnContext) {
  SKIP_WITHOUT_DEVICE();
  int count = 0;
  CUDA_OK(cudaGetDeviceCount(&count));
  for (int d = 0; d < std::min(count, 2); ++d) {
    CUDA_OK(cudaSetDevice(d));
    DeviceGemm g(300, 200, 136, 10 + d);
    // Leave the other device current: the call must switch to d and back.
    CUDA_OK(cudaSetDevice(count > 1 ? 1 - d : 0));
    Context ctx(Backend::cuda, d);
    EXPECT_EQ(ctx.device(), d);
    gemm(ctx, g.problem());
    int current = -1;
    CUDA_OK(cudaGetDevice(&current));
    EXPECT_EQ(current, count > 1 ? 1 - d : 0) << "the caller's device was not restored";
    CUDA_OK(cudaSetDevice(d));
    CUDA_OK(cudaDeviceSynchronize());
    EXPECT_LT(g.residual(g.result()), 1e-5) << "device " << d;
  }
  if (count < 2) std::printf("[   NOTE   ] one device: the two-device case ran on device 0 only\n");
  CUDA_OK(cudaSetDevice(0));
  try {
    Context missing(Backend::cuda, count);
    ADD_FAILURE() << "a context of device " << count << " was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::device) << e.what();
  }
}

}  // namespace

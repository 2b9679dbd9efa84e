// Strided batches on the GPU: every CUDA entry that runs a batch itself (batched = true), on
// every case of batched_test_support.hpp (odd shapes, batches of 1, 3 and 7, transposes,
// gaps between the matrices, a shared A, column-major, beta zero and not) and every dtype
// it declares, through the device API on a stream of our own, each matrix checked against
// the CPU reference; rung 19's stream-K over a batch; and the library's fallback for
// entries that run one product per launch.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <utility>
#include <string>
#include <vector>

#include "batched_test_support.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/event.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"
#include "gpu/gpu_test_support.hpp"

namespace gemmkit {
namespace {

using test::BatchCase;
using test::BatchData;

// Not cuda_wgmma_fixed, which compiles a kernel per shape: test_gpu_wgmma_tuned.cpp tests it.
std::vector<std::string> batched_cuda_entries() {
  std::vector<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda))
    if (e->batched && !e->compiles_per_shape) names.push_back(e->name);
  return names;
}

// Copies the case's operands to the device, runs `kernel` on them on `stream`, and copies C
// back into data.c.
void run_on_device(Context& ctx, Stream stream, const std::string& kernel, BatchData& data) {
  cuda::DeviceBuffer<unsigned char> a(data.a.size()), b(data.b.size()), c(data.c.size());
  a.copy_from_host(data.a.data(), data.a.size());
  b.copy_from_host(data.b.data(), data.b.size());
  c.copy_from_host(data.c.data(), data.c.size());
  // cudaMemcpy from pageable memory may return before its DMA lands (on the legacy stream),
  // and the test's non-blocking stream does not wait for it: without this, the NaNs that
  // poison C could arrive after the kernel wrote it (seen once on the H200).
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  GemmProblem p = data.problem;
  p.a = a.data(), p.b = b.data(), p.c = c.data();
  GemmOptions options;
  options.kernel = kernel;
  gemm(ctx, p, stream, options);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  c.copy_to_host(data.c.data(), data.c.size());
}

// Runs the cases that entry e accepts, for each of its dtypes; returns how many ran.
int run_cases(const KernelEntry& e, const std::vector<BatchCase>& cases) {
  // The stream outlives the context, whose pool frees its workspace on it.
  const cuda::OwnStream stream;  // nothing relies on the legacy default stream
  Context ctx(Backend::cuda);
  std::uint64_t seed = std::hash<std::string>{}(e.name);
  int ran = 0, refused = 0;
  for (DType dtype : e.dtypes)
    for (const BatchCase& bc : cases) {
      BatchData data(bc, dtype, ++seed);
      if (e.rejects(as_row_major(data.problem))) {  // e.g. rows not on 16 bytes for TMA
        ++refused;
        continue;
      }
      ++ran;
      run_on_device(ctx, stream.get(), e.name, data);
      if (::testing::Test::HasFatalFailure()) return ran;
      EXPECT_TRUE(data.check(e.accuracy)) << e.name;
    }
  std::cout << "[   NOTE   ] " << e.name << (e.batched ? " (batched)" : " (matrix by matrix)")
            << ": " << ran << " cases run, " << refused << " refused by the kernel" << std::endl;
  return ran;
}

class GpuBatchedKernel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEVICE();
    entry_ = &gemm_registry().get(GetParam());
    if (current_compute_capability() < entry_->min_compute_capability)
      GTEST_SKIP() << entry_->name << " needs compute capability "
                   << entry_->min_compute_capability;
  }
  const KernelEntry* entry_ = nullptr;
};

TEST_P(GpuBatchedKernel, EveryMatrixMatchesTheReference) {
  EXPECT_GT(run_cases(*entry_, test::batch_cases()), 0) << entry_->name << " refused every case";
}

// 24 matrices of 2 x 4 cluster tiles of rung 19: 96 tiles on the 66 clusters of a 132-SM
// GPU leave a last round of 30, which rung 19 shares out by K-blocks (stream-K) across the
// boundaries between matrices. Every batched entry runs it; Freivalds checks it.
TEST_P(GpuBatchedKernel, ManyTilesAcrossMatrices) {
  std::vector<BatchCase> cases = {
      {.m = 256, .n = 1024, .k = 512, .batch = 24, .verify = VerifyMode::freivalds},
      {.m = 256, .n = 1000, .k = 520, .batch = 24, .tb = true, .gap = 1, .beta_zero = true,
       .verify = VerifyMode::freivalds},
  };
  EXPECT_GT(run_cases(*entry_, cases), 0) << entry_->name << " refused every case";
}

// More matrices than a grid's z dimension holds (65535): the SIMT rungs step through them.
TEST_P(GpuBatchedKernel, MoreMatricesThanTheGridHasZ) {
  const std::vector<BatchCase> cases = {
      {.m = 5, .n = 3, .k = 7, .batch = 70001, .ta = true, .layout = Layout::col_major}};
  EXPECT_GT(run_cases(*entry_, cases), 0) << entry_->name << " refused every case";
}

// BatchData::check fails on each planted fault (BatchData::faults) of the kernel's real
// results, every dtype it declares, on integer values (-9..9).
TEST_P(GpuBatchedKernel, CatchesPlantedFaults) {
  const cuda::OwnStream stream;
  Context ctx(Backend::cuda);
  std::vector<BatchCase> cases = {test::batch_cases()[1], test::batch_cases()[3], test::batch_cases()[8]};
  int ran = 0;
  for (BatchCase& bc : cases) bc.integers = true;
  for (DType dtype : entry_->dtypes)
    for (const BatchCase& bc : cases) {
      BatchData data(bc, dtype, 99);
      if (entry_->rejects(as_row_major(data.problem))) continue;
      SCOPED_TRACE(entry_->name + " " + bc.describe(dtype));
      run_on_device(ctx, stream.get(), entry_->name, data);
      if (::testing::Test::HasFatalFailure()) return;
      const auto faults = data.faults();
      EXPECT_EQ(test::expect_faults_caught(test::output_bytes(data.c), [&] { return data.check(entry_->accuracy); },
                                           faults),
                int(faults.size()));
      ++ran;
    }
  EXPECT_GT(ran, 0) << entry_->name << " refused every case";
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuBatchedKernel, ::testing::ValuesIn(batched_cuda_entries()),
                         [](const auto& param_info) { return param_info.param; });

TEST(GpuBatched, TheReferencesTheTunedSimtRungAndRung19RunBatchesThemselves) {
  for (const char* name : {"cuda_cublas", "cuda_cublas_tf32", "cuda_cublas_bf16",
                           "cuda_cublas_f16", "cuda_autotuned", "cuda_wgmma_ws"})
    EXPECT_TRUE(gemm_registry().get(name).batched) << name;
}

// Entries that run one product per launch get the batch matrix by matrix from the library.
TEST(GpuBatched, EntriesWithoutBatchesRunThemMatrixByMatrix) {
  SKIP_WITHOUT_DEVICE();
  for (const char* name : {"cuda_naive", "cuda_wgmma_tma"}) {
    const KernelEntry& e = gemm_registry().get(name);
    ASSERT_FALSE(e.batched) << name;
    if (current_compute_capability() < e.min_compute_capability) continue;
    std::vector<BatchCase> cases = test::batch_cases();
    cases.resize(4);
    EXPECT_GT(run_cases(e, cases), 0) << name << " refused every case";
  }
}

// Not a test: the batched bf16 figures (rung 19 against cuBLAS's strided-batched
// call, paired). Run with --gtest_also_run_disabled_tests --gtest_filter='*BatchedTiming*'.
TEST(GpuBatched, DISABLED_BatchedTiming) {
  SKIP_WITHOUT_DEVICE();
  if (current_compute_capability() < 90) GTEST_SKIP() << "rung 19 needs sm_90";
  const cuda::OwnStream stream;  // nothing relies on the legacy default stream
  Context ctx(Backend::cuda);
  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  for (const auto& [batch, size] : {std::pair<std::int64_t, std::int64_t>{64, 512}, {8, 2048}}) {
    const std::int64_t span = size * size;
    cuda::DeviceBuffer<std::uint16_t> a(std::size_t(batch * span)), b(std::size_t(batch * span)),
        c(std::size_t(batch * span));
    ASSERT_EQ(cudaMemset(a.data(), 0x3c, a.size() * 2), cudaSuccess);  // small bf16 values
    ASSERT_EQ(cudaMemset(b.data(), 0x3c, b.size() * 2), cudaSuccess);
    GemmProblem p;
    p.dtype = DType::bf16;
    p.m = p.n = p.k = size;
    p.lda = p.ldb = p.ldc = size;
    p.a = a.data(), p.b = b.data(), p.c = c.data();
    p.batch = batch;
    p.stride_a = p.stride_b = p.stride_c = span;
    const auto time_ms = [&](const char* kernel) {
      GemmOptions options;
      options.kernel = kernel;
      gemm(ctx, p, stream.get(), options);  // warm
      constexpr int kReps = 20;
      cudaEventRecord(start, stream.get());
      for (int r = 0; r < kReps; ++r) gemm(ctx, p, stream.get(), options);
      cudaEventRecord(stop, stream.get());
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      return double(ms) / kReps;
    };
    std::vector<double> ours, theirs;
    for (int round = 0; round < 5; ++round) {  // paired: alternate the two
      ours.push_back(time_ms("cuda_wgmma_ws"));
      theirs.push_back(time_ms("cuda_cublas_bf16"));
    }
    std::sort(ours.begin(), ours.end());
    std::sort(theirs.begin(), theirs.end());
    const auto tflops = [&](double ms) { return p.flops() / (ms * 1e-3) / 1e12; };
    std::cout << "[   NOTE   ] bf16 " << batch << " x " << size << "^3 (medians): cuda_wgmma_ws "
              << ours[2] << " ms (" << tflops(ours[2]) << " TFLOP/s), cuda_cublas_bf16 "
              << theirs[2] << " ms (" << tflops(theirs[2]) << " TFLOP/s): "
              << 100.0 * theirs[2] / ours[2] << "% of cuBLAS" << std::endl;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

}  // namespace
}  // namespace gemmkit

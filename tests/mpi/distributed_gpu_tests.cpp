// The distributed part's CUDA backend (device blocks, SUMMA over NCCL, walks on each rank's
// GPU) under mpirun, against the single-process GPU paths: gemmkit::gemm on the CUDA backend
// and gemmkit::count_walks. NCCL refuses two ranks on one GPU, so on a one-GPU machine this
// runs as `mpirun -np 1` (a 1 x 1 grid; the code is the one for any P x Q). Every test skips
// itself, visibly, without a CUDA device or without NCCL in the build.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <string>
#include <vector>

#include "gemmkit/device.hpp"
#include "gemmkit/distributed.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/verify.hpp"
#include "mpi/mpi_test_support.hpp"

namespace gemmkit::dist {
namespace {

#define SKIP_WITHOUT_GPU()                                                                  \
  do {                                                                                      \
    if (!nccl_available()) GTEST_SKIP() << "this build has no NCCL (GEMMKIT_NCCL)";         \
    if (!cuda_device_available()) GTEST_SKIP() << no_device_message();                      \
  } while (0)

std::vector<double> as_doubles(const AnyMatrix& m) {
  return std::visit(
      [](const auto& x) {
        std::vector<double> out;
        for (std::int64_t i = 0; i < x.rows(); ++i)
          for (std::int64_t j = 0; j < x.cols(); ++j) out.push_back(double(x(i, j)));
        return out;
      },
      m);
}

struct Case {
  std::int64_t m, n, k;
  int mb, nb, kb;
};

// The seconds `call` returns on its first call (what a command-line run waits for: the
// kernels' first loads, the allocations) and the median of `reps` calls after it.
struct CallTimes {
  double first = 0, median = 0;
};
CallTimes time_calls(const std::function<double()>& call, int reps) {
  CallTimes t;
  t.first = call();
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) seconds.push_back(call());
  std::sort(seconds.begin(), seconds.end());
  t.median = seconds[seconds.size() / 2];
  return t;
}

// SUMMA on device blocks against one GPU's GEMM of the whole matrices (the host API on the
// CUDA backend, auto kernel): within the dtype's tolerance of it, and passing verify().
void check_summa_gpu(const GpuGrid& gpus, DType dtype, const Case& s, double alpha, double beta,
                     const SummaOptions& summa_options) {
  const ProcessGrid& grid = gpus.grid();
  const DType c_dtype = dtype == DType::f16 || dtype == DType::bf16 ? DType::f32 : dtype;
  const AnyMatrix a = random_matrix(s.m, s.k, dtype, {}, 1);
  const AnyMatrix b = random_matrix(s.k, s.n, dtype, {}, 2);
  const AnyMatrix c0 = random_matrix(s.m, s.n, c_dtype, {}, 3);
  const DistMatrix da = scatter(gpus, &a, s.mb, s.kb);
  const DistMatrix db = scatter(gpus, &b, s.kb, s.nb);
  DistMatrix dc = scatter(gpus, &c0, s.mb, s.nb);
  const std::string kernel = summa(alpha, da, db, beta, dc, summa_options);
  AnyMatrix got = gather(dc);
  if (world_rank() != 0) return;
  const std::string what = grid_name(grid.shape()) + " " + std::string(dtype_name(dtype)) + " " +
                           std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                           " blocks " + std::to_string(s.mb) + "," + std::to_string(s.nb) + "," +
                           std::to_string(s.kb) + " alpha " + std::to_string(alpha) + " beta " +
                           std::to_string(beta) + " local_k " + std::to_string(summa_options.local_k) +
                           (summa_options.read_in_place ? "" : " broadcast") + " on " + kernel;
  AnyMatrix single = c0;
  GemmOptions options;
  options.backend = Backend::cuda;
  const std::string single_kernel = gemm(make_problem(a, false, b, false, single, alpha, beta), options);
  const GemmProblem p = make_problem(a, false, b, false, got, alpha, beta);
  if (p.flops() < 1e8) {  // the exact check on the CPU; larger cases against one GPU only
    const VerifyResult check = verify(p, data_of(c0), VerifyMode::full);
    EXPECT_TRUE(check.passed || check.within_rounding) << what << ": " << check.detail;
  }
  const double error = relative_frobenius_error(c_dtype, p.c, s.m, s.n, p.ldc, as_doubles(single));
  EXPECT_LE(error, tolerance(dtype, s.k)) << what << " against one GPU's " << single_kernel;
}

TEST(DistributedGpu, SummaOnDeviceBlocksEqualsOneGpu) {
  SKIP_WITHOUT_GPU();
  // Blocks that divide none of the orders (a last, narrower panel), a panel wider than K, and
  // sizes where the tuned tensor-core kernels run.
  const std::vector<Case> cases = {{37, 53, 41, 5, 7, 4}, {37, 53, 3, 6, 8, 4}, {301, 257, 515, 64, 96, 128},
                                   {1024, 1000, 1536, 256, 256, 256}};
  // Panels read in place (one rank per process row and column, as here), and every panel
  // copied and broadcast over NCCL, one at a time and grouped into wider local GEMMs.
  SummaOptions in_place, broadcast, one_panel;
  broadcast.read_in_place = one_panel.read_in_place = false;
  broadcast.local_k = 200;
  one_panel.local_k = 1;
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  for (const DType dtype : {DType::f64, DType::f32, DType::bf16, DType::f16})
    for (const Case& s : cases) {
      check_summa_gpu(gpus, dtype, s, 1.0, 0.0, in_place);
      check_summa_gpu(gpus, dtype, s, 2.0, -1.0, in_place);
      check_summa_gpu(gpus, dtype, s, 2.0, -1.0, broadcast);
      check_summa_gpu(gpus, dtype, s, 1.0, 0.5, one_panel);
    }
}

TEST(DistributedGpu, ScatterGatherRoundTrip) {
  SKIP_WITHOUT_GPU();
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  for (const DType dtype : {DType::bf16, DType::f64, DType::i32}) {
    const AnyMatrix a = random_matrix(45, 31, dtype, Distribution::parse(is_integer(dtype) ? "ints:-99:99" : "uniform"), 7);
    const DistMatrix d = scatter(gpus, &a, 4, 9, true);  // the transpose
    EXPECT_EQ(d.backend(), Backend::cuda);
    EXPECT_EQ(d.device_ld() * std::int64_t(dtype_size(dtype)) % 16, 0);
    const AnyMatrix back = gather(d);
    if (world_rank() != 0) continue;
    ASSERT_EQ(rows_of(back), 31);
    ASSERT_EQ(cols_of(back), 45);
    const std::vector<double> x = as_doubles(a), y = as_doubles(back);
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < 45; ++i)
      for (std::int64_t j = 0; j < 31; ++j) wrong += x[std::size_t(i * 31 + j)] != y[std::size_t(j * 45 + i)];
    EXPECT_EQ(wrong, 0) << dtype_name(dtype);
  }
}

TEST(DistributedGpu, MismatchedOperandsAreAgreedUsageErrors) {
  SKIP_WITHOUT_GPU();
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  const AnyMatrix a = random_matrix(10, 12, DType::bf16, {}, 1);
  const AnyMatrix b = random_matrix(12, 8, DType::bf16, {}, 2);
  const DistMatrix da = scatter(gpus, &a, 4, 4), db = scatter(gpus, &b, 4, 4);
  DistMatrix c_bf16(gpus, DType::bf16, 10, 8, 4, 4);
  DistMatrix c_f64(gpus, DType::f64, 10, 8, 4, 4);
  DistMatrix c_host(grid, DType::f64, 10, 8, 4, 4);
  for (DistMatrix* c : {&c_f64, &c_host}) {
    try {
      summa(1.0, da, db, 0.0, *c);
      ADD_FAILURE() << "no error";
    } catch (const RankError& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    }
  }
  SummaOptions cpu;
  cpu.backend = Backend::cpu;
  EXPECT_THROW(summa(1.0, da, db, 0.0, c_bf16, cpu), RankError);
}

// cuBLASMp (in a build that found it) on the same blocks and grid gives summa()'s C, within
// the tolerance; then both are timed, twice each (the first call sets up), at a size where the
// GPU is busy, and summa with every panel broadcast: the reference figures (printed by rank 0).
TEST(DistributedGpu, SummaTimedBesideCublasMp) {
  SKIP_WITHOUT_GPU();
  const bool reference = cublasmp_available();
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  struct Run {
    DType dtype;
    Case s;
    bool timed;
  };
  const std::vector<Run> runs = {{DType::f64, {37, 53, 41, 5, 7, 4}, false},
                                 {DType::bf16, {301, 257, 515, 64, 96, 128}, false},
                                 {DType::bf16, {8192, 8192, 8192, 2048, 2048, 2048}, true},
                                 {DType::f64, {8192, 8192, 8192, 2048, 2048, 2048}, true}};
  for (const Run& run : runs) {
    const Case& s = run.s;
    const DType c_dtype = run.dtype == DType::bf16 ? DType::f32 : run.dtype;
    const AnyMatrix a = random_matrix(s.m, s.k, run.dtype, {}, 1);
    const AnyMatrix b = random_matrix(s.k, s.n, run.dtype, {}, 2);
    const AnyMatrix c0 = random_matrix(s.m, s.n, c_dtype, {}, 3);
    const DistMatrix da = scatter(gpus, &a, s.mb, s.kb), db = scatter(gpus, &b, s.kb, s.nb);
    DistMatrix ours = scatter(gpus, &c0, s.mb, s.nb), theirs = scatter(gpus, &c0, s.mb, s.nb);
    const std::string kernel = summa(1.0, da, db, 0.5, ours);
    if (reference) cublasmp_matmul(1.0, da, db, 0.5, theirs);
    const AnyMatrix got_ours = gather(ours), got_theirs = gather(theirs);
    // Timed as the bench does: a warm-up call, then the median of five (beta 0: C is only written).
    const auto time_summa = [&](const SummaOptions& o) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      summa(1.0, da, db, 0.0, ours, o);
      MPI_Barrier(MPI_COMM_WORLD);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double summa_seconds = 0, broadcast_seconds = 0, cublasmp_seconds = 0;
    std::string broadcast_kernel;
    if (run.timed) {
      summa_seconds = time_calls([&] { return time_summa({}); }, 5).median;
      SummaOptions broadcast;  // the NCCL path, as a grid of several GPUs takes it
      broadcast.read_in_place = false;
      broadcast_seconds = time_calls([&] { return time_summa(broadcast); }, 5).median;
      broadcast_kernel = summa(1.0, da, db, 0.0, ours, broadcast);
      if (reference)
        cublasmp_seconds = time_calls([&] { return cublasmp_matmul(1.0, da, db, 0.0, theirs); }, 5).median;
    }
    if (world_rank() != 0) continue;
    const std::string what = std::string(dtype_name(run.dtype)) + " " + std::to_string(s.m) + "x" +
                             std::to_string(s.n) + "x" + std::to_string(s.k) + " blocks " + std::to_string(s.mb);
    const double error = relative_frobenius_error(c_dtype, data_of(got_ours), s.m, s.n, s.n, as_doubles(got_theirs));
    if (reference) {
      EXPECT_LE(error, tolerance(run.dtype, s.k)) << what << ": summa against cuBLASMp";
    }
    if (run.timed) {
      const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
      std::printf("timing %s on %s (median of 5 after a warm-up): summa %.4f s (%.1f TFLOP/s, %s); with every "
                  "panel broadcast over NCCL %.4f s (%.1f TFLOP/s, %s)\n",
                  what.c_str(), grid_name(grid.shape()).c_str(), summa_seconds, flops / summa_seconds / 1e12,
                  kernel.c_str(), broadcast_seconds, flops / broadcast_seconds / 1e12, broadcast_kernel.c_str());
      if (reference)
        std::printf("reference: cublasMpMatmul %.4f s (%.1f TFLOP/s): summa at %.0f%% of cuBLASMp\n",
                    cublasmp_seconds, flops / cublasmp_seconds / 1e12, 100.0 * cublasmp_seconds / summa_seconds);
      else
        std::printf("reference: no cuBLASMp in this build (GEMMKIT_CUBLASMP)\n");
    }
  }
}

// Distributed exact walks on the GPU against the single-process engine (GPU, and CPU), entry
// by entry, on a weighted graph with negative weights whose long walks need many primes.
TEST(DistributedGpu, WalksEqualSingleProcess) {
  SKIP_WITHOUT_GPU();
  std::vector<Edge> edges;
  std::uint64_t state = 777;
  const auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  const std::int64_t n = 300;
  for (int e = 0; e < 1200; ++e)
    edges.push_back({std::int64_t(next() % n), std::int64_t(next() % n), std::int64_t(next() % 5) - 2});
  const Graph graph = graph_from_edges(n, edges);
  DistWalkOptions options;
  options.backend = WalkBackend::cuda;
  // Rank 0 gathers and rebuilds in passes of 37 rows (the last one shorter), or as it chooses.
  for (const std::int64_t gather_rows : {0, 37})
    for (const int length : {1, 7, 40, 64}) {
      options.gather_rows = gather_rows;
      const WalkCounts got = count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, length, options);
      if (world_rank() != 0) continue;
      WalkQuery query;
      query.length = length;
      query.method = WalkMethod::dense;
      query.backend = WalkBackend::cuda;
      const WalkCounts single = gemmkit::count_walks(graph, query);
      query.backend = WalkBackend::cpu;
      const WalkCounts cpu = gemmkit::count_walks(graph, query);
      ASSERT_EQ(got.rows(), n);
      ASSERT_EQ(got.cols(), n);
      EXPECT_EQ(got.primes, single.primes) << got.method;
      std::int64_t wrong = 0, wrong_cpu = 0;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          wrong += !(got.at(0, i, j) == single.at(0, i, j));
          wrong_cpu += !(got.at(0, i, j) == cpu.at(0, i, j));
        }
      EXPECT_EQ(wrong, 0) << "length " << length << ", gather_rows " << gather_rows << ", " << got.method;
      EXPECT_EQ(wrong_cpu, 0) << "length " << length << ", gather_rows " << gather_rows << ", " << got.method;
    }
}

// The walk table, timed: 4096 vertices, length 64, on this grid beside one process's
// GPU engine (printed by rank 0), and equal to it; each on its first call and as the median
// of three after it.
TEST(DistributedGpu, WalksTimedBesideSingleProcess) {
  SKIP_WITHOUT_GPU();
  std::vector<Edge> edges;
  std::uint64_t state = 4096;
  const auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  const std::int64_t n = 4096;
  for (std::int64_t e = 0; e < 4 * n; ++e) {
    const std::int64_t u = std::int64_t(next() % n), v = std::int64_t(next() % n);
    edges.push_back({u, v, 1});
    edges.push_back({v, u, 1});
  }
  const Graph graph = graph_from_edges(n, edges);
  DistWalkOptions options;
  options.backend = WalkBackend::cuda;
  WalkCounts got;
  // The previous call's table is freed before the clock starts (unmapping its pages is not
  // the next call's work).
  const CallTimes dist = time_calls([&] {
    got = WalkCounts{};
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    got = count_walks(MPI_COMM_WORLD, world_rank() == 0 ? &graph : nullptr, 64, options);
    MPI_Barrier(MPI_COMM_WORLD);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }, 3);
  if (world_rank() != 0) return;
  WalkQuery query;
  query.length = 64;
  query.method = WalkMethod::dense;
  query.backend = WalkBackend::cuda;
  WalkCounts single;
  const CallTimes one = time_calls([&] {
    single = WalkCounts{};
    const auto t0 = std::chrono::steady_clock::now();
    single = gemmkit::count_walks(graph, query);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }, 3);
  ASSERT_EQ(got.rows(), n);
  EXPECT_EQ(got.limbs, single.limbs);
  EXPECT_TRUE(got.words == single.words) << got.method;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::printf("timing walks 4096 vertices length 64 (%d primes), first call / median of 3 after it: %d processes "
              "%.3f / %.3f s (%s); one process's GPU engine %.3f / %.3f s (%s)\n",
              got.primes, size, dist.first, dist.median, got.method.c_str(), one.first, one.median,
              single.method.c_str());
}

}  // namespace
}  // namespace gemmkit::dist

int main(int argc, char** argv) { return gemmkit::dist::run_mpi_tests(argc, argv); }

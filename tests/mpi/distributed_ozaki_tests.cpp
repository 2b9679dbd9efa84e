// The Ozaki emulation with its moduli over the ranks (dist::ozaki_gemm, and the driver under
// it, ozaki_detail::ozaki_gemm_over_ranks) under mpirun, against the single-process emulation
// (gemmkit::ozaki_gemm) on rank 0's GPU: bit for bit the same C. NCCL refuses two ranks on one
// GPU, so the driver also runs here with a transport of this file's own, MPI through host
// memory, with which several ranks share one GPU: `mpirun -np 3` runs those tests
// (distributed.ozaki_np3: a rank with no moduli, uneven shares, many passes), `-np 1` all of
// them. Every test skips itself, visibly, without a CUDA device (or, over NCCL, without NCCL
// in the build).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "ops/ozaki/ozaki_ranks.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/distributed.hpp"
#include "gemmkit/ozaki.hpp"
#include "mpi/mpi_test_support.hpp"

namespace gemmkit::dist {
namespace {

#define SKIP_WITHOUT_DEVICE() \
  if (!cuda_device_available()) GTEST_SKIP() << no_device_message()

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// The transport of the tests that share a GPU: every transfer synchronises its stream and
// goes through host memory over MPI.
class HostExchange final : public ozaki_detail::OzakiExchange {
 public:
  int rank() const override { return world_rank(); }
  int size() const override { return world_size(); }
  void agree(const std::function<void()>& step) override { collective(MPI_COMM_WORLD, step); }
  void must_succeed(const std::function<void()>& work) override {
    try {
      work();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d: %s\n", rank(), e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  void share(std::int64_t* values, int count) override { MPI_Bcast(values, count, MPI_INT64_T, 0, MPI_COMM_WORLD); }
  void broadcast(void* data, std::size_t bytes, Stream stream) override {
    std::vector<char> host(bytes);
    check(cudaStreamSynchronize(stream));
    if (rank() == 0) check(cudaMemcpy(host.data(), data, bytes, cudaMemcpyDeviceToHost));
    MPI_Bcast(host.data(), int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank() != 0) check(cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  void gather(const void* own, void* all, const std::vector<std::size_t>& offset,
              const std::vector<std::size_t>& bytes, Stream stream) override {
    check(cudaStreamSynchronize(stream));
    if (rank() == 0) {
      for (int r = 1; r < size(); ++r) {
        std::vector<char> host(bytes[std::size_t(r)]);
        MPI_Recv(host.data(), int(host.size()), MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(cudaMemcpy(static_cast<char*>(all) + offset[std::size_t(r)], host.data(), host.size(),
                         cudaMemcpyHostToDevice));
      }
    } else {
      std::vector<char> host(bytes[std::size_t(rank())]);
      check(cudaMemcpy(host.data(), own, host.size(), cudaMemcpyDeviceToHost));
      MPI_Send(host.data(), int(host.size()), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }

 private:
  static void check(cudaError_t status) {
    if (status != cudaSuccess) throw Error(ErrorCategory::device, cudaGetErrorString(status));
  }
};

// Rank 0's operands of one case on its device: entries of both signs whose exponents spread
// over +-2^8 (the default plan takes extra bits for them), stored with leading dimensions
// beyond their widths, in the case's layout and transposes; C holds C0.
struct DeviceProblem {
  GemmProblem p;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  std::size_t c_bytes = 0;

  DeviceProblem(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, Layout layout, bool ta, bool tb,
                double alpha, double beta, std::uint64_t seed) {
    p.dtype = dtype, p.m = m, p.n = n, p.k = k, p.layout = layout, p.trans_a = ta, p.trans_b = tb;
    p.alpha = alpha, p.beta = beta;
    const bool rm = layout == Layout::row_major;
    // A stored matrix of rows x cols (as the layout stores it) with ld = its width + 3.
    const auto upload = [&](std::int64_t rows, std::int64_t cols, std::int64_t& ld) {
      ld = (rm ? cols : rows) + 3;
      const std::size_t count = std::size_t(ld * (rm ? rows : cols));
      std::vector<double> v(count);
      for (double& x : v) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const double u = double(seed >> 11) * 0x1p-53 * 2 - 1;  // [-1, 1)
        x = std::ldexp(u, int((seed >> 3) % 17) - 8);
      }
      void* d = nullptr;
      const std::size_t size = dtype_size(dtype);
      EXPECT_EQ(cudaMalloc(&d, count * size), cudaSuccess);
      if (dtype == DType::f64) {
        EXPECT_EQ(cudaMemcpy(d, v.data(), count * size, cudaMemcpyHostToDevice), cudaSuccess);
      } else {
        const std::vector<float> f(v.begin(), v.end());
        EXPECT_EQ(cudaMemcpy(d, f.data(), count * size, cudaMemcpyHostToDevice), cudaSuccess);
      }
      return std::pair{d, count * size};
    };
    a = upload(ta ? k : m, ta ? m : k, p.lda).first;
    b = upload(tb ? n : k, tb ? k : n, p.ldb).first;
    std::tie(c, c_bytes) = upload(m, n, p.ldc);
    p.a = a, p.b = b, p.c = c;
  }
  ~DeviceProblem() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  DeviceProblem(const DeviceProblem&) = delete;
  DeviceProblem& operator=(const DeviceProblem&) = delete;

  std::vector<char> c_bytes_now() const {
    std::vector<char> out(c_bytes);
    EXPECT_EQ(cudaMemcpy(out.data(), c, c_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  void set_c(const std::vector<char>& bytes) {
    EXPECT_EQ(cudaMemcpy(c, bytes.data(), c_bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
};

struct Shape {
  DType dtype;
  std::int64_t m, n, k;
  Layout layout;
  bool ta, tb;
  double alpha, beta;
  int moduli;
};

std::string describe(const Shape& s) {
  return std::string(dtype_name(s.dtype)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + (s.layout == Layout::row_major ? " row" : " col") + (s.ta ? " At" : " A") +
         (s.tb ? " Bt" : " B") + " alpha " + std::to_string(s.alpha) + " beta " + std::to_string(s.beta) +
         " moduli " + std::to_string(s.moduli);
}

// The case over the ranks (`run`, on every rank, given rank 0's problem), then on rank 0 by
// the single-process emulation from the same C0: the same plan, every byte of C the same
// (the gaps between C's rows too).
template <class Run>
void expect_same_as_one_process(const Shape& s, std::uint64_t seed, Run run) {
  SCOPED_TRACE(describe(s) + " on " + std::to_string(world_size()) + " ranks");
  const bool rank0 = world_rank() == 0;
  std::optional<DeviceProblem> d;
  if (rank0) d.emplace(s.dtype, s.m, s.n, s.k, s.layout, s.ta, s.tb, s.alpha, s.beta, seed);
  const std::vector<char> c0 = rank0 ? d->c_bytes_now() : std::vector<char>{};
  const OzakiPlan spread = run(rank0 ? d->p : GemmProblem{}, s.moduli);
  int plan[2] = {spread.moduli, spread.bits};  // every rank's plan is rank 0's
  MPI_Bcast(plan, 2, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(spread.moduli, plan[0]);
  EXPECT_EQ(spread.bits, plan[1]);
  if (!rank0) return;
  const std::vector<char> got = d->c_bytes_now();
  d->set_c(c0);
  Context ctx(Backend::cuda);
  const std::size_t bytes = ozaki_gemm_workspace_bytes(ctx, d->p, s.moduli);
  void* workspace = nullptr;
  ASSERT_EQ(cudaMalloc(&workspace, std::max<std::size_t>(bytes, 1)), cudaSuccess);
  const OzakiPlan single = ozaki_gemm(ctx, d->p, nullptr, Workspace{workspace, bytes}, s.moduli);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(workspace);
  EXPECT_EQ(single.moduli, spread.moduli);
  EXPECT_EQ(single.bits, spread.bits);
  const std::vector<char> want = d->c_bytes_now();
  ASSERT_EQ(got.size(), want.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
  EXPECT_EQ(differ, 0u) << "bytes of C differ";
}

// Odd sizes, every layout and transpose, alpha and beta, the default plan and chosen moduli
// (2: fewer than the ranks of distributed.ozaki_np3, one of which then has none), f64 and f32.
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (Layout layout : {Layout::row_major, Layout::col_major})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) out.push_back({DType::f64, 77, 65, 300, layout, ta, tb, 1.0, 0.0, 0});
  out.push_back({DType::f64, 130, 47, 513, Layout::row_major, false, false, -2.0, 0.5, 7});
  out.push_back({DType::f64, 61, 33, 90, Layout::col_major, true, false, 1.5, 1.0, 2});
  out.push_back({DType::f64, 40, 50, 17, Layout::row_major, false, true, 1.0, 0.0, 19});
  out.push_back({DType::f32, 99, 71, 250, Layout::row_major, false, false, 1.0, 0.0, 0});
  out.push_back({DType::f32, 64, 48, 129, Layout::col_major, true, true, 0.5, -1.0, 3});
  return out;
}

// Streams of the current device for the driver's two, destroyed with it.
struct TwoStreams {
  cudaStream_t compute = nullptr, comm = nullptr;
  TwoStreams() {
    EXPECT_EQ(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), cudaSuccess);
    EXPECT_EQ(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking), cudaSuccess);
  }
  ~TwoStreams() {
    cudaStreamDestroy(compute);
    cudaStreamDestroy(comm);
  }
};

// The driver through host memory, every rank on device 0: passes of 16 rows (several per
// case, so that both of rank 0's buffers of residues are reused while the other is gathered),
// and the default passes.
TEST(DistributedOzaki, ThroughHostMemoryEqualsOneProcess) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda, 0);
  const TwoStreams streams;
  HostExchange exchange;
  std::uint64_t seed = 11;
  for (const std::int64_t pass_rows : {16, 0})
    for (const Shape& s : shapes())
      expect_same_as_one_process(s, ++seed, [&](const GemmProblem& p, int moduli) {
        return ozaki_detail::ozaki_gemm_over_ranks(ctx, p, moduli, exchange, streams.compute, streams.comm,
                                                   pass_rows);
      });
}

// No product (k = 0, alpha = 0) and empty C: rank 0 alone scales C0, the others take part.
TEST(DistributedOzaki, ThroughHostMemoryWithoutAProduct) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda, 0);
  const TwoStreams streams;
  HostExchange exchange;
  for (const Shape& s : {Shape{DType::f64, 20, 30, 0, Layout::row_major, false, false, 1.0, 2.0, 0},
                         Shape{DType::f64, 20, 30, 40, Layout::col_major, true, false, 0.0, -1.0, 0},
                         Shape{DType::f32, 0, 30, 40, Layout::row_major, false, false, 1.0, 1.0, 0}})
    expect_same_as_one_process(s, 5, [&](const GemmProblem& p, int moduli) {
      return ozaki_detail::ozaki_gemm_over_ranks(ctx, p, moduli, exchange, streams.compute, streams.comm);
    });
}

// Rank 0's bad problem (an Inf in op(A), a dtype the emulation does not take, too many
// moduli) is one agreed usage error on every rank, naming rank 0.
TEST(DistributedOzaki, RankZerosBadProblemIsAnAgreedUsageError) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda, 0);
  const TwoStreams streams;
  HostExchange exchange;
  const bool rank0 = world_rank() == 0;
  std::optional<DeviceProblem> d;
  if (rank0) {
    d.emplace(DType::f64, 30, 20, 40, Layout::row_major, false, false, 1.0, 0.0, 3);
    const double inf = INFINITY;
    EXPECT_EQ(cudaMemcpy(static_cast<double*>(d->a) + 7 * d->p.lda + 5, &inf, sizeof inf, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  const auto expect_error = [&](const GemmProblem& p, int moduli, const std::string& says) {
    try {
      ozaki_detail::ozaki_gemm_over_ranks(ctx, p, moduli, exchange, streams.compute, streams.comm);
      ADD_FAILURE() << "no error; expected " << says;
    } catch (const RankError& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      EXPECT_EQ(e.failed_rank(), 0);
      EXPECT_NE(std::string(e.what()).find("rank 0: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_error(rank0 ? d->p : GemmProblem{}, 0, "op(A) has an Inf or NaN in row 7");
  GemmProblem wrong = rank0 ? d->p : GemmProblem{};
  wrong.dtype = DType::i32;
  expect_error(wrong, 0, "f64 or f32 inputs");
  expect_error(rank0 ? d->p : GemmProblem{}, 99, "2 to");
}

// The library's entry over NCCL (a GpuGrid, one rank per GPU): the same bits as one process.
TEST(DistributedOzaki, OverNcclEqualsOneProcess) {
  SKIP_WITHOUT_DEVICE();
  if (!nccl_available()) GTEST_SKIP() << "this build has no NCCL (GEMMKIT_NCCL)";
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  std::uint64_t seed = 101;
  for (const Shape& s : shapes())
    expect_same_as_one_process(s, ++seed,
                               [&](const GemmProblem& p, int moduli) { return ozaki_gemm(gpus, p, moduli); });
}

// An FP64 product of 8192^3 over NCCL beside one process's emulation on rank 0's GPU (both
// on device matrices, median of 3 after a warm-up; printed by rank 0), and equal to it.
TEST(DistributedOzaki, OverNcclTimedBesideOneProcess) {
  SKIP_WITHOUT_DEVICE();
  if (!nccl_available()) GTEST_SKIP() << "this build has no NCCL (GEMMKIT_NCCL)";
  ProcessGrid grid(MPI_COMM_WORLD);
  GpuGrid gpus(grid);
  const std::int64_t n = 8192;
  const bool rank0 = world_rank() == 0;
  std::optional<DeviceProblem> d;
  if (rank0) d.emplace(DType::f64, n, n, n, Layout::row_major, false, false, 1.0, 0.0, 77);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> spread_s, single_s;
  OzakiPlan plan;
  for (int rep = 0; rep < 4; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    plan = ozaki_gemm(gpus, rank0 ? d->p : GemmProblem{}, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rep > 0) spread_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!rank0) return;
  const std::vector<char> got = d->c_bytes_now();
  Context& ctx = gpus.context();
  const std::size_t bytes = ozaki_gemm_workspace_bytes(ctx, d->p);
  void* workspace = nullptr;
  ASSERT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
  for (int rep = 0; rep < 4; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    ozaki_gemm(ctx, d->p, nullptr, Workspace{workspace, bytes});
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (rep > 0) single_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  cudaFree(workspace);
  EXPECT_TRUE(d->c_bytes_now() == got) << "bytes of C differ";
  std::printf("timing ozaki f64 %lldx%lldx%lld (%s): %d processes %.1f ms; one process %.1f ms\n", (long long)n,
              (long long)n, (long long)n, plan.describe().c_str(), world_size(), 1e3 * median(spread_s),
              1e3 * median(single_s));
}

}  // namespace
}  // namespace gemmkit::dist

int main(int argc, char** argv) { return gemmkit::dist::run_mpi_tests(argc, argv); }

// GPU tests: run only where a CUDA device is present; everywhere else each test is
// skipped, visibly, with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cuda/device_buffer.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

using namespace gemmkit;

namespace {

#define SKIP_WITHOUT_DEVICE()                                                   \
  do {                                                                          \
    if (!cuda_device_available())                                               \
      GTEST_SKIP() << "no CUDA device: " << query_devices().message;            \
  } while (0)

struct Shape {
  std::int64_t m, n, k;
};

// DESIGN.md's edge shapes: 1, around common tiles (32, 64, 128), primes, tall-skinny,
// K smaller than a tile and K not a multiple of one.
const Shape kEdgeShapes[] = {{1, 1, 1},     {1, 37, 5},     {31, 1, 17},   {32, 32, 32},
                             {33, 65, 31},  {63, 64, 65},   {127, 129, 3}, {128, 128, 128},
                             {1000, 3, 7},  {3, 1000, 257}, {67, 131, 509}};

template <class T>
void check_kernel(const KernelEntry& e, const Shape& s, bool ta, bool tb, std::uint64_t seed) {
  const DType dt = dtype_of<T>;
  const Distribution dist = Distribution::parse(is_integer(dt) ? "ints:-9:9" : "uniform");
  // Leading dimensions larger than the widths.
  const std::int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
  const std::int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
  Matrix<T> a(a_rows, a_cols, a_cols + 3), b(b_rows, b_cols, b_cols + 5), c(s.m, s.n, s.n + 1);
  fill_random<T>(a.view(), dist, seed);
  fill_random<T>(b.view(), dist, seed + 1);
  const bool use_beta = seed % 2 == 1;
  if (use_beta) {
    fill_random<T>(c.view(), dist, seed + 2);
  } else if constexpr (!std::is_integral_v<T>) {
    // beta == 0: C is write-only, so NaN already there must not leak into the result.
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) c(i, j) = std::numeric_limits<T>::quiet_NaN();
  }
  const Matrix<T> c_before = c;
  const double alpha = is_integer(dt) ? 3.0 : 0.75, beta = use_beta ? (is_integer(dt) ? -2.0 : 1.25) : 0.0;
  GemmProblem p = make_problem<T>(a.view(), ta, b.view(), tb, c.view(), alpha, beta);
  GemmOptions o;
  o.kernel = e.name;
  if (e.rejects(p)) return;  // the kernel declares it does not take this problem
  gemm(p, o);
  const VerifyResult r = verify(p, c_before.data(), VerifyMode::full);
  EXPECT_TRUE(r.passed) << e.name << " " << p.shape_string() << " " << dtype_name(dt)
                        << ": error " << r.error << " > " << r.tolerance << " " << r.detail;
}

}  // namespace

TEST(GpuDevice, QueryReportsASaneDevice) {
  SKIP_WITHOUT_DEVICE();
  const DeviceQuery q = query_devices();
  ASSERT_FALSE(q.devices.empty());
  const DeviceInfo& d = q.devices.front();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.compute_capability(), 50);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_EQ(d.warp_size, 32);
  EXPECT_GE(d.max_threads_per_block, 512);
  EXPECT_GT(d.total_global_memory, std::size_t(1) << 30);
  EXPECT_GT(d.clock_khz, 100000);
  EXPECT_GT(d.fp32_peak_tflops(), 1.0);
  EXPECT_GT(d.memory_bandwidth_gbs(), 100.0);
  EXPECT_EQ(current_compute_capability(), d.compute_capability());
}

TEST(GpuDevice, OutOfMemorySaysHowMuchWasAskedAndIsFree) {
  SKIP_WITHOUT_DEVICE();
  try {
    cuda::DeviceBuffer<float> huge(std::size_t(1) << 48);  // 1 PiB
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::out_of_memory);
    const std::string msg = e.what();
    EXPECT_NE(msg.find(std::to_string(std::size_t(4) << 48)), std::string::npos) << msg;
    EXPECT_NE(msg.find("bytes free"), std::string::npos) << msg;
    EXPECT_NE(msg.find("N = "), std::string::npos) << msg;
  }
  // The failed allocation leaves the device usable.
  cuda::DeviceBuffer<float> small(1024);
  EXPECT_NE(small.data(), nullptr);
}

TEST(GpuKernels, EveryCudaKernelMatchesTheReferenceOnEdgeShapes) {
  SKIP_WITHOUT_DEVICE();
  const int cc = current_compute_capability();
  int checked = 0;
  for (const KernelEntry* e : Registry::instance().of_backend(Backend::cuda)) {
    if (cc < e->min_compute_capability) continue;
    std::uint64_t seed = 1;
    for (const Shape& s : kEdgeShapes)
      for (int t = 0; t < 4; ++t) {
        const bool ta = t & 1, tb = t & 2;
        if (e->supports(DType::f32)) check_kernel<float>(*e, s, ta, tb, seed++);
        if (e->supports(DType::f64)) check_kernel<double>(*e, s, ta, tb, seed++);
        if (e->supports(DType::i32)) check_kernel<std::int32_t>(*e, s, ta, tb, seed++);
        if (e->supports(DType::i64)) check_kernel<std::int64_t>(*e, s, ta, tb, seed++);
        ++checked;
      }
  }
  EXPECT_GT(checked, 0) << "no CUDA kernel could run on this device";
}

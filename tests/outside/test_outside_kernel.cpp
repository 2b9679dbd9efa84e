// A kernel of the calling program, added with register_kernel(): it runs through the host
// and device APIs like a built-in one, entries registered later leave earlier ones in place,
// malformed entries are refused, and registrations from several threads are safe.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"

using namespace gemmkit;

namespace {

std::atomic<int> outside_runs{0};

// What a reader's first kernel looks like: a triple loop on the row-major problem the
// library hands it (column-major problems arrive swapped).
template <class T>
void outside_run(const GemmProblem& p, const KernelLaunch&) {
  ++outside_runs;
  const auto* a = static_cast<const T*>(p.a);
  const auto* b = static_cast<const T*>(p.b);
  auto* c = static_cast<T*>(p.c);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) {
      T sum = 0;
      for (std::int64_t q = 0; q < p.k; ++q)
        sum += (p.trans_a ? a[q * p.lda + i] : a[i * p.lda + q]) *
               (p.trans_b ? b[j * p.ldb + q] : b[q * p.ldb + j]);
      T& out = c[i * p.ldc + j];
      out = T(p.alpha) * sum + (p.beta == 0 ? T(0) : T(p.beta) * out);
    }
}

// The test's kernel (f64), or with `f32` one of the many extra ones: f32, a dtype that the
// tests looping over every f64 or i64 CPU kernel do not run (they stay correct kernels).
KernelEntry outside_entry(std::string name, bool f32 = false) {
  KernelEntry e;
  e.name = std::move(name);
  e.backend = Backend::cpu;
  e.rung = 99;
  e.summary = "a test's own triple loop, registered from outside src/";
  e.dtypes = {f32 ? DType::f32 : DType::f64};
  e.run = f32 ? outside_run<float> : outside_run<double>;
  return e;
}

constexpr const char* kOutside = "test_outside_f64";

// Registers the test kernel once per process, and after it enough others that a vector of
// entries would have moved; returns the address cpu_naive had before.
const KernelEntry* register_once() {
  static const KernelEntry* naive_before = [] {
    const KernelEntry* naive = gemm_registry().find("cpu_naive");
    register_kernel(outside_entry(kOutside));
    for (int i = 0; i < 64; ++i)
      register_kernel(outside_entry("test_outside_filler_" + std::to_string(i), true));
    return naive;
  }();
  return naive_before;
}

Matrix<double> random_f64(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  return std::get<Matrix<double>>(random_matrix(rows, cols, DType::f64, Distribution::parse("normal"), seed));
}

void expect_near(const Matrix<double>& got, const Matrix<double>& want) {
  ASSERT_EQ(got.rows(), want.rows());
  for (std::int64_t i = 0; i < got.rows(); ++i)
    for (std::int64_t j = 0; j < got.cols(); ++j)
      ASSERT_NEAR(got(i, j), want(i, j), 1e-12 * (1 + std::abs(want(i, j)))) << i << ", " << j;
}

}  // namespace

TEST(OutsideKernel, EarlierEntriesStayInPlace) {
  const KernelEntry* naive_before = register_once();
  ASSERT_NE(naive_before, nullptr);
  EXPECT_EQ(gemm_registry().find("cpu_naive"), naive_before);
  const KernelEntry& outside = gemm_registry().get(kOutside);
  EXPECT_EQ(outside.backend, Backend::cpu);
  bool listed = false;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu)) listed |= e == &outside;
  EXPECT_TRUE(listed);
}

TEST(OutsideKernel, RunsThroughTheHostApi) {
  register_once();
  const Matrix<double> a = random_f64(7, 5, 1), b = random_f64(7, 4, 2);  // A^T B: 5x4, k = 7
  Matrix<double> c = random_f64(5, 4, 3), want = c;
  GemmProblem p = make_problem<double>(a.view(), true, b.view(), false, c.view(), 1.5, -0.5);
  const int before = outside_runs;
  EXPECT_EQ(gemm(p, {.kernel = kOutside}), kOutside);
  EXPECT_EQ(outside_runs, before + 1);
  GemmProblem reference = make_problem<double>(a.view(), true, b.view(), false, want.view(), 1.5, -0.5);
  EXPECT_EQ(gemm(reference, {.kernel = "cpu_naive"}), "cpu_naive");
  expect_near(c, want);
}

TEST(OutsideKernel, RunsThroughTheDeviceApiOnACpuContext) {
  register_once();
  Context ctx(Backend::cpu);
  // Column-major storage: the same buffers read as the transposes of row-major matrices.
  // C (6x3) = A (6x8) B^T with B stored 3x8, strided over a batch of 2.
  const std::int64_t m = 6, n = 3, k = 8, batch = 2;
  const Matrix<double> a = random_f64(batch, m * k, 4), b = random_f64(1, n * k, 5);
  Matrix<double> c = random_f64(batch, m * n, 6), want = c;
  GemmProblem p;
  p.dtype = DType::f64;
  p.layout = Layout::col_major;
  p.trans_b = true;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = 2.0;
  p.beta = 0.25;
  p.a = a.data();
  p.lda = m;
  p.b = b.data();
  p.ldb = n;
  p.c = c.data();
  p.ldc = m;
  p.batch = batch;
  p.stride_a = m * k;
  p.stride_b = 0;
  p.stride_c = m * n;
  const int before = outside_runs;
  EXPECT_EQ(gemm(ctx, p, nullptr, {.kernel = kOutside}).name, kOutside);
  EXPECT_EQ(outside_runs, before + batch);  // not batched itself: one run per product
  GemmProblem reference = p;
  reference.c = want.data();
  EXPECT_EQ(gemm(ctx, reference, nullptr, {.kernel = "cpu_naive"}).name, "cpu_naive");
  expect_near(c, want);
  // A column-major product computed by hand, for one element: C(i, j) of matrix 1.
  const std::int64_t i = 4, j = 2;
  double sum = 0;
  for (std::int64_t q = 0; q < k; ++q) sum += a.data()[m * k + i + q * m] * b.data()[j + q * n];
  const Matrix<double> c0 = random_f64(batch, m * n, 6);
  EXPECT_NEAR(c.data()[m * n + i + j * m], 2.0 * sum + 0.25 * c0.data()[m * n + i + j * m], 1e-12);
}

TEST(OutsideKernel, MalformedEntriesAreRefused) {
  register_once();
  auto refused = [](KernelEntry e, const std::string& why) {
    try {
      register_kernel(std::move(e));
      ADD_FAILURE() << "registered: " << why;
    } catch (const Error& error) {
      EXPECT_EQ(error.category(), ErrorCategory::usage);
      EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
    }
  };
  refused(outside_entry(""), "non-empty");
  refused(outside_entry("auto"), "not 'auto'");
  refused(outside_entry("cpu_naive"), "already registered");
  refused(outside_entry(kOutside), "already registered");
  KernelEntry no_run = outside_entry("test_no_run");
  no_run.run = nullptr;
  refused(no_run, "no run function");
  KernelEntry no_dtype = outside_entry("test_no_dtype");
  no_dtype.dtypes.clear();
  refused(no_dtype, "no dtype");
  KernelEntry no_summary = outside_entry("test_no_summary");
  no_summary.summary.clear();
  refused(no_summary, "no summary");
  KernelEntry cuda = outside_entry("test_cuda_no_cc");
  cuda.backend = Backend::cuda;
  refused(cuda, "min_compute_capability");
  for (const char* name : {"test_no_run", "test_no_dtype", "test_no_summary", "test_cuda_no_cc"})
    EXPECT_EQ(gemm_registry().find(name), nullptr) << name;
}

TEST(OutsideKernel, ConcurrentRegistrationsAndLookups) {
  register_once();
  const KernelEntry* blocked = gemm_registry().find("cpu_blocked");
  std::atomic<int> lookups_failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 25; ++i)
        register_kernel(outside_entry("test_thread_" + std::to_string(t) + "_" + std::to_string(i), true));
    });
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
        if (gemm_registry().find("cpu_blocked") != blocked) ++lookups_failed;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(lookups_failed, 0);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 25; ++i)
      EXPECT_NE(gemm_registry().find("test_thread_" + std::to_string(t) + "_" + std::to_string(i)), nullptr);
}

// auto never answers a problem with a kernel that computes in less precision than the
// problem's dtype, however high its priority: an f32 kernel that rounds its inputs to TF32
// is for tf32 problems only.
TEST(OutsideKernel, AutoNeverChoosesALowerAccuracyForTheDtype) {
  KernelEntry lower = outside_entry("test_outside_f32_as_tf32", true);
  lower.accuracy = DType::tf32;
  lower.auto_priority = 1000000;
  register_kernel(std::move(lower));
  Context ctx(Backend::cpu);
  GemmProblem p;
  p.m = p.n = p.k = 8;
  p.lda = p.ldb = p.ldc = 8;
  EXPECT_NE(choose_gemm_kernel(ctx, p).name, "test_outside_f32_as_tf32");
}

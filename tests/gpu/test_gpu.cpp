// GPU tests: run only where a CUDA device is present; everywhere else each test is
// skipped, visibly, with the reason.
//
// Every CUDA entry of the registry gets its own instance of the GpuKernel tests
// (gpu.Kernels/GpuKernel.EdgeShapes/cuda_naive, ...), so a new kernel is tested as soon as
// it is registered:
//   - EdgeShapes: the edge set of shapes (1; tile-1, tile, tile+1 for tiles 8..256; primes;
//     tall-skinny; K smaller than a tile; K not a multiple of the K tile), each with the four
//     transposes, leading dimensions wider than the matrices (odd ones, and multiples of 4
//     for vectorised paths; the padding holds poison), beta = 0 over a NaN-poisoned C or
//     random alpha and beta, every dtype the kernel declares, a fresh seed per case.
//   - LargeShape: 4097 x 3001 x 2049, plain and transposed, checked with Freivalds.
//   - MisalignedOperands: operands starting one element past an aligned address.
// The double reference on the CPU is what costs time here, so the edge shapes stay small.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "fault_injection.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/verify.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

struct Shape {
  std::int64_t m, n, k;
};

// The edge shapes, small enough that the double reference of ~20 kernels x 4
// transposes x their dtypes stays within seconds.
std::vector<Shape> edge_shapes() {
  std::vector<Shape> shapes = {{1, 1, 1}, {2, 3, 5}, {1, 300, 300}, {300, 1, 300}, {300, 300, 1}};
  // tile-1, tile and tile+1 of the common tile sizes, each size in every role once.
  for (std::int64_t t : {8, 16, 32, 64, 128, 256}) {
    shapes.push_back({t - 1, t + 1, t});
    shapes.push_back({t, t - 1, t + 1});
    shapes.push_back({t + 1, t, t - 1});
  }
  const std::vector<Shape> more = {
      {64, 64, 64}, {128, 256, 64},        // whole tiles only
      {68, 132, 36}, {196, 260, 100},      // multiples of 4 but of no tile: vectorised edges
      {17, 33, 65}, {65, 17, 33}, {255, 129, 257},  // tiles of different sizes at once
      {37, 53, 97}, {131, 67, 251}, {251, 7, 131},  // primes
      {2053, 3, 17}, {5, 1531, 29},        // tall-skinny, short-wide
      {96, 80, 3}, {130, 67, 1},           // K smaller than any tile
      {64, 64, 47}, {128, 128, 200},       // K not a multiple of the K tile
      {40, 36, 1027}, {4, 4, 4099},        // long K, small C (split-K style paths)
  };
  shapes.insert(shapes.end(), more.begin(), more.end());
  return shapes;
}

// GEMMKIT_GPU_TEST_STRIDE=N runs every N-th edge case only: for compute-sanitizer runs
// (racecheck is ~100x slower than the kernels). Unset or 1: every case.
std::uint64_t case_stride() {
  static const std::uint64_t stride = [] {
    const char* text = std::getenv("GEMMKIT_GPU_TEST_STRIDE");
    const long long v = text ? std::atoll(text) : 1;
    return std::uint64_t(v > 1 ? v : 1);
  }();
  return stride;
}

// SplitMix64: per-case seeds and scalars.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double unit(std::uint64_t x) { return double(mix(x) >> 11) * 0x1p-53; }  // [0, 1)

std::uint64_t name_hash(const std::string& name) { return std::hash<std::string>{}(name); }

// A value no correct kernel lets into a result: NaN, or a large integer.
template <class T>
T poison() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else return std::numeric_limits<T>::max() / 3;
}

template <class T>
bool same_bits(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) return x == y || (std::isnan(x) && std::isnan(y));
  else return x == y;
}

// Leading dimension of a matrix `width` wide: odd (never a multiple of 4, so vectorised
// paths must refuse or cope), or the next multiple of 4 past the width (vectorised paths
// can run). Either way wider than the matrix.
std::int64_t leading_dimension(std::int64_t width, bool multiple_of_4) {
  if (multiple_of_4) return (width + 1 + 3) / 4 * 4;
  return width % 2 == 0 ? width + 1 : width + 2;
}

// rows x cols with leading dimension ld: random inside, poison in the padding.
template <class T>
Matrix<T> random_padded(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed) {
  Matrix<T> x(rows, cols, ld);
  const Distribution dist =
      Distribution::parse(std::is_integral_v<T> ? "ints:-9:9" : "uniform");
  fill_random<T>(x.view(), dist, seed);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = cols; j < ld; ++j) x(i, j) = poison<T>();
  return x;
}

struct Case {
  Shape s;
  bool ta = false, tb = false;
  bool ld_multiple_of_4 = false;
  bool beta_zero = false;
  std::uint64_t seed = 1;

  std::string describe(DType dtype, double alpha, double beta) const {
    GemmProblem p;
    p.m = s.m, p.n = s.n, p.k = s.k, p.trans_a = ta, p.trans_b = tb;
    std::ostringstream out;
    out << p.shape_string() << " " << dtype_name(dtype) << " alpha " << alpha << " beta "
        << beta << (beta_zero ? " (C poisoned)" : "") << " ld "
        << (ld_multiple_of_4 ? "multiple of 4" : "odd") << " seed " << seed;
    return out.str();
  }
};

enum class Outcome { passed, failed, rejected };

// The check of one result: verify()'s full check (the double or exact integer reference) with
// the kernel's own accuracy, and C's padding untouched (it is not C).
template <class T>
::testing::AssertionResult result_is_right(const KernelEntry& e, const GemmProblem& p, const Matrix<T>& cm,
                                           const Matrix<T>& c_before, std::uint64_t seed) {
  const VerifyResult r = verify(p, c_before.data(), VerifyMode::full, seed, e.accuracy);
  if (!r.passed)
    return ::testing::AssertionFailure() << "error " << r.error << " > " << r.tolerance << " " << r.detail;
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = p.n; j < cm.ld(); ++j)
      if (!same_bits(cm(i, j), c_before(i, j)))
        return ::testing::AssertionFailure() << "the padding of C at (" << i << ", " << j << ") was written";
  return ::testing::AssertionSuccess();
}

// Runs one case through the dispatcher (gemm with the kernel named) and checks it against
// the double (or exact integer) reference, with the kernel's own accuracy.
template <class T>
Outcome check_case(const KernelEntry& e, const Case& c) {
  const DType dt = dtype_of<T>;
  const Shape& s = c.s;
  const std::int64_t a_rows = c.ta ? s.k : s.m, a_cols = c.ta ? s.m : s.k;
  const std::int64_t b_rows = c.tb ? s.n : s.k, b_cols = c.tb ? s.k : s.n;
  const bool l4 = c.ld_multiple_of_4;
  const Matrix<T> a = random_padded<T>(a_rows, a_cols, leading_dimension(a_cols, l4), c.seed * 4 + 1);
  const Matrix<T> b = random_padded<T>(b_rows, b_cols, leading_dimension(b_cols, l4), c.seed * 4 + 2);
  Matrix<T> cm = random_padded<T>(s.m, s.n, leading_dimension(s.n, l4), c.seed * 4 + 3);
  double alpha, beta;
  if constexpr (std::is_integral_v<T>) {
    alpha = double(1 + mix(c.seed * 4 + 4) % 3) * (mix(c.seed) & 1 ? -1 : 1);  // +-1..3
    beta = c.beta_zero ? 0.0 : double(1 + mix(c.seed * 4 + 5) % 2) * (mix(c.seed + 7) & 1 ? -1 : 1);
  } else {
    alpha = (0.5 + 1.5 * unit(c.seed * 4 + 4)) * (mix(c.seed) & 1 ? -1 : 1);  // +-[0.5, 2)
    beta = c.beta_zero ? 0.0 : (0.5 + 1.5 * unit(c.seed * 4 + 5)) * (mix(c.seed + 7) & 1 ? -1 : 1);
  }
  // beta == 0: C is write-only, so what is already there (NaN) must not leak into the result.
  if (c.beta_zero)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) cm(i, j) = poison<T>();
  const Matrix<T> c_before = cm;
  const GemmProblem p = make_problem<T>(a.view(), c.ta, b.view(), c.tb, cm.view(), alpha, beta);
  if (e.rejects(p)) return Outcome::rejected;  // the kernel declares it does not take this problem
  GemmOptions o;
  o.kernel = e.name;
  o.context = &gpu_test::sweep_context();
  gemm(p, o);
  const std::string what = e.name + " " + c.describe(dt, alpha, beta);
  const ::testing::AssertionResult right = result_is_right<T>(e, p, cm, c_before, c.seed);
  EXPECT_TRUE(right) << what;
  return right ? Outcome::passed : Outcome::failed;
}

// Calls f(std::type_identity<T>{}) for a dtype with host storage; false for the others.
template <class F>
bool with_host_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: f(std::type_identity<float>{}); return true;
    case DType::f64: f(std::type_identity<double>{}); return true;
    case DType::i32: f(std::type_identity<std::int32_t>{}); return true;
    case DType::i64: f(std::type_identity<std::int64_t>{}); return true;
    default: return false;
  }
}

std::string seconds_since(std::chrono::steady_clock::time_point start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return buf;
}

// One line in the test log, in GoogleTest's own layout.
void note(const std::string& text) { std::cout << "[   NOTE   ] " << text << std::endl; }

// Entries with at least one dtype that has host storage here; the tensor-core entries
// (bf16, f16, tf32 only) have their own suite in test_gpu_tensor.cpp.
std::vector<std::string> cuda_kernel_names() {
  std::vector<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda))
    for (DType d : e->dtypes)
      if (with_host_type(d, [](auto) {})) {
        names.push_back(e->name);
        break;
      }
  return names;
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

// One instance per CUDA registry entry; skipped without a device or below the kernel's
// minimum compute capability.
class GpuKernel : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEVICE();
    entry_ = &gemm_registry().get(GetParam());
    const int cc = current_compute_capability();
    if (cc < entry_->min_compute_capability)
      GTEST_SKIP() << entry_->name << " needs compute capability "
                   << entry_->min_compute_capability << ", the device has " << cc;
  }
  const KernelEntry& entry() const { return *entry_; }

  // The kernel's dtypes of this suite (the tensor-core dtypes have their own, GpuTensorKernel).
  std::vector<DType> testable_dtypes() const {
    std::vector<DType> dtypes;
    for (DType d : entry_->dtypes) {
      if (with_host_type(d, [](auto) {})) dtypes.push_back(d);
      else note(entry_->name + ": " + std::string(dtype_name(d)) + " is tested by GpuTensorKernel");
    }
    return dtypes;
  }

 private:
  const KernelEntry* entry_ = nullptr;
};

TEST_P(GpuKernel, EdgeShapes) {
  const KernelEntry& e = entry();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Shape> shapes = edge_shapes();
  std::map<DType, int> ran, rejected;
  int failed = 0;
  constexpr int kMaxFailures = 10;  // a broken kernel fails every case: keep the log readable
  std::uint64_t case_number = 0;
  for (DType dtype : testable_dtypes())
    for (std::size_t si = 0; si < shapes.size(); ++si)
      for (int t = 0; t < 8; ++t) {
        Case c;
        c.s = shapes[si];
        c.ta = t & 1;
        c.tb = t & 2;
        c.ld_multiple_of_4 = t >= 4;  // every shape and transpose with both kinds of ld
        c.beta_zero = case_number % 3 == 0;
        c.seed = mix(name_hash(e.name) ^ (++case_number * 0x100000001b3ULL));
        if (case_number % case_stride() != 0) continue;
        with_host_type(dtype, [&]<class T>(std::type_identity<T>) {
          const Outcome outcome = check_case<T>(e, c);
          (outcome == Outcome::rejected ? rejected : ran)[dtype]++;
          failed += outcome == Outcome::failed;
        });
        if (HasFatalFailure()) return;
        if (failed >= kMaxFailures) {
          note(e.name + ": stopping after " + std::to_string(failed) + " failed cases");
          return;
        }
      }
  int total_ran = 0;
  std::string by_dtype;
  for (const auto& [dtype, count] : ran) {
    total_ran += count;
    by_dtype += std::string(by_dtype.empty() ? "" : ", ") + std::to_string(count) + " " +
                std::string(dtype_name(dtype));
  }
  int total_rejected = 0;
  for (const auto& [dtype, count] : rejected) total_rejected += count;
  note(e.name + ": " + std::to_string(total_ran) + " edge cases run (" + by_dtype + "), " +
       std::to_string(failed) + " failed, " +
       std::to_string(total_rejected) + " declined by its precondition, in " + seconds_since(start));
  RecordProperty("cases_run", total_ran);
  RecordProperty("cases_declined", total_rejected);
  EXPECT_GT(total_ran, 0) << e.name << " accepted none of the edge cases";
}

// The check of EdgeShapes (result_is_right) fails on each planted fault of the kernel's real
// result: integer-valued inputs (-9..9; exact in every dtype here), 67x45x37 with B^T,
// alpha 2, beta -1, leading dimensions multiples of 4 with poison in the padding.
TEST_P(GpuKernel, CatchesPlantedFaults) {
  const KernelEntry& e = entry();
  int ran = 0;
  for (DType dtype : testable_dtypes())
    with_host_type(dtype, [&]<class T>(std::type_identity<T>) {
      const auto integers = [](std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
        Matrix<T> x = random_padded<T>(rows, cols, leading_dimension(cols, true), seed);
        fill_random<T>(x.view(), Distribution::parse("ints:-9:9"), seed);
        return x;
      };
      const Shape s{67, 45, 37};
      const Matrix<T> a = integers(s.m, s.k, 1), b = integers(s.n, s.k, 2);
      Matrix<T> cm = integers(s.m, s.n, 3);
      const Matrix<T> c_before = cm;
      const GemmProblem p = make_problem<T>(a.view(), false, b.view(), true, cm.view(), 2.0, -1.0);
      if (e.rejects(p)) return;
      GemmOptions o;
      o.kernel = e.name;
      gemm(p, o);
      std::vector<test::PlantedFault> faults = test::gemm_faults(p);
      faults.push_back(test::gemm_padding_fault(p));
      const test::OutputBytes out{cm.data(), std::size_t(cm.rows() * cm.ld()) * sizeof(T)};
      EXPECT_EQ(test::expect_faults_caught(out, [&] { return result_is_right<T>(e, p, cm, c_before, 7); }, faults),
                int(faults.size()))
          << e.name << " " << dtype_name(dtype);
      ++ran;
    });
  if (ran == 0) GTEST_SKIP() << e.name << " declines the 67x45x37 case in every dtype";
}

namespace {

// The large case's inputs, made once per dtype and transposes and shared by every kernel.
template <class T>
struct LargeInputs {
  Matrix<T> a, b, c0;
};

template <class T>
const LargeInputs<T>& large_inputs(const Shape& s, bool ta, bool tb) {
  static std::map<std::pair<bool, bool>, LargeInputs<T>> cache;
  auto [it, fresh] = cache.try_emplace({ta, tb});
  if (fresh) {
    const Distribution dist = Distribution::parse(std::is_integral_v<T> ? "ints:-9:9" : "uniform");
    it->second.a = Matrix<T>(ta ? s.k : s.m, ta ? s.m : s.k);
    it->second.b = Matrix<T>(tb ? s.n : s.k, tb ? s.k : s.n);
    it->second.c0 = Matrix<T>(s.m, s.n);
    fill_random<T>(it->second.a.view(), dist, 101 + ta);
    fill_random<T>(it->second.b.view(), dist, 201 + tb);
    fill_random<T>(it->second.c0.view(), dist, 301);
  }
  return it->second;
}

// Slow teaching rungs may skip the large case when one run would take longer than this.
constexpr double kLargeCaseBudgetSeconds = 5.0;
constexpr int kSlowRung = 2;

}  // namespace

TEST_P(GpuKernel, LargeShape) {
  const KernelEntry& e = entry();
  const Shape s{4097, 3001, 2049};
  // Floating dtypes only: integers are checked exactly, which is a full reference.
  DType dtype = DType::f32;
  if (!e.supports(DType::f32)) {
    if (!e.supports(DType::f64))
      GTEST_SKIP() << e.name << " has no f32 or f64: the exact integer check of "
                   << "4097x3001x2049 would take minutes";
    dtype = DType::f64;
  }
  int ran = 0;
  for (const auto& transposes : {std::pair{false, false}, std::pair{true, true}}) {
    const bool ta = transposes.first, tb = transposes.second;
    with_host_type(dtype, [&]<class T>(std::type_identity<T>) {
      const auto start = std::chrono::steady_clock::now();
      const LargeInputs<T>& in = large_inputs<T>(s, ta, tb);
      Matrix<T> c = in.c0;
      const double alpha = 0.75, beta = -0.5;
      const GemmProblem p = make_problem<T>(in.a.view(), ta, in.b.view(), tb, c.view(), alpha, beta);
      if (auto why = e.rejects(p)) {
        note(e.name + ": declines " + p.shape_string() + ": " + *why);
        return;
      }
      if (e.role == KernelRole::ladder && e.rung <= kSlowRung) {
        // Time scales with K at a fixed grid, so one run at K = 64 predicts the full one.
        const std::int64_t k_probe = 64;
        const MatrixView<const T> a_probe =
            ta ? MatrixView<const T>(in.a.data(), k_probe, s.m, in.a.ld())
               : MatrixView<const T>(in.a.data(), s.m, k_probe, in.a.ld());
        const MatrixView<const T> b_probe =
            tb ? MatrixView<const T>(in.b.data(), s.n, k_probe, in.b.ld())
               : MatrixView<const T>(in.b.data(), k_probe, s.n, in.b.ld());
        Matrix<T> c_probe(s.m, s.n);
        const GemmProblem probe = make_problem<T>(a_probe, ta, b_probe, tb, c_probe.view());
        if (!e.rejects(probe)) {
          const std::vector<double> seconds = time_kernel(e, probe, {0, 1, 10.0});
          const double predicted = seconds.front() * double(s.k) / double(k_probe);
          if (predicted > kLargeCaseBudgetSeconds) {
            note(e.name + " (rung " + std::to_string(e.rung) + "): skipping " + p.shape_string() +
                 ", predicted " + std::to_string(int(predicted + 0.5)) + " s for one run");
            return;
          }
        }
      }
      GemmOptions o;
      o.kernel = e.name;
      gemm(p, o);
      const VerifyResult r = verify(p, in.c0.data(), VerifyMode::freivalds, 0x1a9e, e.accuracy);
      EXPECT_TRUE(r.passed) << e.name << " " << p.shape_string() << " " << dtype_name(dtype)
                            << ": Freivalds residual " << r.error << " > " << r.tolerance << " "
                            << r.detail;
      ++ran;
      note(e.name + ": " + p.shape_string() + " " + std::string(dtype_name(dtype)) + " checked (" +
           "freivalds) in " + seconds_since(start));
    });
  }
  RecordProperty("cases_run", ran);
  if (ran == 0) GTEST_SKIP() << e.name << " ran no large case (see the notes above)";
}

namespace {

// A device copy of a host matrix that starts one element past cudaMalloc's (256-byte)
// alignment, so that 16-byte vector loads of its first row would be misaligned.
template <class T>
class MisalignedDeviceMatrix {
 public:
  explicit MisalignedDeviceMatrix(const Matrix<T>& host)
      : buffer_(std::size_t(host.rows() * host.ld()) + 1) {
    GEMMKIT_CUDA_CHECK(cudaMemcpy(data(), host.data(), sizeof(T) * host.rows() * host.ld(),
                                  cudaMemcpyHostToDevice));
  }
  T* data() const { return buffer_.data() + 1; }
  void copy_to(Matrix<T>& host) const {
    GEMMKIT_CUDA_CHECK(cudaMemcpy(host.data(), data(), sizeof(T) * host.rows() * host.ld(),
                                  cudaMemcpyDeviceToHost));
  }

 private:
  cuda::DeviceBuffer<T> buffer_;
};

}  // namespace

TEST_P(GpuKernel, MisalignedOperands) {
  const KernelEntry& e = entry();
  int ran = 0, declined = 0;
  std::uint64_t case_number = 0;
  // Widths and leading dimensions multiples of 4: only the start address is off.
  for (DType dtype : testable_dtypes())
    for (const Shape& s : {Shape{68, 36, 44}, Shape{132, 260, 68}})
      for (const auto& transposes : {std::pair{false, false}, std::pair{true, true}})
        with_host_type(dtype, [&]<class T>(std::type_identity<T>) {
          const bool ta = transposes.first, tb = transposes.second;
          const std::uint64_t seed = mix(name_hash(e.name) + 0xa11 * ++case_number);
          const std::int64_t a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
          const std::int64_t b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
          const Matrix<T> a = random_padded<T>(a_rows, a_cols, a_cols + 4, seed + 1);
          const Matrix<T> b = random_padded<T>(b_rows, b_cols, b_cols + 4, seed + 2);
          const Matrix<T> c0 = random_padded<T>(s.m, s.n, s.n + 4, seed + 3);
          const double alpha = std::is_integral_v<T> ? 2.0 : 1.25, beta = std::is_integral_v<T> ? -1.0 : 0.5;

          // 1. On the device, with device pointers one element past alignment.
          const MisalignedDeviceMatrix<T> da(a), db(b), dc(c0);
          GemmProblem dp = make_problem<T>(MatrixView<const T>(da.data(), a_rows, a_cols, a.ld()), ta,
                                           MatrixView<const T>(db.data(), b_rows, b_cols, b.ld()), tb,
                                           MatrixView<T>(dc.data(), s.m, s.n, c0.ld()), alpha, beta);
          const std::string what = e.name + " " + dp.shape_string() + " " +
                                   std::string(dtype_name(dtype)) + " (operands at element 1)";
          if (auto why = e.rejects(dp)) {
            ++declined;
            note(e.name + ": declines misaligned operands: " + *why);
          } else {
            Context ctx(Backend::cuda);
            gemm(ctx, dp, nullptr, GemmOptions{.kernel = e.name});  // the device API
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
            ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;
            Matrix<T> c = c0;
            dc.copy_to(c);
            GemmProblem hp = dp;
            hp.a = a.data(), hp.b = b.data(), hp.c = c.data();
            const VerifyResult r = verify(hp, c0.data(), VerifyMode::full, seed, e.accuracy);
            EXPECT_TRUE(r.passed) << what << ": error " << r.error << " > " << r.tolerance << " "
                                  << r.detail;
            ++ran;
          }

          // 2. Through the dispatcher, with host views that start at element 1.
          std::vector<T> ha(a.rows() * a.ld() + 1), hb(b.rows() * b.ld() + 1), hc(c0.rows() * c0.ld() + 1);
          std::copy(a.data(), a.data() + a.rows() * a.ld(), ha.begin() + 1);
          std::copy(b.data(), b.data() + b.rows() * b.ld(), hb.begin() + 1);
          std::copy(c0.data(), c0.data() + c0.rows() * c0.ld(), hc.begin() + 1);
          const GemmProblem p = make_problem<T>(
              MatrixView<const T>(ha.data() + 1, a_rows, a_cols, a.ld()), ta,
              MatrixView<const T>(hb.data() + 1, b_rows, b_cols, b.ld()), tb,
              MatrixView<T>(hc.data() + 1, s.m, s.n, c0.ld()), alpha, beta);
          if (!e.rejects(p)) {
            GemmOptions o;
            o.kernel = e.name;
            o.context = &gpu_test::sweep_context();
            gemm(p, o);
            const VerifyResult r = verify(p, c0.data(), VerifyMode::full, seed, e.accuracy);
            EXPECT_TRUE(r.passed) << e.name << " " << p.shape_string() << " via gemm() with host "
                                  << "views at element 1: error " << r.error << " > "
                                  << r.tolerance << " " << r.detail;
            ++ran;
          } else {
            ++declined;
          }
        });
  note(e.name + ": " + std::to_string(ran) + " misaligned cases run, " + std::to_string(declined) +
       " declined by its precondition");
  RecordProperty("cases_run", ran);
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuKernel, ::testing::ValuesIn(cuda_kernel_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });
// A CUDA build with no CUDA entry registered yet instantiates nothing; that is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuKernel);

// Rung 15 shares output tiles between blocks only when K is long enough, which the edge
// shapes above mostly are not. These shapes make it split tiles among blocks on any GPU
// size: more tiles than one wave (the partial wave dealt out by K), fewer (each tile's K
// split among blocks; up to ~15 blocks per tile in the last shape), a K that is not a
// multiple of the K tile, and beta != 0. The fix-up adds partial sums in a fixed order, so
// the same problem must give bit-identical results run after run.
TEST(GpuStreamK, SharedTilesAddUpAndRepeatExactly) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<Shape> shapes = {{2100, 2100, 1000}, {1000, 2000, 3000}, {3001, 517, 4099},
                                     {300, 700, 20000}};
  int ran = 0;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    if (e->name.rfind("cuda_stream_k", 0) != 0) continue;
    if (current_compute_capability() < e->min_compute_capability) continue;
    for (const Shape& s : shapes)
      for (const bool transposed : {false, true}) {
        const std::uint64_t seed = mix(name_hash(e->name) + s.m * 31 + s.k + transposed);
        const std::int64_t a_rows = transposed ? s.k : s.m, a_cols = transposed ? s.m : s.k;
        const std::int64_t b_rows = transposed ? s.n : s.k, b_cols = transposed ? s.k : s.n;
        const Matrix<float> a = random_padded<float>(a_rows, a_cols, a_cols, seed + 1);
        const Matrix<float> b = random_padded<float>(b_rows, b_cols, b_cols, seed + 2);
        const Matrix<float> c0 = random_padded<float>(s.m, s.n, s.n, seed + 3);
        Matrix<float> first = c0, second = c0;
        const GemmProblem p1 = make_problem<float>(a.view(), transposed, b.view(), transposed,
                                                   first.view(), 1.5, -0.75);
        GemmProblem p2 = p1;
        p2.c = second.data();
        ASSERT_FALSE(e->rejects(p1)) << e->name << " " << p1.shape_string();
        GemmOptions o;
        o.kernel = e->name;
        gemm(p1, o);
        gemm(p2, o);
        const std::string what = e->name + " " + p1.shape_string();
        const VerifyResult r = verify(p1, c0.data(), VerifyMode::freivalds, seed, e->accuracy);
        EXPECT_TRUE(r.passed) << what << ": Freivalds residual " << r.error << " > "
                              << r.tolerance << " " << r.detail;
        std::int64_t differ = 0;
        for (std::int64_t i = 0; i < s.m; ++i)
          for (std::int64_t j = 0; j < s.n; ++j) differ += !same_bits(first(i, j), second(i, j));
        EXPECT_EQ(differ, 0) << what << ": two runs differ in " << differ << " entries";
        ++ran;
      }
  }
  note(std::to_string(ran) + " stream-K cases run");
  EXPECT_GT(ran, 0) << "no stream-K entry in the registry";
}

// The paired bench shares one set of device buffers between the entry and the reference,
// in ABBA order: whichever ran last, host C must end up with the entry's result.
TEST(GpuTiming, PairedRunsLeaveTheEntrysResultInC) {
  SKIP_WITHOUT_DEVICE();
  Matrix<float> a(64, 32), b(32, 48), c(64, 48);
  const GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  auto filler = [](const char* name, int byte) {
    KernelEntry e;
    e.name = name;
    e.backend = Backend::cuda;
    e.dtypes = {DType::f32};
    e.run = [byte](const GemmProblem& q, const KernelLaunch& l) {
      const std::size_t bytes = std::size_t((q.m - 1) * q.ldc + q.n) * sizeof(float);
      ASSERT_EQ(cudaMemsetAsync(q.c, byte, bytes, l.stream), cudaSuccess);
    };
    return e;
  };
  const KernelEntry entry = filler("entry", 0x11), reference = filler("reference", 0x22);
  for (int reps : {3, 4}) {  // ending on the reference's run, then on the entry's
    std::fill(c.data(), c.data() + 64 * 48, 0.0f);
    const PairedTimes t = time_kernel_beside(entry, reference, p, {1, reps, 60.0});
    EXPECT_EQ(int(t.entry.size()), reps);
    EXPECT_EQ(int(t.reference.size()), reps);
    float expected;
    const std::uint32_t bits = 0x11111111u;
    std::memcpy(&expected, &bits, sizeof expected);
    for (std::int64_t i = 0; i < 64; ++i)
      for (std::int64_t j = 0; j < 48; ++j)
        ASSERT_EQ(std::memcmp(&c(i, j), &expected, sizeof expected), 0) << reps << " reps, " << i << "," << j;
  }
}

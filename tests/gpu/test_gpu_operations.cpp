// The device API of reduce, spmv and conv1d on user streams: device pointers, one Context,
// work queued on streams made with cudaStreamCreate. Two streams run each operation at the
// same time on different inputs (conv1d with two different masks at once), every result
// checked against the CPU reference; host masks are overwritten as soon as a call returns
// (the call must not read them later); a warm loop allocates nothing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/sparse.hpp"
#include "gpu/gpu_test_support.hpp"

namespace gemmkit {
namespace {

using cuda::DeviceBuffer;

// A stream of the test's own (not the legacy default stream).
class UserStream {
 public:
  UserStream() { GEMMKIT_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~UserStream() { cudaStreamDestroy(stream_); }
  UserStream(const UserStream&) = delete;
  UserStream& operator=(const UserStream&) = delete;
  Stream get() const { return stream_; }
  void sync() const { GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) e = T(dist(rng));
  return v;
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  DeviceBuffer<T> d(std::max<std::size_t>(v.size(), 1));
  if (!v.empty()) d.copy_from_host(v.data(), v.size());
  return d;
}

template <class T>
std::vector<T> download(const DeviceBuffer<T>& d, std::size_t n) {
  std::vector<T> v(n);
  if (n) d.copy_to_host(v.data(), n);
  return v;
}

template <class Problem>
std::vector<std::string> cuda_kernel_names(const Registry<Problem>& registry) {
  std::vector<std::string> names;
  for (const auto& k : registry.entries())
    if (k.backend == Backend::cuda) names.push_back(k.name);
  names.push_back("auto");
  return names;
}

// ---- reduce ----------------------------------------------------------------------------

template <class T>
void expect_reduction(const std::vector<T>& x, ReduceOp op, T got, const std::string& what) {
  const long double ref = reduce_reference_wide(x.data(), x.size(), op);
  if (op == ReduceOp::min || op == ReduceOp::max) {
    EXPECT_EQ(got, static_cast<T>(ref)) << what;
    return;
  }
  double sum_abs = 0;
  for (T v : x) sum_abs += op == ReduceOp::sum ? std::fabs(double(v)) : double(v) * double(v);
  const double tol = op == ReduceOp::sum
                         ? reduce_sum_error_bound(x.size(), sum_abs, dtype_of<T>) + sum_abs * 0x1p-60
                         : 4 * double(std::numeric_limits<T>::epsilon()) * double(ref);
  EXPECT_LE(std::fabs(static_cast<long double>(got) - ref), tol) << what;
}

template <class T>
void reduce_on_two_streams() {
  Context ctx(Backend::cuda);
  UserStream s1, s2;
  const std::size_t n1 = (std::size_t(1) << 22) + 3, n2 = (std::size_t(1) << 21) + 17;
  const auto x1 = random_values<T>(n1, 11), x2 = random_values<T>(n2, 12);
  const auto d1 = upload(x1), d2 = upload(x2);
  DeviceBuffer<T> r1(1), r2(1);
  for (const std::string& kernel : cuda_kernel_names(reduce_registry()))
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::norm2}) {
      const std::string what = kernel + " " + std::string(reduce_op_name(op));
      // Queued back to back on two streams, several times over: both run at once, each in
      // its stream's workspace.
      for (int i = 0; i < 4; ++i) {
        reduce(ctx, d1.data(), n1, op, r1.data(), s1.get(), kernel);
        reduce(ctx, d2.data(), n2, op, r2.data(), s2.get(), kernel);
      }
      s1.sync();
      s2.sync();
      expect_reduction(x1, op, download(r1, 1)[0], what + " stream 1");
      expect_reduction(x2, op, download(r2, 1)[0], what + " stream 2");
    }
}

TEST(GpuDeviceApi, ReduceOnTwoStreamsAtOnceF32) {
  SKIP_WITHOUT_DEVICE();
  reduce_on_two_streams<float>();
}

TEST(GpuDeviceApi, ReduceOnTwoStreamsAtOnceF64) {
  SKIP_WITHOUT_DEVICE();
  reduce_on_two_streams<double>();
}

TEST(GpuDeviceApi, ReduceWithTheCallersWorkspaceAndNoAllocationWhenWarm) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  UserStream s;
  const std::size_t n = 1000003;
  const auto x = random_values<float>(n, 21);
  const auto d = upload(x);
  DeviceBuffer<float> r(1);
  const std::size_t bytes = reduce_workspace_bytes(ctx, n, DType::f32, ReduceOp::sum, "warp_shuffle");
  EXPECT_GT(bytes, 0u);
  DeviceBuffer<unsigned char> ws(bytes);
  const auto& ran = reduce(ctx, d.data(), n, ReduceOp::sum, r.data(), s.get(), "warp_shuffle",
                           Workspace{ws.data(), ws.bytes()});
  EXPECT_EQ(ran.name, "warp_shuffle");
  s.sync();
  expect_reduction(x, ReduceOp::sum, download(r, 1)[0], "caller's workspace");
  EXPECT_THROW(reduce(ctx, d.data(), n, ReduceOp::sum, r.data(), s.get(), "warp_shuffle",
                      Workspace{ws.data(), bytes - 1}),
               Error);
  // The pool: the first call grows it, the warm loop adds nothing.
  reduce(ctx, d.data(), n, ReduceOp::sum, r.data(), s.get());
  const auto allocations = ctx.workspace_allocations();
  for (int i = 0; i < 20; ++i) reduce(ctx, d.data(), n, ReduceOp::sum, r.data(), s.get());
  s.sync();
  EXPECT_EQ(ctx.workspace_allocations(), allocations);
  expect_reduction(x, ReduceOp::sum, download(r, 1)[0], "pool");
}

// ---- conv1d ----------------------------------------------------------------------------

template <class T>
void expect_convolution(const std::vector<T>& x, const std::vector<T>& mask, const std::vector<T>& y,
                        const std::string& what) {
  const auto n = std::int64_t(x.size()), w = std::int64_t(mask.size());
  std::vector<T> ref(x.size());
  conv1d_reference(x.data(), n, mask.data(), w, ref.data());
  int reported = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double err = std::fabs(double(y[std::size_t(i)]) - double(ref[std::size_t(i)]));
    const double bound = conv1d_error_bound(x.data(), n, mask.data(), w, i);
    if (!(err <= bound) && reported++ < 5)
      ADD_FAILURE() << what << ": output " << i << " is " << y[std::size_t(i)] << ", reference "
                    << ref[std::size_t(i)] << " (bound " << bound << ")";
  }
}

// Two streams convolve different inputs with different masks at the same time, many
// launches interleaved, for every rung: the constant-memory rungs would race on a shared
// mask buffer; here each launch carries its own. The host masks are overwritten right
// after each call returns.
template <class T>
void conv1d_on_two_streams(std::int64_t width) {
  Context ctx(Backend::cuda);
  UserStream s1, s2;
  // Long enough for thousands of blocks, short enough that the CPU reference (and its error
  // bound), n x width products per stream and rung, takes seconds: 2^28 taps at most.
  const std::int64_t n = std::min<std::int64_t>((std::int64_t(1) << 22) + 5, (std::int64_t(1) << 28) / width + 5);
  const auto x1 = random_values<T>(std::size_t(n), 31), x2 = random_values<T>(std::size_t(n), 32);
  const auto m1 = random_values<T>(std::size_t(width), 33), m2 = random_values<T>(std::size_t(width), 34);
  const auto d1 = upload(x1), d2 = upload(x2);
  DeviceBuffer<T> y1{std::size_t(n)}, y2{std::size_t(n)};
  for (const std::string& kernel : cuda_kernel_names(conv1d_registry())) {
    if (kernel != "auto" && conv1d_kernel_rejection(kernel, dtype_of<T>, width)) continue;
    for (int i = 0; i < 6; ++i) {
      std::vector<T> host1 = m1, host2 = m2;  // the caller's buffers, reused at once
      conv1d(ctx, d1.data(), n, host1.data(), width, y1.data(), s1.get(), kernel);
      std::fill(host1.begin(), host1.end(), T(NAN));
      conv1d(ctx, d2.data(), n, host2.data(), width, y2.data(), s2.get(), kernel);
      std::fill(host2.begin(), host2.end(), T(NAN));
    }
    s1.sync();
    s2.sync();
    const std::string what = kernel + " w=" + std::to_string(width);
    expect_convolution(x1, m1, download(y1, std::size_t(n)), what + " stream 1");
    expect_convolution(x2, m2, download(y2, std::size_t(n)), what + " stream 2");
  }
}

TEST(GpuDeviceApi, Conv1dTwoMasksOnTwoStreamsAtOnceF32) {
  SKIP_WITHOUT_DEVICE();
  for (std::int64_t w : {7, 200, 3000}) conv1d_on_two_streams<float>(w);
}

TEST(GpuDeviceApi, Conv1dTwoMasksOnTwoStreamsAtOnceF64) {
  SKIP_WITHOUT_DEVICE();
  for (std::int64_t w : {5, 64, 65}) conv1d_on_two_streams<double>(w);
}

// Two host threads share one context, each on its own stream with its own mask.
TEST(GpuDeviceApi, Conv1dTwoThreadsOneContext) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const std::int64_t n = (std::int64_t(1) << 20) + 3, width = 33;
  const auto x = random_values<float>(std::size_t(n), 81);
  const auto d = upload(x);
  const std::vector<std::vector<float>> masks = {random_values<float>(std::size_t(width), 82),
                                                 random_values<float>(std::size_t(width), 83)};
  std::vector<DeviceBuffer<float>> ys;
  for (int t = 0; t < 2; ++t) ys.emplace_back(std::size_t(n));
  std::string errors[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        UserStream s;
        for (int i = 0; i < 10; ++i)
          for (const char* kernel : {"constant_mask", "tiled", "streaming"})
            conv1d(ctx, d.data(), n, masks[t].data(), width, ys[t].data(), s.get(), kernel);
        s.sync();
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    expect_convolution(x, masks[t], download(ys[t], std::size_t(n)), "thread " + std::to_string(t));
  }
}

// Wider than one launch's parameters: the global-memory rungs stage the taps in several
// launches.
TEST(GpuDeviceApi, Conv1dMaskWiderThanOneLaunchCarries) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  UserStream s;
  const std::int64_t n = 20000, width = 3 * kConv1dConstantMaskTaps + 17;
  const auto x = random_values<float>(std::size_t(n), 41), mask = random_values<float>(std::size_t(width), 42);
  const auto d = upload(x);
  DeviceBuffer<float> y{std::size_t(n)};
  const auto& ran = conv1d(ctx, d.data(), n, mask.data(), width, y.data(), s.get(), "basic");
  EXPECT_EQ(ran.name, "basic");
  s.sync();
  expect_convolution(x, mask, download(y, std::size_t(n)), "basic, wide mask");
}

TEST(GpuDeviceApi, Conv1dRefusesWhatARungCannotRun) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  const auto x = upload(random_values<float>(1000, 51));
  DeviceBuffer<float> y(1000);
  const std::vector<float> wide(std::size_t(kConv1dConstantMaskTaps + 1), 1.0f);
  EXPECT_THROW(conv1d(ctx, x.data(), 1000, wide.data(), std::int64_t(wide.size()), y.data(), nullptr,
                      "constant_mask"),
               Error);
  // x off its 16-byte alignment: streaming refuses, auto runs another rung correctly.
  const std::vector<float> mask = {0.25f, 0.5f, 0.25f};
  EXPECT_THROW(conv1d(ctx, x.data() + 1, 999, mask.data(), 3, y.data(), nullptr, "streaming"), Error);
  const auto& ran = conv1d(ctx, x.data() + 1, 999, mask.data(), 3, y.data(), nullptr);
  EXPECT_NE(ran.name, "streaming");
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> host(1000);
  x.copy_to_host(host.data(), 1000);
  const std::vector<float> shifted(host.begin() + 1, host.end());
  expect_convolution(shifted, mask, download(y, 999), "auto, unaligned x");
}

// ---- spmv ------------------------------------------------------------------------------

// The matrix in device memory with offsets of type Offset.
template <class T, class Offset>
struct DeviceMatrix {
  DeviceBuffer<Offset> offsets;
  DeviceBuffer<std::int32_t> cols;
  DeviceBuffer<T> values;
  CsrDeviceView<T> view;
  explicit DeviceMatrix(const CsrMatrix<T>& a)
      : offsets(upload(std::vector<Offset>(a.row_offsets.begin(), a.row_offsets.end()))),
        cols(upload(a.col_indices)), values(upload(a.values)) {
    view = {a.rows, a.cols, a.nnz(), offsets.data(), sizeof(Offset) == 8, cols.data(), values.data()};
  }
};

template <class T>
void expect_spmv(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& y, const std::string& what) {
  const std::vector<T> ref = spmv_reference(a, x);
  const std::vector<long double> sums = spmv_abs_row_sums(a, x);
  const long double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const long double bound = (a.row_length(r) + 1) * eps * sums[std::size_t(r)];
    const long double diff = std::fabs(static_cast<long double>(y[std::size_t(r)]) - ref[std::size_t(r)]);
    ASSERT_TRUE(diff <= bound) << what << ": row " << r << " is " << double(y[std::size_t(r)])
                               << ", reference " << double(ref[std::size_t(r)]);
  }
}

template <class T, class Offset>
void spmv_on_two_streams() {
  Context ctx(Backend::cuda);
  UserStream s1, s2;
  SparseGenOptions gen;
  gen.rows = 1 << 16;
  gen.seed = 3;
  const CsrMatrix<T> a = generate_csr<T>(SparsePattern::powerlaw, gen);
  gen.seed = 4;
  const CsrMatrix<T> b = generate_csr<T>(SparsePattern::uniform, gen);
  const DeviceMatrix<T, Offset> da(a), db(b);
  const auto xa = random_values<T>(std::size_t(a.cols), 61), xb = random_values<T>(std::size_t(b.cols), 62);
  const auto dxa = upload(xa), dxb = upload(xb);
  DeviceBuffer<T> ya{std::size_t(a.rows)}, yb{std::size_t(b.rows)};
  for (const std::string& kernel : cuda_kernel_names(spmv_registry())) {
    for (int i = 0; i < 4; ++i) {
      spmv(ctx, da.view, dxa.data(), ya.data(), s1.get(), kernel);
      spmv(ctx, db.view, dxb.data(), yb.data(), s2.get(), kernel);
    }
    s1.sync();
    s2.sync();
    const std::string what = kernel + (sizeof(Offset) == 8 ? " (64-bit offsets)" : "");
    expect_spmv(a, xa, download(ya, std::size_t(a.rows)), what + " stream 1");
    expect_spmv(b, xb, download(yb, std::size_t(b.rows)), what + " stream 2");
  }
}

TEST(GpuDeviceApi, SpmvOnTwoStreamsAtOnceF32) {
  SKIP_WITHOUT_DEVICE();
  spmv_on_two_streams<float, std::int32_t>();
}

TEST(GpuDeviceApi, SpmvOnTwoStreamsAtOnceF64WideOffsets) {
  SKIP_WITHOUT_DEVICE();
  spmv_on_two_streams<double, std::int64_t>();
}

TEST(GpuDeviceApi, SpmvAutoFollowsTheStatisticsAndTakesTheCallersWorkspace) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  UserStream s;
  SparseGenOptions gen;
  gen.rows = 1 << 15;
  const CsrMatrix<float> a = generate_csr<float>(SparsePattern::banded, gen);
  const DeviceMatrix<float, std::int32_t> d(a);
  const auto x = random_values<float>(std::size_t(a.cols), 71);
  const auto dx = upload(x);
  DeviceBuffer<float> y{std::size_t(a.rows)};
  SpmvProblem p = make_spmv_problem(d.view, dx.data(), y.data());
  EXPECT_EQ(spmv(ctx, p, s.get()).name, "merge_path");  // no statistics
  p.stats = csr_stats(a);
  EXPECT_EQ(spmv(ctx, p, s.get()).name, choose_spmv_kernel(*p.stats));
  for (const char* kernel : {"merge_path", "cusparse"}) {
    const std::size_t bytes = spmv_workspace_bytes(ctx, p, kernel);
    DeviceBuffer<unsigned char> ws(std::max<std::size_t>(bytes, 1));
    GEMMKIT_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, y.bytes(), s.get()));
    spmv(ctx, p, s.get(), kernel, Workspace{ws.data(), std::max<std::size_t>(bytes, 1)});
    s.sync();
    expect_spmv(a, x, download(y, std::size_t(a.rows)), std::string(kernel) + ", caller's workspace");
  }
}

}  // namespace
}  // namespace gemmkit

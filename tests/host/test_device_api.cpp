// The device API on the CPU context (host pointers): column-major problems, strided batches,
// validation, and the host convenience layer agreeing with it. Integer-valued doubles keep
// every product exact, so results are compared for equality.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {
namespace {

// Element (i, j) of a matrix stored row- or column-major with leading dimension ld.
std::int64_t at(Layout layout, std::int64_t i, std::int64_t j, std::int64_t ld) {
  return layout == Layout::row_major ? i * ld + j : j * ld + i;
}

// Small integers from a seed, different for every element.
std::vector<double> integers(std::size_t count, std::uint64_t seed) {
  std::vector<double> v(count);
  for (std::size_t i = 0; i < count; ++i)
    v[i] = double(std::int64_t((i * 2654435761u + seed * 40503u) % 17) - 8);
  return v;
}

// C_i = alpha op(A_i) op(B_i) + beta C_i for every item of the batch, element by element
// from the problem's own description of its storage.
void reference(const GemmProblem& p, const double* a, const double* b, double* c) {
  for (std::int64_t item = 0; item < p.batch; ++item)
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        double sum = 0;
        for (std::int64_t l = 0; l < p.k; ++l) {
          const double x = p.trans_a ? a[item * p.stride_a + at(p.layout, l, i, p.lda)]
                                     : a[item * p.stride_a + at(p.layout, i, l, p.lda)];
          const double y = p.trans_b ? b[item * p.stride_b + at(p.layout, j, l, p.ldb)]
                                     : b[item * p.stride_b + at(p.layout, l, j, p.ldb)];
          sum += x * y;
        }
        double& out = c[item * p.stride_c + at(p.layout, i, j, p.ldc)];
        out = p.alpha * sum + (p.beta == 0 ? 0 : p.beta * out);
      }
}

struct Storage {
  std::vector<double> a, b, c, expected;
};

// A problem of the given layout, transposes and batch with padded leading dimensions and
// gaps between the batch's matrices (or stride_a = 0: one A for every product).
GemmProblem make(Layout layout, bool ta, bool tb, std::int64_t batch, bool shared_a,
                 Storage& s) {
  GemmProblem p;
  p.dtype = DType::f64;
  p.layout = layout;
  p.trans_a = ta, p.trans_b = tb;
  p.m = 7, p.n = 5, p.k = 6;
  p.alpha = 2, p.beta = -1;
  p.batch = batch;
  // Stored heights/widths: a row-major matrix of r x c has ld >= c; column-major ld >= r.
  auto ld_of = [&](std::int64_t rows, std::int64_t cols) {
    return (layout == Layout::row_major ? cols : rows) + 3;
  };
  const std::int64_t a_rows = ta ? p.k : p.m, a_cols = ta ? p.m : p.k;
  const std::int64_t b_rows = tb ? p.n : p.k, b_cols = tb ? p.k : p.n;
  p.lda = ld_of(a_rows, a_cols);
  p.ldb = ld_of(b_rows, b_cols);
  p.ldc = ld_of(p.m, p.n);
  const std::int64_t a_size = p.lda * (layout == Layout::row_major ? a_rows : a_cols);
  const std::int64_t b_size = p.ldb * (layout == Layout::row_major ? b_rows : b_cols);
  const std::int64_t c_size = p.ldc * (layout == Layout::row_major ? p.m : p.n);
  p.stride_a = shared_a ? 0 : a_size + 5;
  p.stride_b = b_size + 2;
  p.stride_c = c_size + 1;
  s.a = integers(std::size_t(p.stride_a * batch + a_size), 1);
  s.b = integers(std::size_t(p.stride_b * batch + b_size), 2);
  s.c = integers(std::size_t(p.stride_c * batch + c_size), 3);
  s.expected = s.c;
  p.a = s.a.data(), p.b = s.b.data(), p.c = s.c.data();
  reference(p, s.a.data(), s.b.data(), s.expected.data());
  return p;
}

TEST(DeviceApi, ColumnMajorAndBatchesOnEveryCpuKernel) {
  Context ctx(Backend::cpu);
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu)) {
    if (!e->supports(DType::f64)) continue;
    for (Layout layout : {Layout::row_major, Layout::col_major})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (std::int64_t batch : {1, 3})
            for (bool shared_a : {false, true}) {
              Storage s;
              const GemmProblem p = make(layout, ta, tb, batch, shared_a, s);
              const KernelEntry& ran = gemm(ctx, p, nullptr, GemmOptions{.kernel = e->name});
              EXPECT_EQ(ran.name, e->name);
              EXPECT_EQ(s.c, s.expected) << e->name << " " << p.shape_string()
                                         << (shared_a ? " stride_a 0" : "");
            }
  }
}

TEST(DeviceApi, HostGemmAgreesAndAutoChoosesACpuKernel) {
  Storage s;
  const GemmProblem p = make(Layout::col_major, true, false, 4, false, s);
  Context ctx(Backend::cpu);
  const std::string ran = gemm(p, GemmOptions{.backend = Backend::cpu, .context = &ctx});
  EXPECT_EQ(gemm_registry().get(ran).backend, Backend::cpu);
  EXPECT_EQ(s.c, s.expected);
  EXPECT_EQ(gemm_workspace_bytes(ctx, p), 0u);  // CPU kernels need no device workspace
}

TEST(DeviceApi, ColumnMajorIsTheSwappedRowMajorProblem) {
  GemmProblem p;
  p.layout = Layout::col_major;
  p.m = 3, p.n = 4, p.k = 5;
  p.trans_a = true;
  p.lda = 5, p.ldb = 5, p.ldc = 3;
  int a = 0, b = 0, c = 0;
  p.a = &a, p.b = &b, p.c = &c;
  p.stride_a = 11, p.stride_b = 22;
  const GemmProblem q = as_row_major(p);
  EXPECT_EQ(q.layout, Layout::row_major);
  EXPECT_EQ(q.m, 4);
  EXPECT_EQ(q.n, 3);
  EXPECT_EQ(q.a, &b);
  EXPECT_EQ(q.b, &a);
  EXPECT_FALSE(q.trans_a);
  EXPECT_TRUE(q.trans_b);
  EXPECT_EQ(q.stride_a, 22);
  EXPECT_EQ(q.stride_b, 11);
  EXPECT_EQ(p.shape_string(), "3x4x5 (A^T, column-major)");
  p.batch = 8;
  EXPECT_EQ(p.shape_string(), "8 x 3x4x5 (A^T, column-major)");
}

// The usage error's message, or "" when the call did not throw one.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::usage) return e.what();
    return std::string("not a usage error: ") + e.what();
  }
  return "";
}

TEST(DeviceApi, RefusesBadBatchesAndKernelsOfAnotherBackendBeforeRunning) {
  Context ctx(Backend::cpu);
  Storage s;
  GemmProblem p = make(Layout::row_major, false, false, 3, false, s);
  const std::vector<double> before = s.c;

  GemmProblem overlapping = p;
  overlapping.stride_c = 3;  // the outputs of the batch would overlap
  EXPECT_NE(usage_error([&] { gemm(ctx, overlapping); }).find("overlap"), std::string::npos);
  GemmProblem negative = p;
  negative.batch = -1;
  EXPECT_NE(usage_error([&] { gemm(ctx, negative); }).find("negative batch"), std::string::npos);
  negative = p;
  negative.stride_b = -4;
  EXPECT_NE(usage_error([&] { gemm(ctx, negative); }).find("negative stride"), std::string::npos);
  GemmProblem narrow = p;
  narrow.layout = Layout::col_major;  // ldc is the row-major width + 3, less than m + 3 = 10
  narrow.ldc = 6;
  EXPECT_NE(usage_error([&] { gemm(ctx, narrow); }).find("ldc"), std::string::npos);
  for (const KernelEntry& e : gemm_registry().entries())
    if (e.backend == Backend::cuda) {
      EXPECT_NE(usage_error([&] { gemm(ctx, p, nullptr, GemmOptions{.kernel = e.name}); })
                    .find("cuda backend"),
                std::string::npos);
      break;
    }
  EXPECT_NE(usage_error([&] { gemm(ctx, p, nullptr, GemmOptions{.backend = Backend::cuda}); })
                .find("cpu context"),
            std::string::npos);
  EXPECT_EQ(s.c, before);  // nothing ran

  GemmProblem empty = p;
  empty.batch = 0;  // nothing to do, and nothing touched
  gemm(ctx, empty);
  EXPECT_EQ(s.c, before);
}

TEST(DeviceApi, CudaContextWithoutADeviceIsADeviceError) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  try {
    Context ctx(Backend::cuda);
    ADD_FAILURE() << "a CUDA context was made without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::device) << e.what();
  }
  Context automatic;
  EXPECT_EQ(automatic.backend(), Backend::cpu);
  EXPECT_EQ(automatic.device(), -1);
  EXPECT_EQ(automatic.compute_capability(), 0);
}

// a_span(), b_span() and c_span() are the caller's own operands in their layout (the copies
// to the device and the memory estimate take them): a column-major A^T stored 7 x 9 with
// lda 9 spans 8 * 9 + 7 elements, and the batch adds its own stride, not B's.
TEST(DeviceApi, SpansAreTheCallersOperandsInTheirLayout) {
  GemmProblem p;
  p.layout = Layout::col_major;
  p.m = 9, p.n = 11, p.k = 7;
  p.trans_a = true;
  p.lda = 9, p.ldb = 8, p.ldc = 13;
  p.batch = 3;
  p.stride_a = 81, p.stride_b = 88, p.stride_c = 148;
  EXPECT_EQ(p.a_span(), 2 * 81 + (8 * 9 + 7));
  EXPECT_EQ(p.b_span(), 2 * 88 + (10 * 8 + 7));
  EXPECT_EQ(p.c_span(), 2 * 148 + (10 * 13 + 9));
  p.layout = Layout::row_major;  // A^T stored 7 x 9 row-major, B 7 x 11, C 9 x 11
  p.lda = 10, p.ldb = 12, p.ldc = 11;
  EXPECT_EQ(p.a_span(), 2 * 81 + (6 * 10 + 9));
  EXPECT_EQ(p.b_span(), 2 * 88 + (6 * 12 + 11));
  EXPECT_EQ(p.c_span(), 2 * 148 + (8 * 11 + 11));
}

}  // namespace
}  // namespace gemmkit

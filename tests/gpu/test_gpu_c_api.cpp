// The C API (gemmkit.h) on a CUDA context: cudaMalloc'd operands, a user stream, column- and
// row-major products, a strided batch through a named kernel, against a double loop on the host.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "gemmkit.h"
#include "gpu/gpu_test_support.hpp"

namespace {

// A gk_context for the test's lifetime.
struct CudaContext {
  gk_context ctx = nullptr;
  CudaContext() {
    EXPECT_EQ(gk_context_create(GK_BACKEND_CUDA, 0, &ctx), GK_SUCCESS) << gk_last_error();
  }
  ~CudaContext() { gk_context_destroy(ctx); }
};

// A user stream (not the legacy default one) for the test's lifetime.
struct UserStream {
  cudaStream_t stream = nullptr;
  UserStream() { EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess); }
  ~UserStream() { cudaStreamDestroy(stream); }
};

std::int64_t at(gk_layout layout, std::int64_t i, std::int64_t j, std::int64_t ld) {
  return layout == GK_ROW_MAJOR ? i * ld + j : i + j * ld;
}

// Multiples of 1/32 in [-4, 4): f32 products and their sums below are exact.
std::vector<double> values(std::size_t count, unsigned seed) {
  std::vector<double> x(count);
  std::uint32_t state = 2654435761u * (seed + 1);
  for (double& v : x) {
    state = state * 1664525u + 1013904223u;
    v = double(int(state >> 24) - 128) / 32.0;
  }
  return x;
}

template <class T>
gemmkit::cuda::DeviceBuffer<T> to_device(const std::vector<double>& host, cudaStream_t stream) {
  std::vector<T> typed(host.begin(), host.end());
  gemmkit::cuda::DeviceBuffer<T> buffer(typed.size());
  EXPECT_EQ(cudaMemcpyAsync(buffer.data(), typed.data(), buffer.bytes(), cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);  // `typed` dies here
  return buffer;
}

template <class T>
std::vector<double> to_host(const gemmkit::cuda::DeviceBuffer<T>& buffer) {
  std::vector<T> typed(buffer.size());
  buffer.copy_to_host(typed.data(), typed.size());
  return {typed.begin(), typed.end()};
}

template <class T>
void check_products(gk_dtype dtype, double tolerance) {
  CudaContext context;
  UserStream user;
  ASSERT_NE(context.ctx, nullptr);
  const std::int64_t m = 67, n = 45, k = 33;
  const double alpha = 1.25, beta = -0.75;
  for (gk_layout layout : {GK_ROW_MAJOR, GK_COL_MAJOR})
    for (gk_op op_a : {GK_OP_N, GK_OP_T})
      for (gk_op op_b : {GK_OP_N, GK_OP_T}) {
        SCOPED_TRACE(std::string(layout == GK_ROW_MAJOR ? "row" : "column") + "-major, op_a " +
                     std::to_string(op_a) + ", op_b " + std::to_string(op_b));
        const bool row = layout == GK_ROW_MAJOR;
        const std::int64_t a_rows = op_a == GK_OP_N ? m : k, a_cols = op_a == GK_OP_N ? k : m;
        const std::int64_t b_rows = op_b == GK_OP_N ? k : n, b_cols = op_b == GK_OP_N ? n : k;
        const std::int64_t lda = (row ? a_cols : a_rows) + 3, ldb = (row ? b_cols : b_rows) + 1;
        const std::int64_t ldc = (row ? n : m) + 2;
        const std::vector<double> a = values(std::size_t((row ? a_rows : a_cols) * lda), 1);
        const std::vector<double> b = values(std::size_t((row ? b_rows : b_cols) * ldb), 2);
        std::vector<double> c = values(std::size_t((row ? m : n) * ldc), 3);
        auto da = to_device<T>(a, user.stream);
        auto db = to_device<T>(b, user.stream);
        auto dc = to_device<T>(c, user.stream);
        ASSERT_EQ(gk_gemm(context.ctx, layout, op_a, op_b, m, n, k, alpha, dtype, da.data(), lda,
                          db.data(), ldb, beta, dc.data(), ldc, user.stream),
                  GK_SUCCESS)
            << gk_last_error();
        ASSERT_EQ(gk_synchronize(context.ctx, user.stream), GK_SUCCESS) << gk_last_error();
        const std::vector<double> got = to_host(dc);
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t p = 0; p < k; ++p)
              sum += (op_a == GK_OP_N ? a[at(layout, i, p, lda)] : a[at(layout, p, i, lda)]) *
                     (op_b == GK_OP_N ? b[at(layout, p, j, ldb)] : b[at(layout, j, p, ldb)]);
            const std::int64_t ij = at(layout, i, j, ldc);
            const double want = alpha * sum + beta * c[ij];
            ASSERT_NEAR(got[ij], want, tolerance * (1 + std::fabs(want))) << i << ", " << j;
          }
      }
}

}  // namespace

TEST(GpuCApi, F64ProductsOnUserStream) {
  SKIP_WITHOUT_DEVICE();
  check_products<double>(GK_F64, 1e-12);
}

TEST(GpuCApi, F32ProductsOnUserStream) {
  SKIP_WITHOUT_DEVICE();
  check_products<float>(GK_F32, 1e-5);
}

TEST(GpuCApi, StridedBatchThroughNamedKernel) {
  SKIP_WITHOUT_DEVICE();
  CudaContext context;
  UserStream user;
  ASSERT_NE(context.ctx, nullptr);
  gk_backend backend = GK_BACKEND_AUTO;
  int device = -2;
  ASSERT_EQ(gk_context_backend(context.ctx, &backend), GK_SUCCESS);
  EXPECT_EQ(backend, GK_BACKEND_CUDA);
  ASSERT_EQ(gk_context_device(context.ctx, &device), GK_SUCCESS);
  EXPECT_EQ(device, 0);

  // Column-major, 5 products of 40x24x16, one shared B (stride 0), gaps between A's and C's.
  const std::int64_t batch = 5, m = 40, n = 24, k = 16, lda = m, ldb = k, ldc = m + 1;
  const std::int64_t stride_a = lda * k + 7, stride_c = ldc * n + 5;
  const std::vector<double> a = values(std::size_t(batch * stride_a), 4);
  const std::vector<double> b = values(std::size_t(ldb * n), 5);
  const std::vector<double> c = values(std::size_t(batch * stride_c), 6);
  auto da = to_device<float>(a, user.stream);
  auto db = to_device<float>(b, user.stream);
  // cuBLAS by name, then the auto choice (a batched rung where one accepts the problem).
  for (const char* kernel : {"cuda_cublas", static_cast<const char*>(nullptr)}) {
    SCOPED_TRACE(kernel ? kernel : "auto");
    auto out = to_device<float>(c, user.stream);
    std::size_t bytes = 1;
    ASSERT_EQ(gk_gemm_workspace_bytes(context.ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, m, n, k, GK_F32,
                                      lda, stride_a, ldb, 0, GK_F32, ldc, stride_c, batch, kernel,
                                      &bytes),
              GK_SUCCESS)
        << gk_last_error();
    const char* ran = nullptr;
    ASSERT_EQ(gk_gemm_ex(context.ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, m, n, k, 2.0, GK_F32,
                         da.data(), lda, stride_a, db.data(), ldb, 0, 0.5, GK_F32, out.data(), ldc,
                         stride_c, batch, kernel, nullptr, 0, &ran, user.stream),
              GK_SUCCESS)
        << gk_last_error();
    ASSERT_NE(ran, nullptr);
    if (kernel) {
      EXPECT_STREQ(ran, kernel);
    }
    ASSERT_EQ(gk_synchronize(context.ctx, user.stream), GK_SUCCESS) << gk_last_error();
    const std::vector<double> got = to_host(out);
    for (std::int64_t q = 0; q < batch; ++q)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (std::int64_t p = 0; p < k; ++p) sum += a[q * stride_a + i + p * lda] * b[p + j * ldb];
          const std::int64_t ij = q * stride_c + i + j * ldc;
          ASSERT_NEAR(got[ij], 2.0 * sum + 0.5 * c[ij], 1e-4) << q << ": " << i << ", " << j;
        }
    // The gaps between the C matrices are as they were.
    for (std::int64_t q = 0; q < batch; ++q)
      for (std::int64_t g = ldc * n; g < stride_c; ++g) ASSERT_EQ(got[q * stride_c + g], c[q * stride_c + g]);
  }
}

TEST(GpuCApi, CudaContextErrors) {
  SKIP_WITHOUT_DEVICE();
  CudaContext context;
  ASSERT_NE(context.ctx, nullptr);
  float x[4] = {1, 2, 3, 4};
  // A CPU kernel on the CUDA context: refused, with both backends named.
  EXPECT_EQ(gk_gemm_ex(context.ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, 1.0, GK_F32, x, 2, 0,
                       x, 2, 0, 0.0, GK_F32, x, 2, 0, 1, "cpu_naive", nullptr, 0, nullptr, nullptr),
            GK_ERROR_USAGE);
  EXPECT_NE(std::string(gk_last_error()).find("cpu_naive"), std::string::npos) << gk_last_error();
  // Host memory on a CUDA context: refused before anything is queued.
  EXPECT_EQ(gk_gemm(context.ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, 1.0, GK_F32, x, 2, x, 2,
                    0.0, x, 2, nullptr),
            GK_ERROR_USAGE);
  EXPECT_NE(std::string(gk_last_error()).find("not device memory"), std::string::npos) << gk_last_error();
  EXPECT_EQ(x[3], 4.0f);
  // A device index that does not exist.
  gk_context other = nullptr;
  EXPECT_EQ(gk_context_create(GK_BACKEND_CUDA, 1 << 20, &other), GK_ERROR_DEVICE) << gk_last_error();
  EXPECT_EQ(other, nullptr);
  // The legacy default stream.
  EXPECT_EQ(gk_synchronize(context.ctx, nullptr), GK_SUCCESS) << gk_last_error();
}

TEST(GpuCApi, ModularGemmBothOutputsOnUserStream) {
  SKIP_WITHOUT_DEVICE();
  CudaContext c;
  UserStream s;
  // Two moduli, A per modulus, one B for both (stride 0), C and C^T, odd sizes.
  const std::int64_t m = 7, n = 9, k = 33;
  const std::vector<std::uint32_t> moduli = {251, 13};
  std::vector<std::int8_t> a(std::size_t(2 * m * k)), b(std::size_t(n * k));
  std::uint32_t state = 12345;
  auto next = [&](int largest) {
    state = state * 1664525u + 1013904223u;
    return std::int8_t(int(state >> 16) % (2 * largest + 1) - largest);
  };
  for (std::int64_t q = 0; q < 2; ++q)
    for (std::int64_t i = 0; i < m * k; ++i) a[std::size_t(q * m * k + i)] = next(int(moduli[std::size_t(q)] - 1) / 2);
  for (auto& x : b) x = next(6);  // residues of 13, so of 251 too
  gemmkit::cuda::DeviceBuffer<std::int8_t> da(a.size()), db(b.size()), dc(std::size_t(2 * m * n)), dct(std::size_t(2 * m * n));
  da.copy_from_host(a.data(), a.size());
  db.copy_from_host(b.data(), b.size());
  std::size_t bytes = 0;
  ASSERT_EQ(gk_modular_gemm_workspace_bytes(c.ctx, m, n, k, moduli.data(), 2, k, m * k, k, 0, n, m * n, m, m * n, &bytes),
            GK_SUCCESS)
      << gk_last_error();
  ASSERT_EQ(gk_modular_gemm(c.ctx, m, n, k, moduli.data(), 2, da.data(), k, m * k, db.data(), k, 0, dc.data(), n, m * n,
                            dct.data(), m, m * n, nullptr, 0, s.stream),
            GK_SUCCESS)
      << gk_last_error();
  ASSERT_EQ(gk_synchronize(c.ctx, s.stream), GK_SUCCESS) << gk_last_error();
  std::vector<std::int8_t> out(std::size_t(2 * m * n)), out_t(std::size_t(2 * m * n));
  dc.copy_to_host(out.data(), out.size());
  dct.copy_to_host(out_t.data(), out_t.size());
  for (std::int64_t q = 0; q < 2; ++q) {
    const std::int64_t p = moduli[std::size_t(q)], top = (p - 1) / 2;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t l = 0; l < k; ++l) sum += a[std::size_t(q * m * k + i * k + l)] * b[std::size_t(j * k + l)];
        std::int64_t r = sum % p;
        if (r > top) r -= p;
        if (r < -top) r += p;
        EXPECT_EQ(out[std::size_t(q * m * n + i * n + j)], r) << "C_" << q << "(" << i << ", " << j << ")";
        EXPECT_EQ(out_t[std::size_t(q * m * n + j * m + i)], r) << "C_" << q << "^T(" << j << ", " << i << ")";
      }
  }
}

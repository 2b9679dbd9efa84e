// C = alpha A B + beta C through gemmkit's device API, as a program of its own would call it:
// on a CUDA device, with its own device memory and its own stream; on the CPU context (a
// build without CUDA, or no device) the same call on host memory. A row-major 300x200x100
// f32 product and a column-major one (BLAS's layout, padded leading dimensions), each
// checked against a plain triple loop. Exit 0 when both agree, 1 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <gemmkit/context.hpp>
#include <gemmkit/error.hpp>
#include <gemmkit/gemm.hpp>
#include <gemmkit/registry.hpp>
#include <gemmkit/version.hpp>

#ifdef GEMMKIT_HAVE_CUDA
#include <cuda_runtime.h>

#define CUDA_OR_DIE(call)                                                                  \
  do {                                                                                     \
    const cudaError_t status_ = (call);                                                    \
    if (status_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(status_));                \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
#endif

namespace {

// An M x N matrix stored in `layout` with leading dimension ld.
struct Stored {
  std::int64_t rows, cols, ld;
  gemmkit::Layout layout;
  std::vector<float> data;

  Stored(std::int64_t r, std::int64_t c, std::int64_t pad, gemmkit::Layout l)
      : rows(r), cols(c), ld((l == gemmkit::Layout::row_major ? c : r) + pad), layout(l),
        data(std::size_t(ld * (l == gemmkit::Layout::row_major ? r : c)), -99.0f) {}
  float& operator()(std::int64_t i, std::int64_t j) {
    return data[std::size_t(layout == gemmkit::Layout::row_major ? i * ld + j : i + j * ld)];
  }
};

// Small multiples of 1/4: every product and sum below is exact in f32.
Stored filled(std::int64_t rows, std::int64_t cols, std::int64_t pad, gemmkit::Layout layout,
              int seed) {
  Stored s(rows, cols, pad, layout);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      s(i, j) = float((i * 7 + j * 3 + seed) % 11 - 5) / 4.0f;
  return s;
}

// Runs one problem on ctx and compares it with the triple loop; true when they agree.
bool run(gemmkit::Context& ctx, gemmkit::Layout layout, std::int64_t pad) {
  const std::int64_t m = 300, n = 200, k = 100;
  const double alpha = 2.0, beta = -1.0;
  Stored a = filled(m, k, pad, layout, 1), b = filled(k, n, pad, layout, 2);
  Stored c = filled(m, n, pad, layout, 3);
  Stored expected = c;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t l = 0; l < k; ++l) sum += double(a(i, l)) * double(b(l, j));
      expected(i, j) = float(alpha * sum + beta * double(c(i, j)));
    }

  gemmkit::GemmProblem p;
  p.dtype = gemmkit::DType::f32;
  p.layout = layout;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.lda = a.ld;
  p.ldb = b.ld;
  p.ldc = c.ld;
  const char* where = "host memory";
  const gemmkit::KernelEntry* kernel = nullptr;
#ifdef GEMMKIT_HAVE_CUDA
  if (ctx.backend() == gemmkit::Backend::cuda) {
    where = "device memory, on a stream of its own";
    const auto bytes = [](const Stored& s) { return s.data.size() * sizeof(float); };
    float *da = nullptr, *db = nullptr, *dc = nullptr;
    CUDA_OR_DIE(cudaMalloc(&da, bytes(a)));
    CUDA_OR_DIE(cudaMalloc(&db, bytes(b)));
    CUDA_OR_DIE(cudaMalloc(&dc, bytes(c)));
    cudaStream_t stream = nullptr;
    CUDA_OR_DIE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_OR_DIE(cudaMemcpyAsync(da, a.data.data(), bytes(a), cudaMemcpyHostToDevice, stream));
    CUDA_OR_DIE(cudaMemcpyAsync(db, b.data.data(), bytes(b), cudaMemcpyHostToDevice, stream));
    CUDA_OR_DIE(cudaMemcpyAsync(dc, c.data.data(), bytes(c), cudaMemcpyHostToDevice, stream));
    p.a = da;
    p.b = db;
    p.c = dc;
    kernel = &gemmkit::gemm(ctx, p, stream);  // queued on the stream, nothing copied
    CUDA_OR_DIE(cudaMemcpyAsync(c.data.data(), dc, bytes(c), cudaMemcpyDeviceToHost, stream));
    CUDA_OR_DIE(cudaStreamSynchronize(stream));
    CUDA_OR_DIE(cudaStreamDestroy(stream));
    CUDA_OR_DIE(cudaFree(da));
    CUDA_OR_DIE(cudaFree(db));
    CUDA_OR_DIE(cudaFree(dc));
  }
#endif
  if (!kernel) {  // the CPU context: host pointers, runs before it returns
    p.a = a.data.data();
    p.b = b.data.data();
    p.c = c.data.data();
    kernel = &gemmkit::gemm(ctx, p);
  }

  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      worst = std::max(worst, std::fabs(double(c(i, j)) - double(expected(i, j))) /
                                  std::max(1.0, std::fabs(double(expected(i, j)))));
  const bool ok = worst <= 1e-5;
  std::printf("%s: C = %g A B %+g C, %s f32 %lldx%lldx%lld (ld %lld), %s, kernel %s: max error %.3g\n",
              ok ? "ok" : "MISMATCH", alpha, beta,
              layout == gemmkit::Layout::row_major ? "row-major" : "column-major", (long long)m,
              (long long)n, (long long)k, (long long)a.ld, where, kernel->name.c_str(), worst);
  return ok;
}

}  // namespace

int main() {
  try {
    gemmkit::Context ctx;  // the CUDA device when there is one, else the CPU
    std::printf("gemmkit %s, %s context\n", GEMMKIT_VERSION,
                std::string(gemmkit::backend_name(ctx.backend())).c_str());
    bool ok = run(ctx, gemmkit::Layout::row_major, 0);
    ok = run(ctx, gemmkit::Layout::col_major, 5) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_gemm: %s\n", e.what());
    return 1;
  }
}

// A CUDA GEMM kernel written outside gemmkit: C = alpha * A * B + beta * C, f32, A and B
// not transposed. Each block computes a 16 x 16 tile of C; each step of its loop over K
// copies a 16 x 16 tile of A and one of B into shared memory, where all 256 threads of the
// block reuse them, instead of each thread reading its whole row of A and column of B from
// global memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <gemmkit/error.hpp>

#include "my_kernel.hpp"

namespace {

constexpr int kTile = 16;

__global__ void tiled_gemm(int m, int n, int k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;  // of C
  const int col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < k; t += kTile) {
    // Threads past the matrix edge load zeros, which add nothing to the sums.
    a_tile[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? a[row * lda + t + threadIdx.x] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = t + threadIdx.y < k && col < n ? b[(t + threadIdx.y) * ldb + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    for (int l = 0; l < kTile; ++l) sum += a_tile[threadIdx.y][l] * b_tile[l][threadIdx.x];
    __syncthreads();  // everyone is done with them before the next step overwrites them
  }
  if (row < m && col < n) {
    float* out = c + row * ldc + col;
    *out = alpha * sum + (beta == 0.0f ? 0.0f : beta * *out);  // beta == 0: C is write-only
  }
}

// gemmkit passes device pointers and the stream to queue the work on; the kernel must not
// wait for it (the caller, or gemmkit's benchmark, synchronises).
void run(const gemmkit::GemmProblem& p, const gemmkit::KernelLaunch& launch) {
  const dim3 block(kTile, kTile);
  const dim3 grid(unsigned((p.n + kTile - 1) / kTile), unsigned((p.m + kTile - 1) / kTile));
  tiled_gemm<<<grid, block, 0, launch.stream>>>(
      int(p.m), int(p.n), int(p.k), float(p.alpha), static_cast<const float*>(p.a), p.lda,
      static_cast<const float*>(p.b), p.ldb, float(p.beta), static_cast<float*>(p.c), p.ldc);
  if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess)
    throw gemmkit::Error(gemmkit::ErrorCategory::device,
                         std::string("my_cuda_tiled: launch failed: ") + cudaGetErrorString(status));
}

}  // namespace

gemmkit::KernelEntry my_cuda_kernel() {
  gemmkit::KernelEntry e;
  e.name = "my_cuda_tiled";
  e.backend = gemmkit::Backend::cuda;
  e.rung = 100;
  e.summary = "example: 16x16 shared-memory tiles, one thread per element of C (examples/my_kernel)";
  e.dtypes = {gemmkit::DType::f32};
  e.min_compute_capability = 80;  // gemmkit's CUDA code is built for sm_80 and sm_90a
  // What the kernel cannot do is said here, so gemmkit refuses such problems (and the
  // benchmark skips them, saying why) instead of computing something wrong.
  e.precondition = [](const gemmkit::GemmProblem& p) -> std::optional<std::string> {
    if (p.trans_a || p.trans_b) return "reads A and B untransposed only";
    if (p.m > 65535 * kTile) return "M above 65535 tiles (the grid's y limit)";
    if (p.n >= (std::int64_t(1) << 31) || p.k >= (std::int64_t(1) << 31)) return "N and K must fit in an int";
    return std::nullopt;
  };
  e.run = run;
  return e;
}

// The GPU engine of exact walk counting (graph/modular_int8.hpp): powers of the adjacency
// matrix modulo the odd primes below 256, as int8 tensor-core GEMMs with int32
// accumulation, each followed by one kernel that reduces the products back to residues.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cuda/cublas.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/event.hpp"
#include "cuda/launch.hpp"
#include "gemmkit/device.hpp"
#include "graph/modular_int8.hpp"

namespace gemmkit::walks_detail {
namespace {

// Device matrices are n x n inside ld x ld with zeros around (ld a multiple of 64: cuBLAS's
// int8 GEMMs want sizes that are multiples of 4, and the reduction works in 64 x 64 tiles),
// one after another, a stride of ld * ld elements per modulus. The GEMMs run on the whole
// ld x ld: the zero rows and columns add nothing.
std::int64_t leading_dimension(std::int64_t n) { return std::max<std::int64_t>(64, (n + 63) / 64 * 64); }

// c: the int32 products of one modulus, column-major, ld x ld (rows and columns from n on
// are zero and stay so). Each becomes its centred residue mod p,
// written column-major into r_col and row-major into r_row (the two layouts the next GEMM
// reads). Block 256 threads over a 64 x 64 tile: 16-byte loads of 4 rows of a column,
// 4-byte stores, and the tile through shared memory so that the row-major stores are
// 4 bytes of a row each too.
__global__ void reduce_to_residues(const int* __restrict__ c, int p, int n, std::int64_t ld,
                                   std::int8_t* __restrict__ r_col, std::int8_t* __restrict__ r_row) {
  __shared__ std::int8_t tile[64][68];  // tile[column - col0][row - row0], rows padded to 68
  const int half = (p - 1) / 2;
  const int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  auto centred = [&](int x) {
    x %= p;  // in (-p, p)
    return std::int8_t(x > half ? x - p : x < -half ? x + p : x);
  };
  // Thread t: rows 4 (t % 16) .. + 3 of columns t / 16, t / 16 + 16, + 32, + 48.
  const int r4 = (threadIdx.x % 16) * 4;
  for (int j = threadIdx.x / 16; j < 64; j += 16) {
    const int row = row0 + r4, col = col0 + j;
    char4 v = make_char4(0, 0, 0, 0);
    if (col < n && row < n) {  // rows row..row+3 < ld: zero beyond n, reduced to zero
      const int4 x = *reinterpret_cast<const int4*>(c + std::int64_t(col) * ld + row);
      v = make_char4(centred(x.x), centred(x.y), centred(x.z), centred(x.w));
      *reinterpret_cast<char4*>(r_col + std::int64_t(col) * ld + row) = v;
    }
    *reinterpret_cast<char4*>(&tile[j][r4]) = v;
  }
  __syncthreads();
  // Thread t: columns 4 (t % 16) .. + 3 of rows t / 16, + 16, + 32, + 48.
  const int c4 = (threadIdx.x % 16) * 4;
  for (int i = threadIdx.x / 16; i < 64; i += 16) {
    const int row = row0 + i, col = col0 + c4;
    if (row < n && col < n)
      *reinterpret_cast<char4*>(r_row + std::int64_t(row) * ld + col) =
          make_char4(tile[c4][i], tile[c4 + 1][i], tile[c4 + 2][i], tile[c4 + 3][i]);
  }
}

// Z = X Y (ld x ld): X row-major, Y column-major, Z column-major int32. cuBLAS is
// column-major, so X's row-major buffer is X^T to it and the call is "TN", the layout its
// int8 tensor-core kernels take. (One call per modulus: the strided-batched call over 50
// moduli measured 1.8x slower per GEMM on the H200.)
void int8_gemm(cublasHandle_t h, const std::int8_t* x_row, const std::int8_t* y_col, int* z,
               std::int64_t ld) {
  const int one = 1, zero = 0;
  GEMMKIT_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(ld), int(ld),
                                    int(ld), &one, x_row, CUDA_R_8I, int(ld), y_col, CUDA_R_8I, int(ld),
                                    &zero, z, CUDA_R_32I, int(ld), CUBLAS_COMPUTE_32I,
                                    CUBLAS_GEMM_DEFAULT));
}

// Fills x with seeded pseudo-random integers in [-125, 125], as residues are.
template <class T>
__global__ void fill_residue_like(T* x, std::int64_t count, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = T(int(h % 251) - 125);
  }
}

using cuda::Event;
using cuda::elapsed_seconds;

}  // namespace

bool gpu_int8_powers_available() { return cuda_device_available(); }

Int8PowersReport gpu_int8_powers(const Graph& g, const std::vector<std::uint32_t>& primes,
                                 const std::vector<PowerStep>& steps,
                                 const std::vector<std::int64_t>& rows,
                                 const std::vector<std::int64_t>& cols,
                                 std::vector<std::uint32_t>& residues,
                                 const std::function<void(const std::string&)>& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  const std::int64_t n = g.n, ld = leading_dimension(n);
  if (n > int8_k_limit())
    fail(ErrorCategory::usage, "the GPU walk engine takes at most " + std::to_string(int8_k_limit()) +
                                   " vertices (int32 sums of int8 products), not " + std::to_string(n));
  const int nq = int(primes.size());
  const std::size_t per_matrix = std::size_t(ld * ld);
  // Per modulus: A (column-major), R in both layouts (int8) and the products (int32).
  const std::size_t per_modulus = per_matrix * (3 + sizeof(int));
  std::size_t free_bytes = 0, total_bytes = 0;
  GEMMKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int group = int(std::min<std::size_t>(nq, std::size_t(0.85 * double(free_bytes)) / per_modulus));
  if (group < 1)
    fail(ErrorCategory::out_of_memory,
         "the GPU walk engine needs " + std::to_string(per_modulus) + " bytes of device memory for a " +
             std::to_string(n) + "-vertex graph; " + std::to_string(free_bytes) + " of " +
             std::to_string(total_bytes) + " are free");
  cuda::DeviceBuffer<std::int8_t> a_col(per_matrix * group), r_col(per_matrix * group),
      r_row(per_matrix * group);
  cuda::DeviceBuffer<int> products(per_matrix * group);
  // The engine's own context: its cuBLAS handle on the default stream, with a workspace.
  Context ctx(Backend::cuda);
  const cuda::CublasCall cublas(ctx, nullptr, ctx.workspace(nullptr, cuda::cublas_workspace_bytes(ctx)));

  Int8PowersReport report;
  report.batches = (nq + group - 1) / group;
  const int products_per_batch =
      int(std::count_if(steps.begin(), steps.end(), [](const PowerStep& s) { return s.kind != PowerStep::record; }));
  std::vector<std::int8_t> host_col(per_matrix), host_row(per_matrix), host_batch(per_matrix * group);
  const std::size_t per_length = rows.size() * cols.size();
  const Event start, middle, stop;
  for (int q0 = 0; q0 < nq; q0 += group) {
    const int batch = std::min(group, nq - q0);
    // A mod p, centred, in both layouts (padding zero); R starts as A.
    const std::vector<int> batch_moduli(primes.begin() + q0, primes.begin() + q0 + batch);
    for (int b = 0; b < batch; ++b) {
      const std::int64_t p = batch_moduli[b], half = (p - 1) / 2;
      std::fill(host_col.begin(), host_col.end(), 0);
      std::fill(host_row.begin(), host_row.end(), 0);
      for (std::int64_t u = 0; u < n; ++u)
        for (std::int64_t e = g.row_start[u]; e < g.row_start[u + 1]; ++e) {
          std::int64_t x = g.weight_at(e) % p;
          if (x > half) x -= p;
          else if (x < -half) x += p;
          host_row[std::size_t(u * ld + g.target[e])] = std::int8_t(x);
          host_col[std::size_t(g.target[e] * ld + u)] = std::int8_t(x);
        }
      const std::size_t at = per_matrix * std::size_t(b);
      GEMMKIT_CUDA_CHECK(cudaMemcpy(a_col.data() + at, host_col.data(), per_matrix, cudaMemcpyHostToDevice));
      GEMMKIT_CUDA_CHECK(cudaMemcpy(r_col.data() + at, host_col.data(), per_matrix, cudaMemcpyHostToDevice));
      GEMMKIT_CUDA_CHECK(cudaMemcpy(r_row.data() + at, host_row.data(), per_matrix, cudaMemcpyHostToDevice));
    }
    if (q0 == 0) {
      // Untimed warm-up: cuBLAS picks and loads its kernel, and ours loads, on first use.
      int8_gemm(cublas.get(), r_row.data(), r_col.data(), products.data(), ld);
      cudaFuncAttributes attributes;
      GEMMKIT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reduce_to_residues));
      GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
    }
    int done = 0;
    for (const PowerStep& step : steps) {
      if (step.kind == PowerStep::record) {
        // The whole batch's R at once, then row by row of the answer: each row's entries
        // for all the batch's primes stay in cache while they are interleaved.
        GEMMKIT_CUDA_CHECK(cudaMemcpy(host_batch.data(), r_row.data(), per_matrix * std::size_t(batch),
                                      cudaMemcpyDeviceToHost));
#pragma omp parallel for schedule(dynamic, 4)
        for (std::int64_t r = 0; r < std::int64_t(rows.size()); ++r) {
          std::uint32_t* out = &residues[(std::size_t(step.length_index) * per_length +
                                          std::size_t(r) * cols.size()) * std::size_t(nq)];
          for (int b = 0; b < batch; ++b) {
            const std::int64_t p = batch_moduli[b];
            const std::int8_t* row = host_batch.data() + per_matrix * std::size_t(b) + rows[r] * ld;
            for (std::size_t c = 0; c < cols.size(); ++c) {
              const std::int64_t v = row[cols[c]];
              out[c * std::size_t(nq) + std::size_t(q0 + b)] = std::uint32_t(v < 0 ? v + p : v);
            }
          }
        }
        continue;
      }
      if (progress)
        progress("primes " + std::to_string(q0 + 1) + "-" + std::to_string(q0 + batch) + "/" +
                 std::to_string(nq) + ": int8 product " + std::to_string(++done) + "/" +
                 std::to_string(products_per_batch));
      GEMMKIT_CUDA_CHECK(cudaEventRecord(start.get()));
      const std::int8_t* y = step.kind == PowerStep::square ? r_col.data() : a_col.data();
      for (int b = 0; b < batch; ++b) {
        const std::size_t at = per_matrix * std::size_t(b);
        int8_gemm(cublas.get(), r_row.data() + at, y + at, products.data() + at, ld);
      }
      GEMMKIT_CUDA_CHECK(cudaEventRecord(middle.get()));
      const dim3 grid(unsigned(ld / 64), unsigned(ld / 64));
      for (int b = 0; b < batch; ++b) {
        const std::size_t at = per_matrix * std::size_t(b);
        reduce_to_residues<<<grid, 256>>>(products.data() + at, batch_moduli[b], int(n), ld,
                                          r_col.data() + at, r_row.data() + at);
      }
      cuda::check_launch("reduce_to_residues");
      GEMMKIT_CUDA_CHECK(cudaEventRecord(stop.get()));
      report.gemm_seconds += elapsed_seconds(start, stop);
      report.reduce_seconds += elapsed_seconds(middle, stop);
      ++report.gemms;
    }
  }
  report.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report;
}

GemmReferenceTimes gpu_reference_gemm_times(std::int64_t n) {
  // Like the engine's work: back-to-back GEMMs over several sets of operands (more than L2
  // holds), so that the card runs as hot as it does there; seconds per GEMM, the median of
  // three such runs.
  const std::int64_t ld = leading_dimension(n);
  const std::size_t count = std::size_t(ld * ld);
  constexpr int kSets = 4, kGemms = 24;
  cuda::DeviceBuffer<std::int8_t> a(count * kSets), b(count * kSets);
  cuda::DeviceBuffer<int> c(count * kSets);
  // Residue-like random data: the card's clock, and so the speed, depends on the data.
  fill_residue_like<<<1024, 256>>>(a.data(), std::int64_t(a.size()), 1);
  fill_residue_like<<<1024, 256>>>(b.data(), std::int64_t(b.size()), 2);
  cuda::check_launch("fill_residue_like");
  const Event start, stop;
  auto per_gemm = [&](auto&& launch) {
    std::vector<double> s;
    for (int trial = 0; trial < 4; ++trial) {  // the first is the warm-up
      GEMMKIT_CUDA_CHECK(cudaEventRecord(start.get()));
      for (int i = 0; i < kGemms; ++i) launch(std::size_t(i % kSets));
      GEMMKIT_CUDA_CHECK(cudaEventRecord(stop.get()));
      if (trial > 0) s.push_back(elapsed_seconds(start, stop) / kGemms);
      else elapsed_seconds(start, stop);
    }
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  };
  GemmReferenceTimes t;
  // The engine's own context: its cuBLAS handle on the default stream, with a workspace.
  Context ctx(Backend::cuda);
  const cuda::CublasCall cublas(ctx, nullptr, ctx.workspace(nullptr, cuda::cublas_workspace_bytes(ctx)));
  cublasHandle_t h = cublas.get();
  t.int8_seconds = per_gemm([&](std::size_t set) {
    int8_gemm(h, a.data() + set * count, b.data() + set * count, c.data() + set * count, ld);
  });
  cuda::DeviceBuffer<double> da(count), db(count), dc(count);
  fill_residue_like<<<1024, 256>>>(da.data(), std::int64_t(count), 3);
  fill_residue_like<<<1024, 256>>>(db.data(), std::int64_t(count), 4);
  const double one = 1.0, zero = 0.0;
  GEMMKIT_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  t.fp64_seconds = per_gemm([&](std::size_t) {
    GEMMKIT_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(ld), int(ld), int(ld), &one,
                                     da.data(), int(ld), db.data(), int(ld), &zero, dc.data(), int(ld)));
  });
  return t;
}

}  // namespace gemmkit::walks_detail

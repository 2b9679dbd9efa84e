// Rung 23, split-K for the SIMT f32 track. Rung 14 gives each block one output tile and
// all of K, so a product with a small output and a long K (128x128x131072: 2 to 4 tiles)
// keeps a handful of SMs busy for the whole run: 27% of cuBLAS pedantic SGEMM on the H200
// (bench/results/2026-11-24_h200_7eb49c8/).
// Here K is cut into S slices and rung 14's kernel runs them as one strided batch (slice s
// reads A's columns and B's rows [s Ks, (s + 1) Ks): for a row-major A the "matrices" are
// Ks elements apart and overlap, which its pointer arithmetic allows) into S f32 partial
// products in the workspace, S and the tile chosen by a rough cost model so that every SM
// has work (src/ops/gemm/cuda/ladder_composed.cu); then this kernel adds the slices and applies
// alpha and beta. The sum runs in a fixed order (slices in index
// order within each of G groups, then the groups in order), so every run gives the same
// bits. The K columns that do not fill a whole slice (K mod S, fewer than S) are summed
// here too, by the groups, after their slices: as if the last slice had taken them.
// Cost: the partial sums are S x M x N floats written once and read once, against
// 2 M N K flops: for 128x128x131072 with S = 65 about 9 MB of traffic (mostly in L2)
// against 4.3 GFLOP, a few microseconds against about a hundred.
// Measured: see docs/ladder.md.
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

// Groups of slices a column's sum is split into (blockDim.y), at most.
constexpr int kReduceGroups = 8;

// C = alpha * (sum of the slices + the products of K columns [k_rest, k)) + beta * C.
// partials: `slices` matrices (m, n) with leading dimension ldw, slice_stride floats apart.
// Block (32, G): threadIdx.x a column of a 32-column strip (blockIdx.x), threadIdx.y a
// group of slices; the grid's y walks the rows (its limit is 65535 blocks).
template <bool TransA, bool TransB>
__global__ void __launch_bounds__(32 * kReduceGroups)
    split_k_reduce_kernel(const float* __restrict__ partials, int slices,
                          std::int64_t slice_stride, std::int64_t ldw, int k_rest,
                          GemmArgs<float> g) {
  __shared__ float group_sums[kReduceGroups][32];
  const int groups = blockDim.y, group = threadIdx.y;
  const int j = blockIdx.x * 32 + threadIdx.x;
  // This group's slices [s0, s1) and leftover K columns [p0, p1): fixed by the launch's
  // shape alone, so the order of every addition is too.
  const int s0 = int(std::int64_t(slices) * group / groups);
  const int s1 = int(std::int64_t(slices) * (group + 1) / groups);
  const int rest = g.k - k_rest;
  const int p0 = k_rest + rest * group / groups, p1 = k_rest + rest * (group + 1) / groups;
  for (int i = blockIdx.y; i < g.m; i += gridDim.y) {
    float sum = 0.0f;
    if (j < g.n) {
      const float* column = partials + std::int64_t(i) * ldw + j;
#pragma unroll 8
      for (int s = s0; s < s1; ++s) sum += column[std::int64_t(s) * slice_stride];
      for (int p = p0; p < p1; ++p) sum = fmaf(load_a<TransA>(g, i, p), load_b<TransB>(g, p, j), sum);
    }
    group_sums[group][threadIdx.x] = sum;
    __syncthreads();
    if (group == 0 && j < g.n) {
      float total = group_sums[0][threadIdx.x];
      for (int t = 1; t < groups; ++t) total += group_sums[t][threadIdx.x];
      store_c(g, i, j, total);
    }
    __syncthreads();  // group_sums is rewritten for the next row
  }
}

}  // namespace gemmkit::cuda::kernels

// Rung 10: 128-bit memory accesses (FP32 only). As written, rung 9 moves every float with
// its own instruction: 4 global loads per thread per K tile, 16 shared loads per 64 FMAs,
// one store per element of C. The load/store units issue one instruction per warp per
// cycle whatever its width, so moving 16 bytes per instruction instead of 4 cuts that
// issue pressure by up to 4x:
//   - global loads of op(A) and op(B) are float4 along the contiguous dimension of their
//     storage (LDG.E.128), when the operand allows it (see below): rung 8's tile loader
//     with 16-byte chunks (VecTileLoader);
//   - the op(A) tile is stored TRANSPOSED in shared memory, As[BK][BM], so the TM = 8
//     values a thread needs at step p are contiguous and come in two LDS.128; the op(B)
//     fragment, already contiguous in Bs[BK][BN], also comes in two LDS.128. (nvcc can
//     merge rung 9's scalar shared reads by itself, but only by fetching a whole (TM, BK)
//     block of As rows at once, 64 registers on top of the accumulators; here a step
//     needs just the 16 values it uses.)
//   - C is read (beta != 0) and written with float4 when aligned.
// So a step of the outer product costs 4 shared-load instructions instead of 16.
//
// A float4 global access needs a 16-byte aligned address: the launcher instantiates the
// vector path for an operand only if its base pointer is 16-byte aligned and its leading
// dimension is a multiple of 4 (tile origins along the contiguous dimension are multiples
// of 4 by construction), and the scalar path otherwise. Even on the vector path a chunk of
// 4 that would cross the end of a stored row is loaded element by element with guards, so
// no global read ever leaves the matrix.
#pragma once

#include <cstdint>

#include "ops/gemm/cuda/common/common.cuh"
#include "ops/gemm/cuda/simt/08_blocktile_1d.cuh"

namespace gemmkit::cuda::kernels::simt {

// The loader of rung 8 (TileLoader) for an FP32 operand, with what this rung adds to it:
// chunks of 4 consecutive stored elements moved by one 128-bit load where Vec says the
// operand allows it (one element at a time otherwise, as in rung 8). The shared tile is
// always kk-major, dst[kk * SK + w], so a thread's fragment of consecutive w is contiguous.
// When w is the contiguous stored dimension a chunk lands as one 128-bit shared store;
// otherwise its 4 values go to 4 rows of the tile.
template <int BW, int BK, int NT, bool KContig, bool Vec, int SK>
using VecTileLoader = TileLoader<float, BW, BK, NT, KContig, SK, 1, Vec ? 4 : 1>;

// alpha * acc + beta * C for 4 consecutive elements of one row of C at c, which is 16-byte
// aligned. beta == 0 never reads C.
__device__ __forceinline__ void store_c4(float* c, float4 acc, float alpha, float beta) {
  float4 out;
  if (beta == 0.0f) {
    out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
  } else {
    const float4 old = *reinterpret_cast<const float4*>(c);
    out = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                      alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
  }
  *reinterpret_cast<float4*>(c) = out;
}

// Stores the chunk of 4 elements of one row of C at c, of which cols_left lie inside C
// (any value; <= 0 stores nothing). VecC: c is 16-byte aligned.
template <bool VecC>
__device__ __forceinline__ void store_c_chunk(float* c, int cols_left, float4 acc, float alpha,
                                              float beta) {
  if (VecC && cols_left >= 4) {
    store_c4(c, acc, alpha, beta);
    return;
  }
  const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    if (q < cols_left) c[q] = beta == 0.0f ? alpha * v[q] : alpha * v[q] + beta * c[q];
  }
}

template <bool TransA, bool TransB, bool VecA, bool VecB, bool VecC>
__global__ void __launch_bounds__(256) vectorized_kernel(GemmArgs<float> g) {
  static_assert(std::is_same_v<decltype(vectorized_kernel<TransA, TransB, VecA, VecB, VecC>), GemmArgsParameters<float>>);
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  constexpr int NT = (BM / TM) * (BN / TN);  // 256
  constexpr int threads_per_row = BN / TN;
  __shared__ __align__(16) float As[BK * BM];  // (BM, BK) tile of op(A), TRANSPOSED: As[p * BM + i]
  __shared__ __align__(16) float Bs[BK * BN];  // (BK, BN) tile of op(B): Bs[p * BN + j]

  const int m0 = int(blockIdx.y) * BM;  // this block's (BM, BN) tile of C starts at (m0, n0)
  const int n0 = int(blockIdx.x) * BN;
  // Thread (ty, tx) owns the (TM, TN) sub-tile at rows ty * TM, columns tx * TN.
  const int tx = int(threadIdx.x) % threads_per_row;
  const int ty = int(threadIdx.x) / threads_per_row;

  VecTileLoader<BM, BK, NT, !TransA, VecA, BM> a_tiles(g.a, g.lda, g.m, m0, g.k);
  VecTileLoader<BN, BK, NT, TransB, VecB, BN> b_tiles(g.b, g.ldb, g.n, n0, g.k);

  float acc[TM][TN] = {};
  float a_frag[TM];  // op(A)(ty * TM + r, p)
  float b_frag[TN];  // op(B)(p, tx * TN + c)
  for (int k_left = g.k; k_left > 0; k_left -= BK) {
    a_tiles.load(As);
    b_tiles.load(Bs);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      // Two 128-bit shared loads per fragment: row p of each tile, TM (TN) consecutive words.
      const float4* a_src = reinterpret_cast<const float4*>(As + p * BM + ty * TM);
      const float4* b_src = reinterpret_cast<const float4*>(Bs + p * BN + tx * TN);
#pragma unroll
      for (int q = 0; q < TM / 4; ++q) {
        const float4 v = a_src[q];
        a_frag[4 * q + 0] = v.x;
        a_frag[4 * q + 1] = v.y;
        a_frag[4 * q + 2] = v.z;
        a_frag[4 * q + 3] = v.w;
      }
#pragma unroll
      for (int q = 0; q < TN / 4; ++q) {
        const float4 v = b_src[q];
        b_frag[4 * q + 0] = v.x;
        b_frag[4 * q + 1] = v.y;
        b_frag[4 * q + 2] = v.z;
        b_frag[4 * q + 3] = v.w;
      }
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int c = 0; c < TN; ++c) acc[r][c] += a_frag[r] * b_frag[c];
    }
    __syncthreads();  // everyone is done with this tile before it is overwritten
    a_tiles.advance();
    b_tiles.advance();
  }

  // Epilogue: this thread's sub-tile, row by row, in chunks of 4 columns.
  const int rows_left = g.m - m0 - ty * TM;  // rows of this thread's sub-tile inside C
  const int cols_left = g.n - n0 - tx * TN;
  float* c_row = g.c + (std::int64_t(m0) + ty * TM) * g.ldc + (std::int64_t(n0) + tx * TN);
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    if (r < rows_left) {
#pragma unroll
      for (int q = 0; q < TN / 4; ++q) {
        const float4 v = make_float4(acc[r][4 * q], acc[r][4 * q + 1], acc[r][4 * q + 2],
                                     acc[r][4 * q + 3]);
        store_c_chunk<VecC>(c_row + 4 * q, cols_left - 4 * q, v, g.alpha, g.beta);
      }
    }
    c_row += g.ldc;
  }
}

}  // namespace gemmkit::cuda::kernels::simt

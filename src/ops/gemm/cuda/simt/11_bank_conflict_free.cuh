// Rung 11: shared memory without bank conflicts (FP32 only). Same tiles, same 128-bit
// accesses as rung 10; what changes is where data sits in shared memory and which threads
// read it together. Shared memory has 32 banks of 4 bytes: word address w lives in bank
// w % 32, and two threads of one request touching different words of the same bank are
// served one after the other. A 128-bit request is served a quarter-warp (8 threads, 128
// bytes) at a time, so it is conflict-free when each quarter-warp reads 8 distinct 16-byte
// chunks that together cover all 32 banks, or the same chunk (a broadcast).
//
// Rung 10 has two conflicts:
//   1. Fragment reads. Thread tx reads op(B) words tx * 8 .. tx * 8 + 7 of a row of Bs in
//      two 128-bit loads. In one load the quarter-warp tx = 0..7 reads chunks at words
//      0, 8, 16, ..., 56: banks {0-3, 8-11, 16-19, 24-27} twice over, a 2-way conflict.
//      Fix: give each thread a 2 x 2 grid of 4 x 4 sub-tiles, columns tx * 4 and
//      64 + tx * 4 (rows likewise ty * 4 and 64 + ty * 4). Now a quarter-warp reads words
//      tx * 4 for tx = 0..7: 32 consecutive words, every bank once. (The op(A) reads are
//      broadcasts either way: a warp holds only two values of ty.) The C stores get the
//      same benefit: a warp writes 256 contiguous bytes of a row per instruction.
//   2. Transposing stores. When op(A) is stored untransposed (and likewise B^T), a thread
//      holds 4 consecutive k of one row i and writes them to 4 rows of As[BK][BM]. With
//      128-word rows, word p * 128 + i is in bank i % 32 whatever p is: the threads of a
//      warp (16 rows i, 2 chunks of k) hit 16 banks with 2 words each, a 2-way conflict
//      (8-way on the scalar path, where a warp holds 4 rows i and all 8 k).
//      Fix: pad each row of the shared tiles to 132 words. Word p * 132 + i is in bank
//      (4 * p + i) % 32: on the vector path the two chunks (p = c and c + 4) land 16 banks
//      apart, covering all 32; on the scalar path i = 0..3 and p = 0..7 give 4 * p + i =
//      0..31. 132 is still a multiple of 4, so every row of the tile stays 16-byte aligned
//      for the 128-bit accesses, and rows stored with one 128-bit store per chunk (A^T, B)
//      remain contiguous runs that are conflict-free with or without the padding.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/simt/10_vectorized.cuh"
#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels::simt {

template <bool TransA, bool TransB, bool VecA, bool VecB, bool VecC>
__global__ void __launch_bounds__(256) bank_conflict_free_kernel(GemmArgs<float> g) {
  static_assert(std::is_same_v<decltype(bank_conflict_free_kernel<TransA, TransB, VecA, VecB, VecC>), GemmArgsParameters<float>>);
  constexpr int BM = 128, BN = 128, BK = 8;
  constexpr int TM = 8, TN = 8;         // per thread: 2 x 2 sub-tiles of (4, 4)
  constexpr int half_m = BM / 2, half_n = BN / 2;  // offset of the second sub-tile row / column
  constexpr int SA = BM + 4, SB = BN + 4;  // padded row lengths of the shared tiles, in words
  constexpr int NT = (BM / TM) * (BN / TN);  // 256
  constexpr int threads_per_row = BN / TN;   // 16
  __shared__ __align__(16) float As[BK * SA];  // (BM, BK) tile of op(A), transposed: As[p * SA + i]
  __shared__ __align__(16) float Bs[BK * SB];  // (BK, BN) tile of op(B): Bs[p * SB + j]

  const int m0 = int(blockIdx.y) * BM;  // this block's (BM, BN) tile of C starts at (m0, n0)
  const int n0 = int(blockIdx.x) * BN;
  // Thread (ty, tx) owns rows {ty * 4 + 0..3, 64 + ty * 4 + 0..3} and the columns
  // {tx * 4 + 0..3, 64 + tx * 4 + 0..3} of the block tile.
  const int tx = int(threadIdx.x) % threads_per_row;
  const int ty = int(threadIdx.x) / threads_per_row;

  VecTileLoader<BM, BK, NT, !TransA, VecA, SA> a_tiles(g.a, g.lda, g.m, m0, g.k);
  VecTileLoader<BN, BK, NT, TransB, VecB, SB> b_tiles(g.b, g.ldb, g.n, n0, g.k);

  // acc[r][c]: row (r < 4 ? ty * 4 + r : 64 + ty * 4 + r - 4), column likewise with tx.
  float acc[TM][TN] = {};
  float a_frag[TM];
  float b_frag[TN];
  for (int k_left = g.k; k_left > 0; k_left -= BK) {
    a_tiles.load(As);
    b_tiles.load(Bs);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        // (4,) chunks of row p: words ty * 4 (+ 64) of As and tx * 4 (+ 64) of Bs.
        const float4 a = *reinterpret_cast<const float4*>(As + p * SA + h * half_m + ty * 4);
        const float4 b = *reinterpret_cast<const float4*>(Bs + p * SB + h * half_n + tx * 4);
        a_frag[4 * h + 0] = a.x;
        a_frag[4 * h + 1] = a.y;
        a_frag[4 * h + 2] = a.z;
        a_frag[4 * h + 3] = a.w;
        b_frag[4 * h + 0] = b.x;
        b_frag[4 * h + 1] = b.y;
        b_frag[4 * h + 2] = b.z;
        b_frag[4 * h + 3] = b.w;
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

  // Epilogue: 8 rows, each two chunks of 4 columns (at tx * 4 and 64 + tx * 4).
  const int m_left = g.m - m0;  // rows / columns of the block tile inside C
  const int n_left = g.n - n0;
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int i = (r < 4 ? 0 : half_m) + ty * 4 + r % 4;  // row within the block tile
    if (i < m_left) {
      float* c_row = g.c + (std::int64_t(m0) + i) * g.ldc + n0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = h * half_n + tx * 4;  // first column of the chunk within the block tile
        const float4 v = make_float4(acc[r][4 * h], acc[r][4 * h + 1], acc[r][4 * h + 2],
                                     acc[r][4 * h + 3]);
        store_c_chunk<VecC>(c_row + j, n_left - j, v, g.alpha, g.beta);
      }
    }
  }
}

}  // namespace gemmkit::cuda::kernels::simt

// Rung 8: shared-memory block tiling with a 1-D thread tile. Rung 7 reads every operand
// element from global memory (or L1/L2) once per use: 2 loads per FMA. Here a block of 512
// threads owns a (64, 64) tile of C and walks K in steps of BK = 8: each step the block
// copies a (64, 8) tile of op(A) and an (8, 64) tile of op(B) into shared memory once,
// coalesced, and then every element of those tiles is used 64 times from shared memory.
// Each thread computes TM = 8 outputs of one column of C, so the op(B) value it needs is
// read from shared memory once into a register and reused TM times; the op(A) values are
// the same for the whole warp (it shares one group of rows) and come as broadcasts. That
// is 9 shared loads per 8 FMAs instead of 16 global ones, and the global traffic drops by
// the tile width (64x).
//
// Edge tiles: loads outside op(A) or op(B) put zeros into shared memory, so the compute
// loop never branches; the epilogue guards every store of C.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels::simt {

// Streams (BW, BK) tiles of one operand into shared memory, one K step at a time: the tile
// loader of rungs 8-11. The operand is seen as X(w, kk): op(A)(i, p) with w = i, or
// op(B)(p, j) with w = j, so both operands share one loader. Its storage is row-major;
// KContig says kk runs along a stored row (A untransposed, or B stored transposed),
// otherwise w does (A^T or B untransposed). Threads are laid along the stored row so that a
// warp reads consecutive addresses in either case, each taking chunks of V consecutive
// stored elements. The shared tile receives X(w, kk) at dst[kk * SK + w * SW]: the caller
// picks the layout through the two strides. Rungs 8 and 9 move one element at a time
// (V = 1); V = 4, 16-byte chunks for FP32, is what rung 10 adds.
//
// Every thread keeps one 64-bit pointer to its first element and bounds counted from the
// current tile origin, so the K loop only adds a constant and nothing can overflow int.
template <class T, int BW, int BK, int NT, bool KContig, int SK, int SW, int V = 1>
struct TileLoader {
  static constexpr int SR = KContig ? BW : BK;  // (SR, SC): the tile as stored in memory
  static constexpr int SC = KContig ? BK : BW;
  static constexpr int chunks_per_row = SC / V;
  static_assert((V == 1 || V == 4) && SC % V == 0, "stored rows must split into chunks of 1 or 4");
  static_assert((SR * chunks_per_row) % NT == 0, "the tile must split evenly among the threads");
  static_assert(NT % chunks_per_row == 0, "a thread's chunks must sit in one column of the stored tile");
  static constexpr int per_thread = SR * chunks_per_row / NT;
  static constexpr int row_step = NT / chunks_per_row;  // stored rows between a thread's chunks

  const T* ptr;              // this thread's first chunk in the current tile
  std::int64_t row_stride;   // row_step stored rows, in elements
  std::int64_t advance_by;   // one K step: BK columns (KContig) or BK rows
  int sr, sc;                // this thread's first chunk within the stored tile
  int rows_left, cols_left;  // stored rows / columns from the tile origin to the edge

  // x: the operand's storage with leading dimension ld; w_total: m (for A) or n (for B);
  // w0: the block's first w; k_total: the shared dimension.
  __device__ TileLoader(const T* x, std::int64_t ld, int w_total, int w0, int k_total) {
    const int t = int(threadIdx.x);
    sr = t / chunks_per_row;
    sc = (t % chunks_per_row) * V;
    // Tile origin in storage coordinates: (w0, 0) if KContig, else (0, w0).
    const int r0 = KContig ? w0 : 0;
    const int c0 = KContig ? 0 : w0;
    rows_left = KContig ? w_total - w0 : k_total;
    cols_left = KContig ? k_total : w_total - w0;
    ptr = x + (std::int64_t(r0) + sr) * ld + (std::int64_t(c0) + sc);
    row_stride = std::int64_t(row_step) * ld;
    advance_by = KContig ? std::int64_t(BK) : std::int64_t(BK) * ld;
  }

  __device__ __forceinline__ void load(T* __restrict__ dst) const {
#pragma unroll
    for (int e = 0; e < per_thread; ++e) {
      const int r = sr + e * row_step;  // stored row within the tile
      if constexpr (V == 4) {
        static_assert(std::is_same_v<T, float> && SW == 1 && SK % 4 == 0,
                      "16-byte chunks: FP32, a kk-major tile with 16-byte aligned rows");
        const float* src = ptr + e * row_stride;
        const bool row_in = r < rows_left;
        float4 v;
        if (row_in && sc + 4 <= cols_left) {
          v = __ldg(reinterpret_cast<const float4*>(src));  // whole chunk inside: 128-bit
        } else {
          // A chunk at the edge: only the elements that exist are read.
          v.x = row_in && sc + 0 < cols_left ? __ldg(src + 0) : 0.0f;
          v.y = row_in && sc + 1 < cols_left ? __ldg(src + 1) : 0.0f;
          v.z = row_in && sc + 2 < cols_left ? __ldg(src + 2) : 0.0f;
          v.w = row_in && sc + 3 < cols_left ? __ldg(src + 3) : 0.0f;
        }
        if constexpr (KContig) {
          // Stored (w, kk): the chunk is 4 consecutive kk of one w, 4 rows of the tile.
          dst[(sc + 0) * SK + r] = v.x;
          dst[(sc + 1) * SK + r] = v.y;
          dst[(sc + 2) * SK + r] = v.z;
          dst[(sc + 3) * SK + r] = v.w;
        } else {
          // Stored (kk, w): the chunk is 4 consecutive w of one kk, one 128-bit store.
          *reinterpret_cast<float4*>(dst + r * SK + sc) = v;
        }
      } else {
        const bool in = r < rows_left && sc < cols_left;
        const T v = in ? __ldg(ptr + e * row_stride) : T(0);
        const int w = KContig ? r : sc;
        const int kk = KContig ? sc : r;
        dst[kk * SK + w * SW] = v;
      }
    }
  }

  // Moves to the next K step.
  __device__ __forceinline__ void advance() {
    ptr += advance_by;
    if (KContig) cols_left -= BK;
    else rows_left -= BK;
  }
};

template <bool TransA, bool TransB, class T, int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM) blocktile_1d_kernel(GemmArgs<T> g) {
  static_assert(std::is_same_v<decltype(blocktile_1d_kernel<TransA, TransB, T, BM, BN, BK, TM>), GemmArgsParameters<T>>);
  constexpr int NT = BM * BN / TM;
  static_assert(BM % TM == 0, "a thread's TM rows must fit in the block's BM rows");
  __shared__ T As[BM * BK];  // (BM, BK) tile of op(A), row-major: As[i * BK + p]
  __shared__ T Bs[BK * BN];  // (BK, BN) tile of op(B), row-major: Bs[p * BN + j]

  const int m0 = int(blockIdx.y) * BM;  // this block's (BM, BN) tile of C starts at (m0, n0)
  const int n0 = int(blockIdx.x) * BN;
  // Thread t owns column tc of the tile and rows tr * TM .. tr * TM + TM - 1. Consecutive
  // threads take consecutive columns: a warp shares tr, so its As reads are broadcasts and
  // its Bs reads are 32 consecutive words.
  const int tc = int(threadIdx.x) % BN;
  const int tr = int(threadIdx.x) / BN;

  // A untransposed is (m, k) with k contiguous; A^T is stored (k, m).
  TileLoader<T, BM, BK, NT, !TransA, 1, BK> a_tiles(g.a, g.lda, g.m, m0, g.k);
  // B untransposed is (k, n) with n contiguous; B^T is stored (n, k).
  TileLoader<T, BN, BK, NT, TransB, BN, 1> b_tiles(g.b, g.ldb, g.n, n0, g.k);

  T acc[TM] = {};
  for (int k_left = g.k; k_left > 0; k_left -= BK) {
    a_tiles.load(As);
    b_tiles.load(Bs);
    __syncthreads();
    // Unrolled by 4, not BK: fully unrolled, the compiler fetches all TM x BK values of As
    // up front (a row of As is contiguous in p, so they merge into 128-bit loads), which
    // needs 64 registers for them alone and spills at the register budget ptxas picks for
    // 512-thread blocks.
#pragma unroll 4
    for (int p = 0; p < BK; ++p) {
      const T b = Bs[p * BN + tc];  // op(B)(p, tc), reused for all TM rows
#pragma unroll
      for (int r = 0; r < TM; ++r) acc[r] += As[(tr * TM + r) * BK + p] * b;
    }
    __syncthreads();  // everyone is done with this tile before it is overwritten
    a_tiles.advance();
    b_tiles.advance();
  }

  if (tc >= g.n - n0) return;
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    if (tr * TM + r < g.m - m0) store_c(g, m0 + tr * TM + r, n0 + tc, acc[r]);
  }
}

}  // namespace gemmkit::cuda::kernels::simt

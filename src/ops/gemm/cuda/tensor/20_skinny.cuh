// Rung 20, skinny products (GEMV-like): min(M, N) <= 64. Rungs 17-19 cut C into 128-wide
// tiles, so with M = 16 seven eighths of every tile is padding, and a grid of N / 256 tiles
// leaves most SMs idle while each streams its whole K. A skinny product is a matrix-vector
// product in disguise: its cost is reading the big operand once, at the memory bandwidth.
// Here:
//   - one kernel for both orientations: the long side of C (R = N or M) is the row index of
//     the big operand X (R x K) and the short side (S <= 64) the column index of the small
//     operand W (K x S); an M-skinny product is run as C^T = op(B)^T op(A)^T with C's row
//     and column strides swapped (the launcher decides, nothing is copied);
//   - a block streams 128 rows of X through a 3- or 4-stage cp.async pipeline (16-byte
//     copies where the operands allow them, element copies otherwise) into swizzled shared
//     memory, in the stored orientation; W's matching K slice rides along in each stage.
//     The loader (skinny_stage) is rung 17's copy_tile with three changes: a swizzle for
//     rows of any width, chunks wholly outside the operands (W's padding, K's end) zeroed
//     by one 16-byte store, and element copies of 4-byte types by cp.async too;
//   - the multiply keeps up with the stream on tensor cores: mma.sync m16n8k16 (bf16, f16;
//     fragments by ldmatrix, .trans for operands stored the other way round, rung 17's
//     helpers) or m16n8k8 (tf32, fragments read element by element), with S padded to 16,
//     32 or 64 columns in registers, not in memory; f32 runs FMAs on the same register
//     layout (and pads S to 8 where it can), so the epilogue and the reduction serve every
//     dtype;
//   - K is split across blocks so that every SM gets about the same K tiles, and the
//     slices are added in split order, so the result has the same bits every run: each
//     block writes its partial sums to the workspace and the last block of a tile to finish
//     (a fence and an atomic counter, zeroed by the launcher) adds them; or, on sm_90 where
//     they fit (cuda_skinny_cluster), up to 8 splits of a tile form a cluster and add up
//     through distributed shared memory (no workspace, no extra launch).
// Measured: see docs/ladder.md.
#pragma once

#include "ops/gemm/cuda/hopper/hopper.cuh"  // clusters (sm_90)
#include "ops/gemm/cuda/tensor/17_mma_sync.cuh"
#include "ops/gemm/cuda/common/tensor_common.cuh"

namespace gemmkit::cuda::kernels {

// C = alpha * X W + beta * C with X (rows x k), W (k x cols), cols <= 64, as the launcher
// sees the problem. X(r, q) is x[r * ldx + q] when XK (K-contiguous), else x[q * ldx + r];
// W(q, s) is w[s * ldw + q] when WK, else w[q * ldw + s]; C(r, s) is at
// c + r * c_row + s * c_col and holds T, or float when c_f32.
template <class T>
struct SkinnyArgs {
  int rows, cols, k;
  float alpha, beta;
  const T* __restrict__ x;
  std::int64_t ldx;
  const T* __restrict__ w;
  std::int64_t ldw;
  void* __restrict__ c;
  std::int64_t c_row, c_col;
  bool c_f32;
  int splits, k_per_split;        // K slice of blockIdx.y: [y * k_per_split, +k_per_split)
  // splits > 1, one of: in_cluster (sm_90: a tile's splits form one cluster and add up in
  // distributed shared memory), or partials and counters in the workspace.
  bool in_cluster;
  float* __restrict__ partials;     // [split][tile][value][thread]
  unsigned* __restrict__ counters;  // blocks of each tile done, zeroed by the launcher
};

// T's element type in shared memory: __nv_bfloat16, __half, or float (tf32 and f32).
// Four warps; SN: tiles of 8 columns of W (S padded to 8 * SN).
//   - Most configurations: 128 rows of X per block (32 per warp), 128 bytes of K per stage,
//     four stages, except at S8 = 32 three (60 KiB), so that three blocks share an SM as at
//     S8 = 8 and 16 (12 warps to hide the fragments' latency, the same bytes in flight).
//   - Tensor cores at S8 = 64 ("wide"): 256 rows (64 per warp, 128 accumulators) and 64
//     bytes of K per stage, so that each W fragment serves four row tiles instead of two:
//     a third fewer ldmatrix per mma; two blocks of 80 KiB per SM. Measured slower than
//     128 rows on the H200 (bf16 8192x64x8192 and 64x8192x8192): switched off, kept for
//     the next measurement.
template <class T>
struct SkinnyConfig {
  static constexpr int kThreads = 128;
  static constexpr int kElems = 16 / int(sizeof(T));  // elements per 16-byte chunk
  template <bool Simt, int SN>
  static constexpr bool wide = false;  // measured slower on the H200 (below): off
  template <bool Simt, int SN>
  static constexpr int BR = wide<Simt, SN> ? 256 : 128;  // rows of X per block
  template <bool Simt, int SN>
  static constexpr int BK = (wide<Simt, SN> ? 64 : 128) / int(sizeof(T));  // K per stage
  template <bool Simt, int SN>
  static constexpr int stages = SN == 4 ? 3 : 4;
  template <bool Simt, int SN>
  static constexpr int smem_bytes =
      stages<Simt, SN> * (BR<Simt, SN> + 8 * SN) * BK<Simt, SN> * int(sizeof(T));
};

// Offset in chunks of chunk `chunk` of row `row` in a tile of `Chunks` 16-byte chunks per
// row, permuted (XOR) so that the 8 rows one ldmatrix phase reads at the same logical
// chunk fall in 8 different 16-byte bank groups: rows of 128 bytes or more XOR with the
// row; narrower rows share a 128-byte line and XOR with the line. Rung 17's
// swizzled_offset is this for 4 and 16 chunks of 16-bit elements.
template <int Chunks>
__device__ __forceinline__ int skinny_chunk(int row, int chunk) {
  if constexpr (Chunks >= 8) return row * Chunks + (chunk ^ (row & 7));
  else return row * Chunks + (chunk ^ ((row / (8 / Chunks)) & (Chunks - 1)));
}

// 16-byte cp.async of which the first `bytes` come from src and the rest are zeros.
__device__ __forceinline__ void cp_async16_fill(std::uint32_t smem_addr, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(src),
               "r"(bytes));
}

// Copies the stored (Rows, Cols) block at (row0, col0) of src into a swizzled tile, zeros
// outside (rows_total, cols_total). 16-byte cp.async for whole chunks where Vec allows;
// otherwise (and for chunks cut by the edge) element by element (cp.async of 4 bytes for 4-byte types, plain loads
// for 16-bit ones).
template <class T, bool Vec, int Rows, int Cols, int Threads>
__device__ __forceinline__ void skinny_stage(T* tile, const T* src, std::int64_t ld, int row0,
                                             int col0, int rows_total, int cols_total) {
  constexpr int E = 16 / int(sizeof(T)), kChunks = Cols / E, kTotal = Rows * kChunks;
  static_assert(Cols % E == 0, "whole chunks per row");
#pragma unroll
  for (int pass = 0; pass < (kTotal + Threads - 1) / Threads; ++pass) {
    const int e = pass * Threads + int(threadIdx.x);
    if (kTotal % Threads != 0 && e >= kTotal) break;
    const int r = e / kChunks, c = e % kChunks;
    const int row = row0 + r, col = col0 + E * c;
    T* dst = tile + skinny_chunk<kChunks>(r, c) * E;
    const bool row_in = row < rows_total;
    if (!row_in || col >= cols_total) {  // wholly outside (W's padding, K's end): zeros
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    } else if (Vec && cols_total - col >= E) {  // a whole chunk inside
      cp_async16_fill(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)),
                      src + std::int64_t(row) * ld + col, 16);
    } else {
      // Element by element: rows not on 16 bytes, or a chunk cut by the edge (a 16-byte
      // cp.async reading fewer bytes is sound, but compute-sanitizer counts all 16 as read
      // past the allocation).
#pragma unroll
      for (int q = 0; q < E; ++q) {
        const bool in = row_in && col + q < cols_total;
        if constexpr (sizeof(T) == 4) {
          cp_async4(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst + q)),
                    in ? src + std::int64_t(row) * ld + col + q : src, in ? 4 : 0);
        } else {
          dst[q] = in ? src[std::int64_t(row) * ld + col + q] : from_f32<T>(0.0f);
        }
      }
    }
  }
}

// d(16 x 8, f32) += a(16 x 8) b(8 x 8), tf32 inputs given as f32 bits (the tensor cores
// read their top 19 bits), in the PTX ISA's m16n8k8 fragment layouts.
__device__ __forceinline__ void mma_16x8x8_tf32(float (&d)[4], const std::uint32_t (&a)[4],
                                                std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Simt: f32 by FMAs (T = float); otherwise tensor cores (T = float means tf32).
// XK, WK: the stored orientations of X and W (SkinnyArgs). SN: W's columns in tiles of 8.
// VecX, VecW: X, W may be copied in 16-byte chunks (start and rows on 16 bytes).
// Launch bounds: at S8 = 64 no minimum (shared memory allows two blocks; up to 255
// registers, which the FMA path needs; the bf16 kernel at 8192x64x8192 fell far behind
// cuBLAS on the H200 when a minimum of two came in with clusters), else three
// blocks per SM (up to 168 registers).
// The kernel's parameters, as the launcher passes them (it is compiled on first use, so the
// host never sees its instantiation; the kernel checks that they agree).
template <class T>
using SkinnyParameters = void(SkinnyArgs<T>);

template <class T, bool Simt, bool XK, bool WK, int SN, bool VecX, bool VecW>
__global__ void __launch_bounds__(128, SN == 8 ? 1 : 3)
    skinny_kernel(const SkinnyArgs<T> g) {
  static_assert(std::is_same_v<decltype(skinny_kernel<T, Simt, XK, WK, SN, VecX, VecW>), SkinnyParameters<T>>);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  using Cfg = SkinnyConfig<T>;
  static_assert(Cfg::kThreads == 128, "the launch bounds repeat the configuration");
  constexpr int S = Cfg::template stages<Simt, SN>, BR = Cfg::template BR<Simt, SN>;
  constexpr int BK = Cfg::template BK<Simt, SN>, E = Cfg::kElems;
  constexpr int WR = BR / 4, MT = WR / 16;  // a warp's rows, in 16-row tiles
  constexpr int S8 = 8 * SN;
  constexpr int kStageElems = (BR + S8) * BK;
  static_assert(!Simt || MT == 2, "the FMA path's row layout is for 32 rows per warp");
  constexpr bool kTf32 = std::is_same_v<T, float> && !Simt;
  static_assert(!Simt || std::is_same_v<T, float>, "the FMA path is f32 only");
  static_assert(Simt || SN % 2 == 0, "ldmatrix.x4 loads W's fragments for 16 columns at once");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  auto tile_x = [&](int s) { return smem + s * kStageElems; };
  auto tile_w = [&](int s) { return smem + s * kStageElems + BR * BK; };

  const int tile = blockIdx.x, split = blockIdx.y;
  const int r0 = tile * BR;
  const int k_begin = split * g.k_per_split;
  const int k_end = min(g.k, k_begin + g.k_per_split);
  const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr = warp * WR;
  const int gq = lane / 4, tq = lane % 4;  // the fragment layouts' group and thread-in-group

  // K slices start on multiples of BK, so only K itself cuts a tile.
  auto load_stage = [&](int kt) {
    const int s = kt % S, k0 = k_begin + kt * BK;
    if constexpr (XK)  // stored (R, K): tile (BR, BK)
      skinny_stage<T, VecX, BR, BK, Cfg::kThreads>(tile_x(s), g.x, g.ldx, r0, k0, g.rows, g.k);
    else  // stored (K, R): tile (BK, BR)
      skinny_stage<T, VecX, BK, BR, Cfg::kThreads>(tile_x(s), g.x, g.ldx, k0, r0, g.k, g.rows);
    if constexpr (WK)  // stored (S, K): tile (S8, BK)
      skinny_stage<T, VecW, S8, BK, Cfg::kThreads>(tile_w(s), g.w, g.ldw, 0, k0, g.cols, g.k);
    else  // stored (K, S): tile (BK, S8)
      skinny_stage<T, VecW, BK, S8, Cfg::kThreads>(tile_w(s), g.w, g.ldw, k0, 0, g.k, g.cols);
  };
  // Element (r, q) of the X tile and (q, s) of the W tile, for the element-wise fragments.
  auto x_at = [&](const T* t, int r, int q) -> float {
    if constexpr (XK) return t[skinny_chunk<BK / E>(r, q / E) * E + q % E];
    else return t[skinny_chunk<BR / E>(q, r / E) * E + r % E];
  };
  auto w_at = [&](const T* t, int q, int s) -> float {
    if constexpr (WK) return t[skinny_chunk<BK / E>(s, q / E) * E + q % E];
    else return t[skinny_chunk<S8 / E>(q, s / E) * E + s % E];
  };

  // acc[i][j] = {(r, c), (r, c + 1), (r', c), (r', c + 1)} with c = 8 j + 2 tq and, in
  // the mma accumulator layout, r = 16 i + gq, r' = r + 8, inside the warp's WR x S8 block.
  // The FMA path keeps the layout but for X stored (K, R) gives each thread four adjacent
  // rows (one 16-byte load): r = 4 gq + 2 i, r' = r + 1. acc_row(2 i + h) is r (h = 0) or
  // r' (h = 1), in the block's tile.
  auto acc_row = [&](int rho) {
    if constexpr (Simt && !XK) return wr + 4 * gq + rho;
    else return wr + 16 * (rho / 2) + gq + 8 * (rho % 2);
  };
  float acc[MT][SN][4] = {};
  cp_async_pipeline<S>(k_tiles, load_stage, [&](int slot) {
    const T* xs = tile_x(slot);
    const T* ws = tile_w(slot);
    if constexpr (Simt) {
      // Four k at a time, read as 16-byte vectors along whichever side is contiguous:
      // 20 to 36 loads from shared memory per 256 FMAs (S8 = 64).
#pragma unroll 2
      for (int q0 = 0; q0 < BK; q0 += 4) {
        float xv[4][4];  // [row rho][k]
        if constexpr (XK) {
#pragma unroll
          for (int rho = 0; rho < 4; ++rho) {
            const float4 v = *reinterpret_cast<const float4*>(
                xs + skinny_chunk<BK / 4>(acc_row(rho), q0 / 4) * 4);
            xv[rho][0] = v.x, xv[rho][1] = v.y, xv[rho][2] = v.z, xv[rho][3] = v.w;
          }
        } else {  // the thread's four rows are one chunk of each k row
#pragma unroll
          for (int kq = 0; kq < 4; ++kq) {
            const float4 v = *reinterpret_cast<const float4*>(
                xs + skinny_chunk<BR / 4>(q0 + kq, (wr + 4 * gq) / 4) * 4);
            xv[0][kq] = v.x, xv[1][kq] = v.y, xv[2][kq] = v.z, xv[3][kq] = v.w;
          }
        }
        float wv[SN][2][4];  // [column tile][column in pair][k]
        if constexpr (WK) {
#pragma unroll
          for (int j = 0; j < SN; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float4 v = *reinterpret_cast<const float4*>(
                  ws + skinny_chunk<BK / 4>(8 * j + 2 * tq + e, q0 / 4) * 4);
              wv[j][e][0] = v.x, wv[j][e][1] = v.y, wv[j][e][2] = v.z, wv[j][e][3] = v.w;
            }
        } else {
#pragma unroll
          for (int kq = 0; kq < 4; ++kq)
#pragma unroll
            for (int j = 0; j < SN; ++j) {
              const int col = 8 * j + 2 * tq;
              const float2 v = *reinterpret_cast<const float2*>(
                  ws + skinny_chunk<S8 / 4>(q0 + kq, col / 4) * 4 + col % 4);
              wv[j][0][kq] = v.x, wv[j][1][kq] = v.y;
            }
        }
#pragma unroll
        for (int kq = 0; kq < 4; ++kq)
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < SN; ++j)
#pragma unroll
              for (int v = 0; v < 4; ++v)
                acc[i][j][v] = fmaf(xv[2 * i + v / 2][kq], wv[j][v % 2][kq], acc[i][j][v]);
      }
    } else if constexpr (kTf32) {
#pragma unroll
      for (int kk = 0; kk < BK; kk += 8) {
        std::uint32_t fa[MT][4], fb[SN][2];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          const int m = wr + 16 * i + gq;
          fa[i][0] = __float_as_uint(x_at(xs, m, kk + tq));
          fa[i][1] = __float_as_uint(x_at(xs, m + 8, kk + tq));
          fa[i][2] = __float_as_uint(x_at(xs, m, kk + tq + 4));
          fa[i][3] = __float_as_uint(x_at(xs, m + 8, kk + tq + 4));
        }
#pragma unroll
        for (int j = 0; j < SN; ++j) {
          fb[j][0] = __float_as_uint(w_at(ws, kk + tq, 8 * j + gq));
          fb[j][1] = __float_as_uint(w_at(ws, kk + tq + 4, 8 * j + gq));
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int j = 0; j < SN; ++j) mma_16x8x8_tf32(acc[i][j], fa[i], fb[j][0], fb[j][1]);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {
        // X fragments of the warp's 16-row tiles: (rows 0-7 | 8-15) x (k 0-7 | 8-15).
        std::uint32_t fa[MT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          const int m = wr + 16 * i;
          if constexpr (XK) {  // tile (BR, BK): row r, chunks of k
            const int row = m + lane % 8 + 8 * ((lane / 8) % 2), chunk = kk / 8 + lane / 16;
            ldmatrix_x4(fa[i], xs + skinny_chunk<BK / 8>(row, chunk) * 8);
          } else {  // tile (BK, BR): row k, chunks of r
            const int row = kk + lane % 8 + 8 * (lane / 16), chunk = (m + 8 * ((lane / 8) % 2)) / 8;
            ldmatrix_x4_trans(fa[i], xs + skinny_chunk<BR / 8>(row, chunk) * 8);
          }
        }
        // W fragments, two 8-column tiles per ldmatrix: r = {k 0-7, k 8-15} of tile 2 jj,
        // then of tile 2 jj + 1; each pair is used at once (fewer live registers).
#pragma unroll
        for (int jj = 0; jj < SN / 2; ++jj) {
          const int n = 16 * jj;
          std::uint32_t r[4];
          if constexpr (WK) {  // tile (S8, BK): row s, chunks of k
            const int row = n + lane % 8 + 8 * (lane / 16), chunk = kk / 8 + (lane / 8) % 2;
            ldmatrix_x4(r, ws + skinny_chunk<BK / 8>(row, chunk) * 8);
          } else {  // tile (BK, S8): row k, chunks of s
            const int row = kk + lane % 8 + 8 * ((lane / 8) % 2), chunk = (n + 8 * (lane / 16)) / 8;
            ldmatrix_x4_trans(r, ws + skinny_chunk<S8 / 8>(row, chunk) * 8);
          }
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            mma_16x8x16<T>(acc[i][2 * jj], fa[i], r[0], r[1]);
            mma_16x8x16<T>(acc[i][2 * jj + 1], fa[i], r[2], r[3]);
          }
        }
      }
    }
  });

  constexpr int kValues = MT * SN * 4;
  float* flat = &acc[0][0][0];
#if __CUDA_ARCH__ >= 900
  if (g.splits > 1 && g.in_cluster) {
    // The tile's splits are the cluster's blocks, rank = split. Each leaves its sums in
    // its own shared memory ([value][thread]); block 0 adds them in rank order.
    float* mine = reinterpret_cast<float*>(smem_raw);
    __syncthreads();  // every warp is done with the pipeline's tiles
#pragma unroll
    for (int v = 0; v < kValues; ++v) mine[v * Cfg::kThreads + threadIdx.x] = flat[v];
    hopper::cluster_sync();
    if (split == 0) {
#pragma unroll
      for (int v = 0; v < kValues; ++v) flat[v] = 0.0f;
      for (int sp = 0; sp < g.splits; ++sp) {
        const float* peer = hopper::map_shared_rank(mine, unsigned(sp));
#pragma unroll
        for (int v = 0; v < kValues; ++v) flat[v] += peer[v * Cfg::kThreads + threadIdx.x];
      }
    }
    hopper::cluster_sync();  // no block leaves while block 0 may still read its shared memory
    if (split != 0) return;
  } else
#else
  if (g.in_cluster) __trap();  // the launcher asks for clusters on sm_90 only
#endif
  if (g.splits > 1) {
    // Partial sums, value v of thread t at [v][t] (coalesced), in this (split, tile) slot.
    const std::int64_t slot = std::int64_t(kValues) * Cfg::kThreads;
    float* mine = g.partials + (std::int64_t(split) * gridDim.x + tile) * slot + threadIdx.x;
#pragma unroll
    for (int v = 0; v < kValues; ++v) mine[v * Cfg::kThreads] = flat[v];
    __threadfence();  // the slices are visible device-wide before the counter says so
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) last = atomicAdd(&g.counters[tile], 1u) == unsigned(g.splits - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    // The last block adds every slice, its own included, in split order: the same bits
    // whichever block finishes last.
#pragma unroll
    for (int v = 0; v < kValues; ++v) flat[v] = 0.0f;
    for (int sp = 0; sp < g.splits; ++sp) {
      const float* from = g.partials + (std::int64_t(sp) * gridDim.x + tile) * slot + threadIdx.x;
#pragma unroll
      for (int v = 0; v < kValues; ++v) flat[v] += __ldcg(from + v * Cfg::kThreads);
    }
  }

  // alpha * acc + beta * C; beta == 0 never reads C (NaN there must not leak in).
  auto store = [&](auto out, int r, int s, float v) {
    using Out = decltype(out);
    Out* p = static_cast<Out*>(g.c) + std::int64_t(r) * g.c_row + std::int64_t(s) * g.c_col;
    v *= g.alpha;
    if (g.beta != 0.0f) v += g.beta * to_f32(*p);
    *p = from_f32<Out>(v);
  };
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int r = r0 + acc_row(2 * i + v / 2);
      if (r >= g.rows) continue;
#pragma unroll
      for (int j = 0; j < SN; ++j) {
        const int s = 8 * j + 2 * tq + v % 2;
        if (s >= g.cols) continue;
        if (g.c_f32) store(float{}, r, s, acc[i][j][v]);
        else store(T{}, r, s, acc[i][j][v]);
      }
    }
#else
  __trap();  // the launcher requires sm_80
#endif
}

}  // namespace gemmkit::cuda::kernels

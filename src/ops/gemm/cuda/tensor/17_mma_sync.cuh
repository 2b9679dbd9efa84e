// Rung 17, mma.sync with ldmatrix, swizzled shared memory and a cp.async pipeline. Rung
// 16's WMMA hides the fragment layout, so the compiler cannot schedule around it, and its
// plain loads stall the warps while each tile arrives. Here:
//   - mma.sync.m16n8k16 (the instruction WMMA compiles to, HMMA in SASS) with its
//     documented register layout, so a warp keeps 4 x 4 tiles of 16 x 8 accumulators;
//   - ldmatrix loads a warp's fragments, four 8 x 8 blocks per instruction (.trans for an
//     operand stored the other way round), instead of one element per thread;
//   - shared-memory tiles keep the stored orientation, with each row's 16-byte chunks
//     permuted by XOR with the row (a swizzle), so the eight rows one ldmatrix phase reads
//     fall in eight different bank groups;
//   - four stages of cp.async (rung 13's pipeline) keep copies of later K tiles in flight
//     while the tensor cores work on this one.
#pragma once

#include "ops/gemm/cuda/simt/13_cp_async.cuh"
#include "ops/gemm/cuda/common/tensor_common.cuh"

namespace gemmkit::cuda::kernels {

template <class T>
struct MmaSyncConfig {
  static constexpr int BM = 128, BN = 128, BK = 32;
  static constexpr int WM = 64, WN = 32;              // warp tile: 4 x 4 mma tiles of 16 x 8
  static constexpr int kWarpsN = BN / WN;             // 4 x 2 warps
  static constexpr int kThreads = (BM / WM) * kWarpsN * 32;
  static constexpr int kStages = 4;
  static constexpr int kTileElems = BM * BK;          // A and B tiles are both 4096 elements
  static constexpr int kStageBytes = 2 * kTileElems * int(sizeof(T));
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static_assert(BM == BN, "A and B tiles share one shape so one copy routine serves both");
};

// A (rows, 8 * chunks) tile of 16-byte chunks in shared memory, swizzled: chunk c of row r
// is stored at chunk c ^ f(r), f chosen so that 8 consecutive rows at one chunk land in 8
// different 16-byte bank groups (rows of 64 bytes pair up in a 128-byte line; rows of 256
// bytes do not).
template <int Chunks>
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {  // in elements
  static_assert(Chunks == 4 || Chunks == 16, "tile rows of 64 or 256 bytes");
  const int phys = Chunks == 4 ? chunk ^ ((row >> 1) & 3) : chunk ^ (row & 7);
  return (row * Chunks + phys) * 8;
}

// Copies the stored operand's (rows, cols) block at (row0, col0) into a swizzled tile, zeros
// outside (rows_total, cols_total). 16-byte cp.async where the chunk lies wholly inside and
// Vec allows it (aligned rows); element by element otherwise.
template <class T, bool Vec, int Rows, int Cols, int Threads>
__device__ __forceinline__ void copy_tile(T* tile, const T* src, std::int64_t ld, int row0,
                                          int col0, int rows_total, int cols_total) {
  constexpr int kChunks = Cols / 8;
  for (int e = threadIdx.x; e < Rows * kChunks; e += Threads) {
    const int r = e / kChunks, c = e % kChunks;
    const int row = row0 + r, col = col0 + 8 * c;
    T* dst = tile + swizzled_offset<kChunks>(r, c);
    const T* from = src + std::int64_t(row) * ld + col;
    if (Vec && row < rows_total && col + 8 <= cols_total) {
      cp_async16(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), from);
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q)
        dst[q] = row < rows_total && col + q < cols_total ? from[q] : from_f32<T>(0.0f);
    }
  }
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(p))));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(p))));
}

// The cp.async pipeline of rungs 17 and 20: S shared-memory slots over k_tiles K tiles.
// load_stage(t) queues tile t's copies into slot t % S; multiply(slot) runs once every
// thread's copies of that slot's tile have landed, with the next S - 2 tiles in flight.
template <int S, class Load, class Multiply>
__device__ __forceinline__ void cp_async_pipeline(int k_tiles, Load&& load_stage, Multiply&& multiply) {
  for (int kt = 0; kt < S - 1; ++kt) {
    if (kt < k_tiles) load_stage(kt);
    cp_async_commit();  // an empty group past the last tile keeps the wait count uniform
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<S - 2>();
    __syncthreads();  // tile kt is here for everyone, and tile kt - 1's slot is free
    if (kt + S - 1 < k_tiles) load_stage(kt + S - 1);
    cp_async_commit();
    multiply(kt % S);
  }
  cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits
}

// d(16 x 8, f32) += a(16 x 16) b(16 x 8) in the PTX ISA's m16n8k16 fragment layouts.
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const std::uint32_t (&a)[4],
                                            std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// TransA: A stored (k, m); TransB: B stored (n, k). Tiles keep the stored orientation:
// (BM, BK) or (BK, BM) for A, (BK, BN) or (BN, BK) for B.
template <class T, bool TransA, bool TransB, bool VecA, bool VecB>
__global__ void __launch_bounds__(MmaSyncConfig<T>::kThreads)
    mma_sync_kernel(const TensorArgs<T> g) {
  static_assert(std::is_same_v<decltype(mma_sync_kernel<T, TransA, TransB, VecA, VecB>), TensorArgsParameters<T>>);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  using Cfg = MmaSyncConfig<T>;
  constexpr int S = Cfg::kStages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  auto tile_a = [&](int s) { return smem + s * 2 * Cfg::kTileElems; };
  auto tile_b = [&](int s) { return smem + s * 2 * Cfg::kTileElems + Cfg::kTileElems; };

  const int n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  const int m0 = (blockIdx.x / n_tiles) * Cfg::BM, n0 = (blockIdx.x % n_tiles) * Cfg::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / Cfg::kWarpsN) * Cfg::WM, wn = (warp % Cfg::kWarpsN) * Cfg::WN;
  const int k_tiles = (g.k + Cfg::BK - 1) / Cfg::BK;

  auto load_stage = [&](int kt) {
    const int s = kt % S, k0 = kt * Cfg::BK;
    if constexpr (TransA)  // stored (k, m): rows of M
      copy_tile<T, VecA, Cfg::BK, Cfg::BM, Cfg::kThreads>(tile_a(s), g.a, g.lda, k0, m0, g.k, g.m);
    else
      copy_tile<T, VecA, Cfg::BM, Cfg::BK, Cfg::kThreads>(tile_a(s), g.a, g.lda, m0, k0, g.m, g.k);
    if constexpr (TransB)  // stored (n, k): rows of K
      copy_tile<T, VecB, Cfg::BN, Cfg::BK, Cfg::kThreads>(tile_b(s), g.b, g.ldb, n0, k0, g.n, g.k);
    else
      copy_tile<T, VecB, Cfg::BK, Cfg::BN, Cfg::kThreads>(tile_b(s), g.b, g.ldb, k0, n0, g.k, g.n);
  };

  float acc[4][4][4] = {};  // [m tile][n tile][fragment]
  cp_async_pipeline<S>(k_tiles, load_stage, [&](int slot) {
    const T* a = tile_a(slot);
    const T* b = tile_b(slot);
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += 16) {
      // A fragments of the warp's four 16-row tiles: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15).
      std::uint32_t fa[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int m = wm + 16 * i;
        if constexpr (TransA) {  // tile (BK, BM): row k, chunks of m
          const int row = kk + lane % 8 + 8 * (lane / 16), chunk = (m + 8 * ((lane / 8) % 2)) / 8;
          ldmatrix_x4_trans(fa[i], a + swizzled_offset<Cfg::BM / 8>(row, chunk));
        } else {  // tile (BM, BK): row m, chunks of k
          const int row = m + lane % 8 + 8 * ((lane / 8) % 2), chunk = kk / 8 + lane / 16;
          ldmatrix_x4(fa[i], a + swizzled_offset<Cfg::BK / 8>(row, chunk));
        }
      }
      // B fragments, two 8-column tiles per ldmatrix: fb[j] = {k 0-7, k 8-15} of tile j.
      std::uint32_t fb[4][2];
#pragma unroll
      for (int jj = 0; jj < 2; ++jj) {
        const int n = wn + 16 * jj;
        std::uint32_t r[4];
        if constexpr (TransB) {  // tile (BN, BK): row n, chunks of k
          const int row = n + lane % 8 + 8 * (lane / 16), chunk = kk / 8 + (lane / 8) % 2;
          ldmatrix_x4(r, b + swizzled_offset<Cfg::BK / 8>(row, chunk));
        } else {  // tile (BK, BN): row k, chunks of n
          const int row = kk + lane % 8 + 8 * ((lane / 8) % 2), chunk = (n + 8 * (lane / 16)) / 8;
          ldmatrix_x4_trans(r, b + swizzled_offset<Cfg::BN / 8>(row, chunk));
        }
        fb[2 * jj][0] = r[0];
        fb[2 * jj][1] = r[1];
        fb[2 * jj + 1][0] = r[2];
        fb[2 * jj + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) mma_16x8x16<T>(acc[i][j], fa[i], fb[j][0], fb[j][1]);
    }
  });

  // acc[i][j] = {(r, c), (r, c + 1), (r + 8, c), (r + 8, c + 1)} with r = lane / 4 and
  // c = 2 * (lane % 4) inside the 16 x 8 tile (i, j).
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + wm + 16 * i + lane / 4 + 8 * h;
      if (row >= g.m) continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int col = n0 + wn + 8 * j + 2 * (lane % 4);
        if (col < g.n) store_pair(g, row, col, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
    }
#else
  __trap();  // the launcher requires sm_80
#endif
}

}  // namespace gemmkit::cuda::kernels

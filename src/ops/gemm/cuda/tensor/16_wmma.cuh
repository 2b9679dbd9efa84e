// Rung 16, tensor cores through WMMA. Every rung so far multiplies with FMA instructions,
// one multiply-add per thread per instruction. Tensor cores multiply small matrices in one
// warp-wide instruction: a 16 x 16 x 16 product (8 x 16 x 16 in tf32) of half-precision
// inputs summed in FP32. The portable way to reach them is the WMMA API: a warp loads
// "fragments" of A and B from shared memory, mma_sync multiplies them, and the layout of
// the fragments across the warp's registers stays opaque.
// Tiling as in the SIMT rungs: a (BM, BK) tile of op(A) and a (BK, BN) tile of op(B) in
// shared memory (converted from any transpose, zero-padded at the edges), each warp owning
// a 64 x 32 piece of the 128 x 128 block tile. Loads are plain, one buffer: the rungs above
// add the copy pipeline and the Hopper instructions.
//
// The tensor track (gemm/tensor/, rungs 16, 17 and 20) multiplies on tensor cores with
// warp-wide instructions (sm_80 and later), in namespace gemmkit::cuda::kernels. Operands
// (gemm/tensor_common.cuh, TensorArgs<T>): op(A) (m, k) and op(B) (k, n) row-major with
// TransA / TransB as in the SIMT track, but the inputs T are __nv_bfloat16, __half, or
// float read as tf32; products are summed in FP32, alpha and beta are float, and C holds T
// or float (c_f32); store_pair writes two neighbouring outputs of C. Grid: one-dimensional,
// one block per (BM, BN) tile of C, the tiles in row-major order (blockIdx.x = tile row *
// n_tiles + tile column), warps laid out over the tile. Rung 20 differs: it sees the
// problem as a long operand X times a narrow W (SkinnyArgs), blockIdx.x over blocks of
// rows of X and blockIdx.y over slices of K. Tile loaders: rung 16 copies element by
// element through registers; rung 17 copies 16-byte chunks with cp.async into swizzled
// tiles (copy_tile); rung 20 does the same with its own swizzle and zero-filled chunks for
// the padding of W (skinny_stage).
#pragma once

#include <mma.h>

#include "ops/gemm/cuda/common/tensor_common.cuh"

namespace gemmkit::cuda::kernels {

template <class T>
struct WmmaConfig {
  static constexpr bool kTf32 = std::is_same_v<T, float>;
  static constexpr int BM = 128, BN = 128, BK = 32;
  static constexpr int kFragK = kTf32 ? 8 : 16;  // WMMA shapes: 16x16x16, or 16x16x8 for tf32
  static constexpr int WM = 64, WN = 32;          // warp tile: 4 x 2 fragments of 16 x 16
  static constexpr int kThreads = (BM / WM) * (BN / WN) * 32;
  // Rows padded by 16 bytes so the fragment loads do not all hit the same banks.
  static constexpr int kLdA = BK + 16 / int(sizeof(T));
  static constexpr int kLdB = BN + 16 / int(sizeof(T));
  static constexpr int kLdC = WN + 4;  // float staging of one warp's tile for the epilogue
  static constexpr int kOperandBytes = (BM * kLdA + BK * kLdB) * int(sizeof(T));
  static constexpr int kStagingBytes = (kThreads / 32) * WM * kLdC * 4;
  static constexpr int kSmemBytes = kOperandBytes > kStagingBytes ? kOperandBytes : kStagingBytes;
};

template <class T>
struct WmmaInput {  // the element type WMMA fragments of T are declared with
  using type = T;
};
template <>
struct WmmaInput<float> {
  using type = nvcuda::wmma::precision::tf32;
};

template <class T, bool TransA, bool TransB>
__global__ void __launch_bounds__(WmmaConfig<T>::kThreads)
    wmma_kernel(const TensorArgs<T> g) {
  static_assert(std::is_same_v<decltype(wmma_kernel<T, TransA, TransB>), TensorArgsParameters<T>>);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // bf16 and tf32 fragments need sm_80
  using namespace nvcuda;
  using Cfg = WmmaConfig<T>;
  using In = typename WmmaInput<T>::type;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* tile_a = reinterpret_cast<T*>(smem_raw);  // (BM, BK), row stride kLdA
  T* tile_b = tile_a + Cfg::BM * Cfg::kLdA;    // (BK, BN), row stride kLdB

  const int n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  const int m0 = (blockIdx.x / n_tiles) * Cfg::BM, n0 = (blockIdx.x % n_tiles) * Cfg::BN;
  const int warp = threadIdx.x / 32;
  const int wm = (warp / (Cfg::BN / Cfg::WN)) * Cfg::WM, wn = (warp % (Cfg::BN / Cfg::WN)) * Cfg::WN;

  wmma::fragment<wmma::accumulator, 16, 16, Cfg::kFragK, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const T zero = from_f32<T>(0.0f);
  for (int k0 = 0; k0 < g.k; k0 += Cfg::BK) {
    // op(A)(m0 + i, k0 + p) and op(B)(k0 + p, n0 + j), zero outside the matrices. Threads
    // walk the stored matrix's contiguous dimension, so global reads are coalesced.
    for (int e = threadIdx.x; e < Cfg::BM * Cfg::BK; e += Cfg::kThreads) {
      const int i = TransA ? e % Cfg::BM : e / Cfg::BK, p = TransA ? e / Cfg::BM : e % Cfg::BK;
      const int row = m0 + i, kk = k0 + p;
      T v = zero;
      if (row < g.m && kk < g.k)
        v = TransA ? g.a[std::int64_t(kk) * g.lda + row] : g.a[std::int64_t(row) * g.lda + kk];
      tile_a[i * Cfg::kLdA + p] = v;
    }
    for (int e = threadIdx.x; e < Cfg::BK * Cfg::BN; e += Cfg::kThreads) {
      const int p = TransB ? e % Cfg::BK : e / Cfg::BN, j = TransB ? e / Cfg::BK : e % Cfg::BN;
      const int kk = k0 + p, col = n0 + j;
      T v = zero;
      if (kk < g.k && col < g.n)
        v = TransB ? g.b[std::int64_t(col) * g.ldb + kk] : g.b[std::int64_t(kk) * g.ldb + col];
      tile_b[p * Cfg::kLdB + j] = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += Cfg::kFragK) {
      wmma::fragment<wmma::matrix_a, 16, 16, Cfg::kFragK, In, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, Cfg::kFragK, In, wmma::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        wmma::load_matrix_sync(fa[i], tile_a + (wm + 16 * i) * Cfg::kLdA + kk, Cfg::kLdA);
        if constexpr (Cfg::kTf32)
#pragma unroll
          for (int t = 0; t < fa[i].num_elements; ++t) fa[i].x[t] = wmma::__float_to_tf32(fa[i].x[t]);
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        wmma::load_matrix_sync(fb[j], tile_b + kk * Cfg::kLdB + wn + 16 * j, Cfg::kLdB);
        if constexpr (Cfg::kTf32)
#pragma unroll
          for (int t = 0; t < fb[j].num_elements; ++t) fb[j].x[t] = wmma::__float_to_tf32(fb[j].x[t]);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();  // the tiles are overwritten next
  }

  // The fragments' layout is opaque: stage the warp's 64 x 32 floats in shared memory
  // (the operand tiles are free now), then write C with bounds checks.
  float* staging = reinterpret_cast<float*>(smem_raw) + warp * Cfg::WM * Cfg::kLdC;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(staging + 16 * i * Cfg::kLdC + 16 * j, acc[i][j], Cfg::kLdC,
                              wmma::mem_row_major);
  __syncwarp();
  const int lane = threadIdx.x % 32;
  for (int e = lane; e < Cfg::WM * Cfg::WN / 2; e += 32) {  // pairs of columns
    const int r = e / (Cfg::WN / 2), cpair = 2 * (e % (Cfg::WN / 2));
    const int row = m0 + wm + r, col = n0 + wn + cpair;
    if (row < g.m)
      store_pair(g, row, col, staging[r * Cfg::kLdC + cpair], staging[r * Cfg::kLdC + cpair + 1]);
  }
#else
  __trap();  // the launcher requires sm_80
#endif
}

}  // namespace gemmkit::cuda::kernels

// Rung 12, warp tiling. Rung 11 lets each thread walk its own 8x8 sub-tile; here the block
// tile (BM, BN) is cut into warp tiles (WM, WN) and every warp covers its tile with 32
// lanes of 4x4 fragments, WMITER x WNITER times. A warp's fragment reads then touch one
// contiguous run of shared memory per k (few wavefronts, broadcasts), the per-thread
// tile can grow to 8x16 without the block growing, and the block keeps the next K tile
// in flight: global loads for tile t+1 go to registers while tile t is multiplied, and two
// shared-memory buffers need only one barrier per K tile.
//
// Layout in shared memory, for both operands: (BK, R + 4) with R = BM for A and BN for B,
// the long side contiguous, so a lane reads its 4 consecutive m (or n) with one 128-bit
// load. The +4 padding makes the transposing copies (an operand stored with k contiguous)
// bank-conflict free: lanes take 8 consecutive k of 4 rows, and row k of the tile starts
// 4 banks after row k-1, so (4k + r) mod 32 is a different bank for each of the 32 lanes.
//
// The tile loader is new here (TileCopy; rungs 8-11 use rung 8's TileLoader): where
// TileLoader stores each element into shared memory as it loads it, TileCopy splits the
// copy into fetch() (global memory to registers, before the multiply) and store()
// (registers to the other shared buffer, after it), for the layout above.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/common/common.cuh"

namespace gemmkit::cuda::kernels {

template <int BM_, int BN_, int BK_, int WM_, int WN_, int WMITER_, int WNITER_, int STAGES_,
          int MIN_BLOCKS_>
struct WarpTileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int WMITER = WMITER_, WNITER = WNITER_, STAGES = STAGES_;
  static constexpr int kMinBlocks = MIN_BLOCKS_;  // blocks per SM the register budget aims at
  static constexpr int kThreads = (BM / WM) * (BN / WN) * 32;
  static constexpr int TM = 4 * WMITER, TN = 4 * WNITER;  // outputs per thread
  static constexpr int LM = WM / TM, LN = WN / TN;        // lanes of a warp along m and n
  static constexpr int kLdA = BM + 4, kLdB = BN + 4;      // padded shared rows (floats)
  static constexpr int kStageFloats = BK * (kLdA + kLdB);
  static constexpr int kSmemBytes = STAGES * kStageFloats * int(sizeof(float));
  static_assert(BM % WM == 0 && BN % WN == 0, "the block tile must be whole warp tiles");
  static_assert(WM % TM == 0 && WN % TN == 0 && LM * LN == 32,
                "a warp tile must be exactly 32 lanes of (TM, TN) thread tiles");
  static_assert(BK % 8 == 0, "transposing copies take 8 consecutive k per lane group");
  static_assert(STAGES >= 2, "at least double buffering");
};

// A strided batch as the warp-tile kernels walk it: blockIdx.z picks the matrix, and a grid
// of fewer z than matrices (the z limit is 65535) steps on by gridDim.z.
struct BatchStrides {
  std::int64_t a = 0, b = 0, c = 0;  // elements between consecutive matrices (0: shared)
  std::int64_t count = 1;
};

// The problem of matrix z of the batch (offsets in 64 bits: z * stride passes 2^31).
__device__ __forceinline__ GemmArgs<float> item_args(GemmArgs<float> g, const BatchStrides& s,
                                                     std::int64_t z) {
  g.a += z * s.a;
  g.b += z * s.b;
  g.c += z * s.c;
  return g;
}

// Copies one (BK, R) tile of an operand into shared memory laid out (BK, R + 4).
// KContig: the operand is stored with k contiguous (element (r, k) at base[r * ld + k]),
// e.g. A not transposed; lanes take 8 consecutive k (one 32-byte sector) of THREADS/8 rows
// and every element is copied alone, transposing on the way.
// Otherwise r is contiguous (element (r, k) at base[k * ld + r]) and lanes take chunks of
// V consecutive r: V = 4 (16 bytes) when Vec says ld and base allow it, else V = 1.
template <int R, int BK, int THREADS, bool KContig, bool Vec>
struct TileCopy {
  static constexpr int kLd = R + 4;
  static constexpr int V = (!KContig && Vec) ? 4 : 1;
  // KContig: thread t -> (r = t / 8, k = t % 8); passes step r by THREADS/8, k by 8.
  // r-contiguous: thread t -> (r = (t % kLanesR) * V, k = t / kLanesR).
  static constexpr int kLanesR = KContig ? THREADS / 8 : (R / V < THREADS ? R / V : THREADS);
  static constexpr int kLanesK = THREADS / kLanesR;
  static constexpr int kPassesR = KContig ? R / kLanesR : R / V / kLanesR;
  static constexpr int kPassesK = BK / kLanesK;
  static constexpr int kStepR = KContig ? kLanesR : kLanesR * V;
  static_assert(KContig ? (THREADS % 8 == 0 && R % kLanesR == 0 && kLanesK == 8)
                        : (R % V == 0 && (R / V) % kLanesR == 0 && THREADS % kLanesR == 0 &&
                           BK % kLanesK == 0),
                "tile copy: the tile is not a whole number of passes of the block");

  const float* origin;   // the operand itself: a valid address for copies of nothing
  const float* base;     // element (r_lane, k_lane) of the operand in the current K tile
  std::int64_t ld;
  std::int64_t step_r;   // elements between passes along r
  int r_lane, k_lane;    // this thread's coordinates within a pass
  int r_left, k_left;    // rows of the operand at or after r_lane; k left after k_lane

  // r0: first row of this block's tile; rows, k: the operand's extent (M or N, and K).
  __device__ TileCopy(const float* operand, std::int64_t ld_, int r0, int rows, int k)
      : origin(operand), ld(ld_) {
    const int t = threadIdx.x;
    if constexpr (KContig) {
      r_lane = t / 8;
      k_lane = t % 8;
    } else {
      r_lane = (t % kLanesR) * V;
      k_lane = t / kLanesR;
    }
    r_left = rows - r0 - r_lane;
    k_left = k - k_lane;
    step_r = KContig ? std::int64_t(kStepR) * ld : kStepR;
    base = operand + (KContig ? std::int64_t(r0 + r_lane) * ld + k_lane
                              : std::int64_t(k_lane) * ld + r0 + r_lane);
    // A thread with nothing in range still gets a valid address to point at.
    if (r_left <= 0 || k_left <= 0) base = operand;
  }

  __device__ const float* at(int pr, int pk) const {
    return base + pr * step_r + (KContig ? pk * 8 : std::int64_t(pk * kLanesK) * ld);
  }
  // How many of the V elements of pass (pr, pk) lie inside the operand (0..V).
  __device__ int valid(int pr, int pk) const {
    const int r = r_left - pr * kStepR, kk = k_left - pk * kLanesK;
    if (kk <= 0 || r <= 0) return 0;
    return r < V ? r : V;
  }
  // Whether every pass of this thread lies inside the operand (no bounds to apply).
  __device__ bool all_inside() const {
    return r_left >= (kPassesR - 1) * kStepR + V && k_left > (kPassesK - 1) * kLanesK;
  }
  // Shared-memory offset (floats) of pass (pr, pk) within a (BK, R + 4) tile.
  __device__ int smem_offset(int pr, int pk) const {
    return (k_lane + pk * kLanesK) * kLd + r_lane + pr * kStepR;
  }
  // Moves `tiles` K tiles on: k advances by tiles * BK.
  __device__ void advance(int tiles = 1) {
    base += KContig ? std::int64_t(tiles) * BK : std::int64_t(tiles) * BK * ld;
    k_left -= tiles * BK;
  }

  // Staged copy (rung 12): global -> registers now, registers -> shared memory later.
  static constexpr int kRegs = kPassesR * kPassesK * V;
  __device__ void fetch(float (&regs)[kRegs]) const {
#pragma unroll
    for (int pr = 0; pr < kPassesR; ++pr)
#pragma unroll
      for (int pk = 0; pk < kPassesK; ++pk) {
        float* out = regs + (pr * kPassesK + pk) * V;
        const int n = valid(pr, pk);
        const float* src = at(pr, pk);
        if constexpr (V == 4) {
          if (n == 4) {
            const float4 v = *reinterpret_cast<const float4*>(src);
            out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
            continue;
          }
        }
#pragma unroll
        for (int e = 0; e < V; ++e) out[e] = e < n ? src[e] : 0.0f;
      }
  }
  __device__ void store(float* tile, const float (&regs)[kRegs]) const {
#pragma unroll
    for (int pr = 0; pr < kPassesR; ++pr)
#pragma unroll
      for (int pk = 0; pk < kPassesK; ++pk) {
        const float* in = regs + (pr * kPassesK + pk) * V;
        float* dst = tile + smem_offset(pr, pk);
        if constexpr (V == 4)
          *reinterpret_cast<float4*>(dst) = make_float4(in[0], in[1], in[2], in[3]);
        else
          *dst = in[0];
      }
  }
};

// This lane's first m (row of C) and n (column of C) within the block's tile: warps are laid
// out (BM / WM, BN / WN), lanes within a warp (LM, LN), each lane starting 4 wide.
template <class Cfg>
__device__ __forceinline__ void lane_origin(int& m, int& n) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  m = (warp / (Cfg::BN / Cfg::WN)) * Cfg::WM + (lane / Cfg::LN) * 4;
  n = (warp % (Cfg::BN / Cfg::WN)) * Cfg::WN + (lane % Cfg::LN) * 4;
}

// The warp tile's share of one K tile: acc += A_tile^T-fragment x B_tile-fragment.
// As is (BK, BM + 4), Bs is (BK, BN + 4); a_col/b_col are this lane's first m and n.
template <class Cfg>
__device__ __forceinline__ void warp_tile_multiply(const float* As, const float* Bs, int a_col,
                                                   int b_col, float (&acc)[Cfg::TM][Cfg::TN]) {
#pragma unroll
  for (int k = 0; k < Cfg::BK; ++k) {
    float a[Cfg::TM], b[Cfg::TN];
    // Fragment i of the lane: 4 consecutive m at a_col + i * (LM * 4).
#pragma unroll
    for (int i = 0; i < Cfg::WMITER; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(As + k * Cfg::kLdA + a_col + i * Cfg::LM * 4);
      a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < Cfg::WNITER; ++j) {
      const float4 v = *reinterpret_cast<const float4*>(Bs + k * Cfg::kLdB + b_col + j * Cfg::LN * 4);
      b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < Cfg::TM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// Where tile `id` of C lies, for (m_tiles, n_tiles) tiles of (bm, bn). Tiles run roughly
// in id order, so walking GROUP_M tile rows at a time down a column strip keeps both the A
// row panels and the B column panels of the tiles in flight inside the L2.
struct TilePosition {
  int m0, n0;
};
__device__ __forceinline__ TilePosition grouped_tile(int id, int m_tiles, int n_tiles, int bm,
                                                     int bn) {
  constexpr int kGroupM = 8;
  const int group_size = kGroupM * n_tiles;
  const int first_m = (id / group_size) * kGroupM;
  const int rows_in_group = min(m_tiles - first_m, kGroupM);
  const int in_group = id % group_size;
  return {(first_m + in_group % rows_in_group) * bm, (in_group / rows_in_group) * bn};
}

// C = alpha * acc + beta * C for this lane's (TM, TN) outputs; 16-byte accesses where the
// four columns are in range and C is aligned for them.
template <class Cfg>
__device__ __forceinline__ void warp_tile_epilogue(const GemmArgs<float>& g, int row0, int col0,
                                                   const float (&acc)[Cfg::TM][Cfg::TN]) {
  const bool c_vec = (g.ldc % 4 == 0) && (reinterpret_cast<std::uintptr_t>(g.c) % 16 == 0);
#pragma unroll
  for (int i = 0; i < Cfg::WMITER; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = row0 + i * Cfg::LM * 4 + r;
      if (row >= g.m) continue;
      float* c_row = g.c + std::int64_t(row) * g.ldc;
#pragma unroll
      for (int j = 0; j < Cfg::WNITER; ++j) {
        const int col = col0 + j * Cfg::LN * 4;
        const float* v = acc[4 * i + r] + 4 * j;
        if (c_vec && col + 3 < g.n) {
          float4* c4 = reinterpret_cast<float4*>(c_row + col);
          float4 out = make_float4(g.alpha * v[0], g.alpha * v[1], g.alpha * v[2], g.alpha * v[3]);
          if (g.beta != 0.0f) {
            const float4 old = *c4;
            out.x += g.beta * old.x, out.y += g.beta * old.y;
            out.z += g.beta * old.z, out.w += g.beta * old.w;
          }
          *c4 = out;
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (col + e < g.n) store_c(g, row, col + e, v[e]);
        }
      }
    }
}

// Rung 12: staged copies (global -> registers -> shared) with two shared buffers. One
// tile of C per block (blockIdx.x) of matrix blockIdx.z of the batch.
template <class Cfg, bool TransA, bool TransB, bool VecA, bool VecB>
__device__ __forceinline__ void warptile_block(const GemmArgs<float>& g, float* smem) {
  static_assert(Cfg::STAGES == 2, "the staged kernel double-buffers");
  // A (m, k) is k-contiguous unless transposed; B (k, n), seen as (n, k), is k-contiguous
  // only when transposed.
  using CopyA = TileCopy<Cfg::BM, Cfg::BK, Cfg::kThreads, !TransA, VecA>;
  using CopyB = TileCopy<Cfg::BN, Cfg::BK, Cfg::kThreads, TransB, VecB>;

  const int m_tiles = (g.m + Cfg::BM - 1) / Cfg::BM, n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  const TilePosition tile = grouped_tile(blockIdx.x, m_tiles, n_tiles, Cfg::BM, Cfg::BN);
  CopyA copy_a(g.a, g.lda, tile.m0, g.m, g.k);
  CopyB copy_b(g.b, g.ldb, tile.n0, g.n, g.k);

  int a_col, b_col;  // lane's first m and n in the tile
  lane_origin<Cfg>(a_col, b_col);

  float acc[Cfg::TM][Cfg::TN] = {};
  float regs_a[CopyA::kRegs], regs_b[CopyB::kRegs];
  const int k_tiles = (g.k + Cfg::BK - 1) / Cfg::BK;
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageFloats; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageFloats + Cfg::BK * Cfg::kLdA; };

  if (k_tiles > 0) {
    copy_a.fetch(regs_a);
    copy_b.fetch(regs_b);
    copy_a.store(stage_a(0), regs_a);
    copy_b.store(stage_b(0), regs_b);
    __syncthreads();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool more = kt + 1 < k_tiles;
    if (more) {  // tile kt+1 travels from global memory while tile kt is multiplied
      copy_a.advance();
      copy_b.advance();
      copy_a.fetch(regs_a);
      copy_b.fetch(regs_b);
    }
    warp_tile_multiply<Cfg>(stage_a(kt % 2), stage_b(kt % 2), a_col, b_col, acc);
    if (more) {
      copy_a.store(stage_a((kt + 1) % 2), regs_a);
      copy_b.store(stage_b((kt + 1) % 2), regs_b);
    }
    __syncthreads();
  }
  warp_tile_epilogue<Cfg>(g, tile.m0 + a_col, tile.n0 + b_col, acc);
}

// The parameters of rungs 12-14's kernels, as a launcher of a kernel compiled on first use
// passes them; each kernel checks that it has them.
using WarpTileParameters = void(GemmArgs<float>, BatchStrides);

template <class Cfg, bool TransA, bool TransB, bool VecA, bool VecB>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    warptile_kernel(GemmArgs<float> g, BatchStrides batch) {
  static_assert(std::is_same_v<decltype(warptile_kernel<Cfg, TransA, TransB, VecA, VecB>), WarpTileParameters>);
  extern __shared__ float4 smem4[];
  // Each tile ends with a barrier, so shared memory is free for the next matrix.
  for (std::int64_t z = blockIdx.z; z < batch.count; z += gridDim.z)
    warptile_block<Cfg, TransA, TransB, VecA, VecB>(item_args(g, batch, z),
                                                     reinterpret_cast<float*>(smem4));
}

}  // namespace gemmkit::cuda::kernels

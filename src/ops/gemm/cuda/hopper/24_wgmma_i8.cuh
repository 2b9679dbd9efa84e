// Rung 24, int8 tensor cores with int32 sums, and a modular epilogue. Exact arithmetic by
// residues (walk counts, exact integer GEMM: gemmkit/modular.hpp) multiplies int8 matrices
// of residues and reduces every int32 sum mod p. With cuBLAS that is two passes: the GEMM
// writes 4 bytes per product and a second kernel reads them back to write 1 byte (78% of
// the GEMM's own speed on the H200). Here, rung 19's kernel on int8:
//   - The same warp-specialised persistent pipeline (ws_produce / ws_consume of
//     19_wgmma_ws.cuh): a 128-byte swizzled row of K is 64 bf16 values or 128 int8 ones, so
//     the stages, TMA boxes and descriptors are rung 19's with BK = 128; one wgmma
//     (m64n256k32.s32.s8.s8) takes 32 bytes of K, the same step as k16 of 16-bit types.
//     8-bit wgmma reads K-major operands only: A row-major and B stored n x k (trans_b); the
//     launcher copies other layouts into that form first.
//   - Twice the multiply-adds per byte of bf16, so each stage (48 KiB at 128 x 256) feeds
//     the tensor cores twice as long: 4 stages keep them as busy as bf16's.
//   - int32 accumulators: sums are exact, so stream-K's partial sums add up to the same
//     bits in any order.
//   - Epilogue, plain: alpha * acc + beta * C as int32 (TMA stores when beta == 0).
//   - Epilogue, modular: each accumulator is reduced mod p (the batch item's modulus,
//     passed by value, reduced with a multiply-high instead of a division) to a centred
//     residue, and the 64 x 256 tile goes through shared memory to C (row-major) and/or
//     C^T: by TMA stores where the outputs allow them, else 16 bytes per thread along their
//     rows, so the transpose costs no scattered stores. The products never reach memory:
//     one kernel for the whole modular GEMM, moduli as the persistent scheduler's batch
//     dimension.
//   - One kernel per epilogue (I8Epilogue): each holds only the code it runs. With every
//     epilogue in one kernel, the unrolled code of the unused ones cost the TMA paths 2-5%
//     on the H200 (instruction fetch), measured in docs/notes/ladder-log.md.
//   - The int32 product's overlapped schedule (int32_overlapped): between two tiles both
//     consumers stop multiplying to write C, and with 128 accumulators each (256 columns)
//     there is no room for a second set. At 208 columns there is: 2 x 104 of 240 registers.
//     Each consumer multiplies tile i + 1 into the other set while it writes tile i out, a
//     16-column box after every `spread` K-blocks, so the tensor cores never wait for C
//     except after the last tile. Narrower tiles cost more rounds on some shapes; the
//     launcher picks the schedule by a count of both (i8_schedule.hpp).
// Measured: see docs/ladder.md.
#pragma once

#include <utility>

#include "ops/gemm/cuda/hopper/19_wgmma_ws.cuh"
#include "ops/modular/cuda/modular_reduce.cuh"

namespace gemmkit::cuda::kernels {

// Rung 24's tile: 128 x 256 (two consumers of 64 x 256), clusters of two along M with B
// multicast, 4 stages of 128-byte K (48 KiB each), 16 KiB of epilogue buffer per consumer.
using WgmmaI8Config = WgmmaWsConfig<std::int8_t, 2, 4, 16 * 1024, 8, 256, 2, false>;
// The overlapped int32 schedule's: 128 x 208, 5 stages of 42 KiB, two 4 KiB boxes of C per
// consumer (5 stages and small boxes measured faster than 4 stages and 8 KiB ones; two
// boxes than one). That leaves no room to align the start by hand (kAlignSlack = 0).
using WgmmaI8OverlapConfig = WgmmaWsConfig<std::int8_t, 2, 5, 8 * 1024, 8, 208, 2, false>;

// Moduli one launch takes (a larger batch runs in several launches).
inline constexpr int kI8MaxModuli = 64;

// Which epilogue a kernel is built with (the launcher picks it from the outputs).
enum class I8Epilogue {
  int32_tma,        // alpha * acc as int32 C by TMA stores (beta == 0, C's rows whole 16 bytes)
  int32_overlapped, // the same, each tile's stores under the next tile's multiplies (WgmmaI8OverlapConfig)
  int32_direct,     // alpha * acc + beta * C, int32 pairs straight from the fragments
  residues_c,       // centred residues into C by TMA stores
  residues_ct,      // into C^T by TMA stores
  residues_both,    // into C and C^T by TMA stores
  residues_direct,  // into C and/or C^T by 16-byte or byte stores: any layout
};

constexpr bool uses_tma_stores(I8Epilogue e) { return e != I8Epilogue::int32_direct && e != I8Epilogue::residues_direct; }

// What the epilogue writes.
struct I8Output {
  // Plain: C (int32, row-major, ldc) = alpha * acc + beta * C, arithmetic mod 2^32.
  int alpha = 1, beta = 0;
  int* c = nullptr;
  std::int64_t ldc = 0;
  bool c_pairs = false;  // two columns per 8-byte access (ldc even, C on 8 bytes)
  int spread = 1;        // int32_overlapped: K-blocks of the next tile per box of C (1 or 2)
  // Modular: centred residues of matrix `item` mod moduli[item] into r (m x n, row-major)
  // and/or rt (n x m, row-major: the transpose), either null.
  std::int8_t* r = nullptr;
  std::int64_t ldr = 0, stride_r = 0;
  std::int8_t* rt = nullptr;
  std::int64_t ldrt = 0, stride_rt = 0;
  bool r_vec = false, rt_vec = false;  // 16-byte stores: base, ld and stride on 16 bytes
  unsigned char moduli[kI8MaxModuli] = {};
};

// The plain epilogue without TMA (beta != 0, or C not on 16 bytes): int32 pairs straight
// from the fragments (acc[4j + 2h + e]: row 16 warp + lane / 4 + 8h, column 8j + 2 (lane % 4)
// + e of the warpgroup's 64 x N tile at (row0, col0)).
template <int Acc>
__device__ __forceinline__ void store_i8_tile(const I8Output& o, int m, int n, const int (&acc)[Acc],
                                              int row0, int col0) {
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  row0 += warp * 16 + lane / 4;
  col0 += 2 * (lane % 4);
  // Wrapping int32 arithmetic, as the CPU's integer GEMM: unsigned has it defined.
  auto value = [&](int x, const int* old) {
    unsigned v = unsigned(o.alpha) * unsigned(x);
    if (o.beta != 0) v += unsigned(o.beta) * unsigned(*old);
    return int(v);
  };
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < Acc / 4; ++j) {
      const int col = col0 + 8 * j;
      int* c = o.c + std::int64_t(row) * o.ldc + col;
      if (o.c_pairs && col + 1 < n) {
        int2 old = make_int2(0, 0);
        if (o.beta != 0) old = *reinterpret_cast<const int2*>(c);
        *reinterpret_cast<int2*>(c) = make_int2(value(acc[4 * j + 2 * h], &old.x), value(acc[4 * j + 2 * h + 1], &old.y));
      } else {
        if (col < n) c[0] = value(acc[4 * j + 2 * h], c);
        if (col + 1 < n) c[1] = value(acc[4 * j + 2 * h + 1], c + 1);
      }
    }
  }
}

// The modular epilogue of one warpgroup's 64 x N tile at (row0, col0) of matrix `item`:
// residues mod the item's modulus into C and/or C^T through `buffer` (kEpilogueBytes, two
// 64 x 64 byte tiles with rows padded to 80 bytes, so that neither the fragment-order
// writes nor the 16-byte reads meet bank conflicts), 64 columns per pass. barrier_id:
// the warpgroup's named barrier.
template <int Acc>
__device__ __forceinline__ void store_residue_tile(const I8Output& o, int m, int n, const int (&acc)[Acc],
                                                   int row0, int col0, int item, unsigned char* buffer,
                                                   int barrier_id) {
  constexpr int N = 2 * Acc, kPitch = 80;
  const CentredResidue mod(o.moduli[item]);  // arith/centred_residue.hpp
  std::int8_t* r = o.r ? o.r + item * o.stride_r : nullptr;
  std::int8_t* rt = o.rt ? o.rt + item * o.stride_rt : nullptr;
  unsigned char* tile_c = buffer;                // (64 rows, 64 columns): C's pass
  unsigned char* tile_t = buffer + 64 * kPitch;  // (64 columns, 64 rows): C^T's pass
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
  for (int pass = 0; pass < N / 64; ++pass) {
    hopper::named_barrier(barrier_id, 128);  // the last pass's (or tile's) copies are done reading
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
      const int j = pass * 8 + jj;  // 8-column group of the fragment
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * 16 + lane / 4 + 8 * h, col = 8 * jj + 2 * (lane % 4);  // in the pass
        const std::int8_t v0 = std::int8_t(mod(acc[4 * j + 2 * h]));
        const std::int8_t v1 = std::int8_t(mod(acc[4 * j + 2 * h + 1]));
        if (r) *reinterpret_cast<char2*>(tile_c + row * kPitch + col) = make_char2(v0, v1);
        if (rt) {
          tile_t[col * kPitch + row] = static_cast<unsigned char>(v0);
          tile_t[(col + 1) * kPitch + row] = static_cast<unsigned char>(v1);
        }
      }
    }
    hopper::named_barrier(barrier_id, 128);
    // 64 rows x 4 chunks of 16 bytes per tile: two chunks per thread; rows of the output
    // are 64 bytes of consecutive addresses, four threads each.
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = t + 128 * i, row = idx / 4, chunk = idx % 4;
      if (r) {  // C(row0 + row, col0 + 64 pass + 16 chunk ...)
        const int grow = row0 + row, gcol = col0 + pass * 64 + chunk * 16;
        if (grow < m && gcol < n) {
          const unsigned char* src = tile_c + row * kPitch + chunk * 16;
          std::int8_t* dst = r + std::int64_t(grow) * o.ldr + gcol;
          if (o.r_vec && gcol + 16 <= n) *reinterpret_cast<int4*>(dst) = *reinterpret_cast<const int4*>(src);
          else
#pragma unroll 1
            for (int e = 0; e < 16 && gcol + e < n; ++e) dst[e] = std::int8_t(src[e]);
        }
      }
      if (rt) {  // C^T(col0 + 64 pass + row, row0 + 16 chunk ...)
        const int grow = col0 + pass * 64 + row, gcol = row0 + chunk * 16;
        if (grow < n && gcol < m) {
          const unsigned char* src = tile_t + row * kPitch + chunk * 16;
          std::int8_t* dst = rt + std::int64_t(grow) * o.ldrt + gcol;
          if (o.rt_vec && gcol + 16 <= m) *reinterpret_cast<int4*>(dst) = *reinterpret_cast<const int4*>(src);
          else
#pragma unroll 1
            for (int e = 0; e < 16 && gcol + e < m; ++e) dst[e] = std::int8_t(src[e]);
        }
      }
    }
  }
}

// The modular epilogue by TMA stores: residues of one warpgroup's 64 x N tile at (row0, col0)
// of matrix `item` into C (map_c: boxes of 64 rows x 128 bytes) and/or C^T (map_ct: boxes of
// PassCols rows x 64 bytes), through `buffer` (kEpilogueBytes, 1024-byte aligned) in passes
// of PassCols columns: 256, the whole tile, for one output; 128 for both. Each residue is
// written once per output into the boxes' swizzled layout (tensor_map.hpp), which keeps the
// fragment-order writes free of bank conflicts; one barrier before the writes (the last
// stores are done reading), one after, then the leader hands the boxes to the copy engine,
// which clips them at the matrix edge. Two barriers per pass, against eight per tile for
// store_residue_tile.
template <int PassCols, bool WriteC, bool WriteCt, int Acc>
__device__ __forceinline__ void tma_store_residue_tile(const CUtensorMap* map_c, const CUtensorMap* map_ct,
                                                       const CentredResidue& mod, const int (&acc)[Acc], int row0,
                                                       int col0, int item, unsigned char* buffer, int barrier_id,
                                                       bool leader) {
  constexpr int N = 2 * Acc;
  static_assert(N % PassCols == 0 && PassCols % 128 == 0 && PassCols <= 256, "passes of whole 128-column boxes");
  unsigned char* part_c = buffer;                                     // (64, PassCols): boxes of 128 columns
  unsigned char* part_t = WriteC ? buffer + 64 * PassCols : buffer;  // (PassCols, 64)
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
#pragma unroll
  for (int pass = 0; pass < N / PassCols; ++pass) {
    if (leader) hopper::bulk_wait_read<0>();
    hopper::named_barrier(barrier_id, 128);
#pragma unroll
    for (int jj = 0; jj < PassCols / 8; ++jj) {
      const int j = pass * (PassCols / 8) + jj;  // 8-column group of the fragment
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * 16 + lane / 4 + 8 * h, col = 8 * jj + 2 * (lane % 4);  // in the pass
        const std::int8_t v0 = std::int8_t(mod(acc[4 * j + 2 * h]));
        const std::int8_t v1 = std::int8_t(mod(acc[4 * j + 2 * h + 1]));
        if constexpr (WriteC) {  // box col / 128, row `row`, 16-byte chunk swizzled by row % 8
          const int chunk = ((col % 128) / 16) ^ (row % 8);
          *reinterpret_cast<char2*>(part_c + (col / 128) * 8192 + row * 128 + chunk * 16 + col % 16) =
              make_char2(v0, v1);
        }
        if constexpr (WriteCt) {  // rows col and col + 1 (same col / 2), chunk swizzled by col / 2 % 4
          const int at = ((row / 16) ^ ((col / 2) % 4)) * 16 + row % 16;
          part_t[col * 64 + at] = static_cast<unsigned char>(v0);
          part_t[(col + 1) * 64 + at] = static_cast<unsigned char>(v1);
        }
      }
    }
    hopper::fence_async_shared();
    hopper::named_barrier(barrier_id, 128);
    if (leader) {
      if constexpr (WriteC)
#pragma unroll
        for (int box = 0; box < PassCols / 128; ++box)
          hopper::tma_store_3d(map_c, part_c + box * 8192, col0 + pass * PassCols + box * 128, row0, item);
      if constexpr (WriteCt) hopper::tma_store_3d(map_ct, part_t, row0, col0 + pass * PassCols, item);
      hopper::bulk_commit();
    }
  }
}

// The overlapped int32 schedule of one consumer warpgroup (c) over its cluster's tiles
// t = cluster_id, cluster_id + clusters, ... (whole tiles, in the producer's order; no
// stream-K). Two sets of accumulators, x and y, take turns: the first K-block of tile i + 1
// starts its set with Accumulate = false, and once it is issued, wgmma_wait<1> means every
// multiply of tile i is done, so its set can be read while tile i + 1's multiplies run. Tile
// i's C then goes out in 13 boxes of 64 x 16 int32 (64-byte rows, 64-byte swizzle: 4 KiB;
// the consumer's buffer holds two), one after every `spread` K-blocks of tile i + 1. The
// K-loops with the boxes in them are unrolled on the box (the accumulators are indexed by
// constants only) and loop over the K-blocks between boxes (one copy of their code: this
// kernel's size costs instruction fetch, measured). Needs k_tiles >= 13 * spread. Unrolled,
// it is 2-3% faster at 4096^3 and 8192^3 on the H200 than with the boxes in one loop (a
// branch per box) or in 2 to 6 loops, and slow to compile (8-10 s with NVRTC against 3.7 s):
// the launcher compiles it ahead of time.
template <class Cfg>
struct OverlappedInt32 {
  static constexpr int kAcc = Cfg::BN / 2;
  static constexpr int kBoxCols = 16;
  static constexpr int kBoxes = Cfg::BN / kBoxCols;
  static constexpr int kBoxBytes = 64 * kBoxCols * 4;
  static constexpr int kSlots = Cfg::kEpilogueBytes / kBoxBytes;  // boxes in a consumer's buffer
  static_assert(Cfg::BN == 208 && Cfg::kConsumers == 2 && kSlots >= 1 && Cfg::kEpilogueBytes % kBoxBytes == 0,
                "two consumers of 64 x 208, whole 64 x 16 int32 boxes of C");

  unsigned char* smem;
  std::uint64_t* full;
  std::uint64_t* empty;
  unsigned char* buffer;  // this consumer's epilogue buffer: kSlots boxes
  const CUtensorMap* map_c;
  int c;
  bool leader;
  int alpha, spread;
  int it = 0;     // stages used so far (stage it % kStages)
  int boxes = 0;  // boxes of C stored so far (slot boxes % kSlots)

  __device__ __forceinline__ void release(int s) {
    if (!leader) return;
    for (int r = 0; r < Cfg::kClusterM; ++r) hopper::barrier_arrive_cluster(&empty[s], r);
  }

  // One K-block of the tile in acc: waits for its stage, issues its four wgmmas, commits.
  template <bool First>
  __device__ __forceinline__ void issue(int (&acc)[kAcc]) {
    using namespace hopper;
    const int s = it % Cfg::kStages;
    barrier_wait(&full[s], (it / Cfg::kStages) & 1);
    wgmma_fence();
    const unsigned char* stage = smem + s * Cfg::kStageBytes;
    auto descriptors = [&](int kk) {  // A's 64 rows of this consumer and B, K step kk (32 bytes)
      return std::pair{smem_descriptor(stage + c * 64 * 128 + kk * 32, 16, 1024),
                       smem_descriptor(stage + Cfg::kABytes + kk * 32, 16, 1024)};
    };
    const auto [da, db] = descriptors(0);
    wgmma_64xn<std::int8_t, false, false, !First>(acc, da, db);
#pragma unroll
    for (int kk = 1; kk < Cfg::BK / Cfg::kInstrK; ++kk) {
      const auto [a, b] = descriptors(kk);
      wgmma_64xn<std::int8_t, false, false>(acc, a, b);
    }
    wgmma_commit();
    ++it;
  }
  // After issue: the K-block before it (perhaps the last of the previous tile) is done; its
  // stage goes back to the producers.
  __device__ __forceinline__ void retire_previous() {
    hopper::wgmma_wait<1>();
    release((it - 2) % Cfg::kStages);
  }
  __device__ __forceinline__ void blocks(int (&acc)[kAcc], int count) {
#pragma unroll 1
    for (int b = 0; b < count; ++b) {
      issue<false>(acc);
      retire_previous();
    }
  }

  // Box B of the 64 x 208 tile at (row0, col0) of matrix `item`: alpha * acc into a slot of
  // the buffer (64 rows of 64 bytes; 16-byte chunk q of row r at q ^ (r / 2 % 4)), then to C
  // by TMA.
  template <int B>
  __device__ __forceinline__ void store_box(const int (&acc)[kAcc], int row0, int col0, int item) {
    using namespace hopper;
    unsigned char* box = buffer + (boxes++ % kSlots) * kBoxBytes;
    if (leader) bulk_wait_read<kSlots - 1>();  // the box that used this slot is read out
    named_barrier(1 + c, 128);
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
#pragma unroll
    for (int jj = 0; jj < kBoxCols / 8; ++jj) {
      const int j = B * (kBoxCols / 8) + jj;  // 8-column group of the fragment
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warp * 16 + lane / 4 + 8 * h, byte = (8 * jj + 2 * (lane % 4)) * 4;
        *reinterpret_cast<int2*>(box + r * 64 + ((byte / 16) ^ (r / 2 % 4)) * 16 + byte % 16) =
            make_int2(int(unsigned(alpha) * unsigned(acc[4 * j + 2 * h])),
                      int(unsigned(alpha) * unsigned(acc[4 * j + 2 * h + 1])));
      }
    }
    fence_async_shared();
    named_barrier(1 + c, 128);
    if (leader) {
      tma_store_3d(map_c, box, col0 + B * kBoxCols, row0, item);
      bulk_commit();
    }
  }
  template <int B = 0>
  __device__ __forceinline__ void store_tile(const int (&acc)[kAcc], int row0, int col0, int item) {
    if constexpr (B < kBoxes) {
      store_box<B>(acc, row0, col0, item);
      store_tile<B + 1>(acc, row0, col0, item);
    }
  }

  // The next tile's K-loop into acc with the previous tile's boxes (prev) under its first
  // 13 * spread K-blocks, then its other K-blocks.
  template <int B = 0>
  __device__ __forceinline__ void blocks_with_boxes(int (&acc)[kAcc], const int (&prev)[kAcc], int row0, int col0,
                                                    int item) {
    if constexpr (B < kBoxes) {
      if constexpr (B == 0) {
        issue<true>(acc);
        retire_previous();
        blocks(acc, spread - 1);
      } else {
        blocks(acc, spread);
      }
      store_box<B>(prev, row0, col0, item);
      blocks_with_boxes<B + 1>(acc, prev, row0, col0, item);
    }
  }
};

template <class Cfg>
__device__ __forceinline__ void consume_overlapped(OverlappedInt32<Cfg>& w, int cluster_id, int clusters, int tiles,
                                                   int k_tiles, int cluster_rows, int n_tiles, int rank) {
  using namespace hopper;
  constexpr int kAcc = OverlappedInt32<Cfg>::kAcc;
  const int mine = tiles > cluster_id ? (tiles - 1 - cluster_id) / clusters + 1 : 0;
  if (mine == 0) return;
  struct Origin {
    int row0, col0, item;
  };
  auto origin = [&](int t) {
    const ClusterTile ct = cluster_tile(t, cluster_rows, n_tiles, Cfg::kGroupRows);
    return Origin{(ct.row * Cfg::kClusterM + rank) * Cfg::BM + w.c * 64, ct.col * Cfg::BN, ct.item};
  };
  const int rest_from = OverlappedInt32<Cfg>::kBoxes * w.spread;
  int x[kAcc], y[kAcc];
  int t = cluster_id;
  w.template issue<true>(x);
  wgmma_wait<1>();
  w.blocks(x, k_tiles - 1);
  // Tiles alternate between x and y; a path leaves the loop only after wgmma_wait<0>, with
  // no multiply in flight (ptxas serialises every wgmma otherwise).
  for (int i = 1;; i += 2) {
    Origin o = origin(t);
    if (i == mine) {
      wgmma_wait<0>();
      w.release((w.it - 1) % Cfg::kStages);
      w.store_tile(x, o.row0, o.col0, o.item);
      break;
    }
    t += clusters;
    w.blocks_with_boxes(y, x, o.row0, o.col0, o.item);
    w.blocks(y, k_tiles - rest_from);
    o = origin(t);
    if (i + 1 == mine) {
      wgmma_wait<0>();
      w.release((w.it - 1) % Cfg::kStages);
      w.store_tile(y, o.row0, o.col0, o.item);
      break;
    }
    t += clusters;
    w.blocks_with_boxes(x, y, o.row0, o.col0, o.item);
    w.blocks(x, k_tiles - rest_from);
  }
}

// C = beta * C (int32, row-major), for K = 0: nothing to multiply.
template <class T>  // int (a template: one definition for every file that includes this)
__global__ void scale_c(T* __restrict__ c, std::int64_t ldc, int m, int n, int beta) {
  const std::int64_t total = std::int64_t(m) * n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    T* x = c + (i / n) * ldc + i % n;
    *x = beta == 0 ? T(0) : T(unsigned(beta) * unsigned(*x));
  }
}

// Rung 24 with epilogue E (moduli by batch item for the residue epilogues). map_c: int32 C
// for int32_tma, residues C for residues_c / _both; map_ct: residues C^T for residues_ct /
// _both; unused otherwise. Operands K-major, as map_a and map_b describe them (rank 3: the
// batch outermost).
// The kernel's parameters, as the launcher passes them (it is compiled on first use, so the
// host never sees its instantiation; the kernel checks that they agree).
using WgmmaI8Parameters = void(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, int, int, int, StreamK, WsBatch,
                               I8Output);

template <class Cfg, I8Epilogue E>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_i8_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, const __grid_constant__ CUtensorMap map_ct,
                    const int m, const int n, const int k, const StreamK sk, const WsBatch batch,
                    const I8Output out) {
  static_assert(std::is_same_v<decltype(wgmma_i8_kernel<Cfg, E>), WgmmaI8Parameters>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(std::is_same_v<typename Cfg::Element, std::int8_t> && !Cfg::kSplitK,
                "rung 24: int8 elements, no split-K");
  constexpr int ClusterM = Cfg::kClusterM;
  using namespace hopper;

  extern __shared__ unsigned char smem_raw[];
  if (Cfg::kAlignSlack == 0 && smem_address(smem_raw) % 1024 != 0) __trap();  // no room to align it
  unsigned char* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024);
  unsigned char* epilogue = smem + Cfg::kStages * Cfg::kStageBytes;  // one buffer per consumer
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(epilogue + Cfg::kConsumers * Cfg::kEpilogueBytes);
  std::uint64_t* empty = full + Cfg::kStages;

  const int rank = ClusterM == 1 ? 0 : int(cluster_block_rank());
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&empty[s], Cfg::kConsumers * ClusterM);
    }
    fence_barrier_init();
  }
  cluster_sync();

  const int m_tiles = (m + Cfg::BM - 1) / Cfg::BM;
  const int n_tiles = (n + Cfg::BN - 1) / Cfg::BN;
  const int cluster_rows = (m_tiles + ClusterM - 1) / ClusterM;
  const int k_tiles = (k + Cfg::BK - 1) / Cfg::BK;
  const int cluster_id = blockIdx.x / ClusterM, clusters = gridDim.x / ClusterM;

  // The overlapped schedule's two sets of accumulators need 240 registers per consumer
  // thread (232 serialise its wgmmas); its producer does with the fewest (24) and whole
  // tiles only (no stream-K code to hold registers for).
  constexpr bool kOverlapped = E == I8Epilogue::int32_overlapped;
  static_assert(!kOverlapped || std::is_same_v<Cfg, WgmmaI8OverlapConfig>, "the overlapped schedule's tile");
  if (warpgroup == 0) {
    if constexpr (kOverlapped) release_registers<24>();
    else if constexpr (Cfg::kConsumers == 2) release_registers<40>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      if constexpr (E == I8Epilogue::int32_tma || kOverlapped || E == I8Epilogue::residues_c ||
                    E == I8Epilogue::residues_both)
        prefetch_tensor_map(&map_c);
      if constexpr (E == I8Epilogue::residues_ct || E == I8Epilogue::residues_both) prefetch_tensor_map(&map_ct);
      ws_produce<Cfg, false, false, !kOverlapped>(map_a, map_b, smem, full, empty, rank, cluster_id, clusters,
                                                  k_tiles, cluster_rows, n_tiles, sk, batch);
    }
  } else if constexpr (kOverlapped) {
    claim_registers<240>();
    const int c = warpgroup - 1;
    OverlappedInt32<Cfg> w{smem, full, empty, epilogue + c * Cfg::kEpilogueBytes, &map_c, c,
                           threadIdx.x % 128 == 0, out.alpha, out.spread};
    consume_overlapped<Cfg>(w, cluster_id, clusters, sk.dp_tiles, k_tiles, cluster_rows, n_tiles, rank);
    if (w.leader) bulk_wait();
  } else {
    if constexpr (Cfg::kConsumers == 2) claim_registers<232>();
    const int c = warpgroup - 1;
    const bool signals = threadIdx.x % 128 == 0;
    constexpr int kAcc = Cfg::BN / 2;

    int it = 0;
    for_each_unit<false>(cluster_id, clusters, k_tiles, sk, [&](const WorkUnit u) {
      const ClusterTile ct = cluster_tile(u.tile, cluster_rows, n_tiles, Cfg::kGroupRows);
      const int m0 = (ct.row * ClusterM + rank) * Cfg::BM, n0 = ct.col * Cfg::BN;

      int acc[kAcc];
#pragma unroll
      for (int r = 0; r < kAcc; ++r) acc[r] = 0;
      ws_consume<Cfg, false, false>(acc, u, it, smem, full, empty, c, signals);

      if (!stream_k_finish<Cfg>(acc, u, sk, k_tiles, cluster_id, clusters, rank, c, signals)) return;

      unsigned char* buffer = epilogue + c * Cfg::kEpilogueBytes;
      const int row0 = m0 + c * 64;
      if constexpr (E == I8Epilogue::int32_tma) {
        tma_store_tile<int, Cfg::kEpilogueBytes, kAcc>(
            &map_c,
            [&](int r) {
              return Pair<int>{int(unsigned(out.alpha) * unsigned(acc[r])), int(unsigned(out.alpha) * unsigned(acc[r + 1]))};
            },
            row0, n0, ct.item, buffer, 1 + c, signals);
      } else if constexpr (E == I8Epilogue::int32_direct) {
        store_i8_tile(out, m, n, acc, row0, n0);
      } else if constexpr (E == I8Epilogue::residues_direct) {
        store_residue_tile(out, m, n, acc, row0, n0, ct.item, buffer, 1 + c);
      } else {
        constexpr bool kC = E != I8Epilogue::residues_ct, kCt = E != I8Epilogue::residues_c;
        tma_store_residue_tile<kC && kCt ? 128 : 256, kC, kCt>(&map_c, &map_ct, CentredResidue(out.moduli[ct.item]),
                                                                acc, row0, n0, ct.item, buffer, 1 + c, signals);
      }
    });
    if constexpr (uses_tma_stores(E))
      if (signals) bulk_wait();
  }
  __syncwarp();
  cluster_sync();
#else
  __trap();  // built only for sm_90a; the launcher never picks it elsewhere
#endif
}

}  // namespace gemmkit::cuda::kernels

// Rung 19, warp-specialised persistent wgmma. Rung 18's warpgroups both wait for copies
// and multiply, so every stage hand-off costs them a stall; each block runs one tile and
// exits; and C leaves through ordinary stores while the tensor cores idle. Here:
//   - Warp specialisation: one producer warpgroup only issues TMA copies; two consumer
//     warpgroups only multiply, 64 x 256 outputs each (a 128 x 256 tile). Full/empty
//     barriers per stage hand buffers back and forth, so copies run stages ahead.
//   - Register reallocation: the producer gives its registers up (setmaxnreg 40) and the
//     consumers take them (232 each), room for 128 FP32 accumulators per thread.
//   - A persistent grid: one block per SM loops over tiles, so the producer already loads
//     the next tile while the consumers write this one out. (The launcher takes as few
//     clusters as give the same number of rounds, so that the rounds are equally full.)
//   - An asynchronous epilogue: each consumer writes its outputs into a shared-memory
//     buffer and hands it to TMA stores, which drain while it multiplies the next tile
//     (measured: writing C straight from registers cost 16% at 4096^3). The buffer's two
//     halves alternate, so one fills while the copy engine reads the other; 16 KiB per
//     consumer leaves room for 4 stages (measured at 4096^3 bf16: 3 stages with 32 KiB
//     buffers 96.7% of cuBLAS, 4 stages with 16 KiB 99.0%).
//   - Clusters of two blocks on vertically adjacent tiles: they need the same 256 columns
//     of B, so each copies half of B's tile and multicasts it into both, halving B's
//     traffic from L2.
//   - Tile order: groups of 8 cluster rows are walked column by column, so the tiles
//     resident at once share rows of A and columns of B in L2. The order snakes, so that
//     each round of tiles starts on what the last one read most recently and still lies in
//     L2: every other round walks K backwards, and every other group its columns (4096^3
//     bf16: DRAM reads 147 -> 118 MB, +0.5% of cuBLAS).
//   - Stream-K for a half-empty last round: when the last round of tiles would leave
//     about half of the clusters idle (8192^3 bf16: 1024 cluster tiles for 66 clusters,
//     15.5 rounds), that round's K-blocks are shared out evenly over every cluster instead.
//     A cluster whose share ends a tile writes it; the others leave FP32 partial sums in
//     global memory and raise a flag, and the writer adds them before its epilogue. Each
//     cluster does its share of the later tile first, so the partials a writer waits for
//     were its neighbours' first stream-K work: nobody waits on a waiter. The clusters
//     must all be resident at once, which the persistent grid ensures.
//   - Strided batches in the same launch: the tile space holds every matrix's cluster
//     tiles, matrix after matrix, so the persistent grid, the rounds and the stream-K share
//     run over the whole batch. The tensor maps are of rank 3, the matrix the outermost
//     coordinate (an operand shared by every matrix, stride 0, is read as matrix 0).
// Edge tiles cost nothing extra: TMA fills what lies outside the matrices with zeros on
// the way in and clips what lies outside C on the way out.
#pragma once

#include "ops/gemm/cuda/hopper/hopper_tune_table.hpp"  // how split-K adds its slices
#include "ops/gemm/cuda/common/flag.cuh"
#include "ops/gemm/cuda/hopper/hopper.cuh"
#include "ops/gemm/cuda/common/tensor_common.cuh"
#include "ops/gemm/cuda/common/stream_k_schedule.hpp"

namespace gemmkit::cuda::kernels {

// T: __nv_bfloat16, __half or float (tf32). The defaults are rung 19's configuration; rung
// 21 (21_wgmma_tuned.cuh) instantiates narrower tiles (TileN 128 or 64), one consumer
// (BM = 64) and split-K.
template <class T, int ClusterM = 2, int Stages = 4, int EpilogueBytes = 16 * 1024, int GroupRows = 8,
          int TileN = 256, int Consumers = 2, bool SplitK = false>
struct WgmmaWsConfig {
  using Element = T;
  static constexpr int BM = 64 * Consumers, BN = TileN;
  static constexpr int BK = 128 / sizeof(T);       // one 128-byte swizzle row of K
  static constexpr int kInstrK = 32 / sizeof(T);   // K of one wgmma: 16 (16-bit), 8 (tf32)
  static constexpr int kStages = Stages;
  static constexpr int kConsumers = Consumers;     // warpgroups of 64 x BN outputs
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kClusterM = ClusterM;       // blocks per cluster, stacked along M
  static constexpr int kGroupRows = GroupRows;     // cluster rows per group in the tile order
  static constexpr int kABytes = BM * 128;         // (BM, BK) tile: BM rows of 128 bytes
  static constexpr int kBBytes = BN * 128;         // (BN, BK) tile
  // B's tile is copied in one or two parts of 128, 104 or 64 of its BN rows (of N); in a
  // pair, block r copies part r into both blocks. 256 columns: two parts of 128 (rung 19);
  // 208 (rung 24's overlapped int32 schedule): two of 104; 128: one part, or two of 64 in a
  // pair; 64: one part, the pair's first block copies it.
  static constexpr int kBParts = BN >= 208 ? 2 : (BN == 128 ? ClusterM : 1);
  static constexpr int kBPartRows = BN / kBParts;
  static_assert(kBParts <= 2, "at most one part of B per block of a pair");
  static constexpr int kBPartBytes = kBPartRows * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr bool kSplitK = SplitK;          // runs split-K work units (rung 21)
  static constexpr int kBoxBytes = 64 * 128;       // an MN-major box: 64 of M or N by BK rows
  static constexpr int kEpilogueBytes = EpilogueBytes;  // per consumer: C on its way to TMA stores
  // Stage buffers and epilogue buffers (1024-byte aligned for the swizzle), then the
  // barriers; + 1 KiB so the start can be aligned by hand where that fits. Where it does not
  // (rung 24's overlapped schedule), the kernel relies on the start being aligned already
  // (sm_90 reserves the first 1 KiB of a block's shared memory, so it is) and checks it.
  static constexpr int kBufferBytes = kStages * kStageBytes + kConsumers * kEpilogueBytes + 2 * kStages * 8;
  static constexpr int kAlignSlack = kBufferBytes + 1024 <= 227 * 1024 ? 1024 : 0;
  static constexpr int kSmemBytes = kBufferBytes + kAlignSlack;
  static_assert(kSmemBytes <= 227 * 1024, "buffers exceed the shared memory of an SM");
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of one or two blocks");
  static_assert(Consumers == 1 || Consumers == 2, "one or two consumer warpgroups");
  static_assert(BN == 256 || BN == 208 || BN == 128 || BN == 64, "wgmma tiles of 256, 208, 128 or 64 columns");
  static_assert(kBPartRows * 128 % 1024 == 0, "B's parts start on whole swizzle atoms");
};

// How the tiles are shared out (filled by the launcher). Tiles [0, dp_tiles) of the
// grouped order go whole to clusters in turn; the K-blocks of tiles [dp_tiles, dp_tiles +
// sk_tiles) are split evenly over all clusters (sk_tiles < clusters, so a share holds at
// most one partial tile and one tile end).
// Split-K (rung 21 only, and then sk_tiles = 0): each of the dp_tiles tiles is cut into
// `splits` slices of its K-blocks, each slice a work unit of its own; `partials` then holds
// 64 x BN floats per (tile, block rank, consumer, slice) and `flags` per (tile, block rank,
// consumer) wgmma_split_counters(splits) counters of slices or groups done (from 0). (`splits` fills the struct's padding: rung 19's
// kernel parameters keep their layout.)
struct StreamK {
  int dp_tiles = 0, sk_tiles = 0;
  float* partials = nullptr;  // per (cluster, block rank, consumer): 64 x BN floats
  unsigned* flags = nullptr;  // per (cluster, block rank, consumer): `launch` once written
  unsigned launch = 0;        // the value a written flag holds (flags start at 0: never 0)
  int splits = 1;
};

// A strided batch as the kernel walks it (one matrix: count 1).
struct WsBatch {
  int count = 1;
  bool shared_a = false, shared_b = false;  // one A (B) for every matrix: stride 0
  std::int64_t stride_c = 0;                // elements between matrices of C
};

// One cluster's piece of work: K-blocks [k_begin, k_end) of cluster tile `tile`.
struct WorkUnit {
  int tile, k_begin, k_end;
  bool reverse = false;  // walk the K-blocks from k_end - 1 down to k_begin
  int slice = 0;         // split-K: which slice of the tile's K-blocks
};

// Calls f(WorkUnit) for the work of cluster `cluster` of `clusters`, in order: its whole
// tiles, then its stream-K share, the later tile first (the stream-K schedule of
// stream_k_schedule.hpp, the clusters its blocks); or, split-K, units u = cluster,
// cluster + clusters, ... of (tile u / splits, slice u % splits), slice s holding K-blocks
// [s * k_tiles / splits, (s + 1) * k_tiles / splits) (never empty: splits <= k_tiles).
// A split-K instantiation runs split-K units only (splits = 1 is one slice per tile), so it
// carries no stream-K code: the launcher runs the twin without split-K when a plan does
// not split (NoSplitK). Producer and consumers walk the same list. WithStreamK = false: whole tiles only (sk_tiles is
// 0), and no code for the rest.
template <bool SplitK = false, bool WithStreamK = true, class F>
__device__ __forceinline__ void for_each_unit(int cluster, int clusters, int k_tiles,
                                              const StreamK& sk, F&& f) {
  if constexpr (SplitK) {
    const long long units = (long long)sk.dp_tiles * sk.splits;
    for (long long u = cluster; u < units; u += clusters) {
      const int slice = int(u % sk.splits);
      f(WorkUnit{int(u / sk.splits), int((long long)slice * k_tiles / sk.splits),
                 int((long long)(slice + 1) * k_tiles / sk.splits), false, slice});
    }
    return;
  }
  // Whole tiles and stream-K's parts call f from two places: the whole-tile copy of the
  // consumer's body knows its unit spans all of K and ends its tile (no fix-up code on its
  // path), which short K feels (16384x4096x128 bf16 on the H200: 377 TFLOP/s, 363 with one
  // call site), at twice the compile time (5-7 s against about 3 s for the 128x256 tile there).
  for (int t = cluster, round = 0; t < sk.dp_tiles; t += clusters, ++round)
    f(WorkUnit{t, 0, k_tiles, (round & 1) == 1});
  if (!WithStreamK || sk.sk_tiles == 0) return;
  stream_k_split(sk.dp_tiles, sk.sk_tiles, k_tiles, clusters).for_each_segment(cluster, [&](const StreamKSegment part) {
    f(WorkUnit{part.tile, part.kt_begin, part.kt_end});
  });
}

// The id-th cluster tile of the batch: its matrix, then (row of cluster tiles, column
// tile) in the grouped order within the matrix.
struct ClusterTile {
  int item, row, col;
};
__device__ __forceinline__ ClusterTile cluster_tile(int id, int cluster_rows, int n_tiles,
                                                    int group_rows) {
  const int per_item = cluster_rows * n_tiles;
  const int item = id / per_item;
  id -= item * per_item;
  const int group_size = group_rows * n_tiles;
  const int first_row = (id / group_size) * group_rows;
  const int rows_here = min(cluster_rows - first_row, group_rows);
  const int in_group = id % group_size;
  const int col = in_group / rows_here;
  const bool back = (id / group_size) % 2 == 1;  // odd groups walk their columns backwards
  return {item, first_row + in_group % rows_here, back ? n_tiles - 1 - col : col};
}

// The producer warpgroup's work, done by one thread: every stage of this cluster's work
// units in order, each stage's (BM, BK) tile of A and (BN, BK) tile of B. `smem` holds the
// stages (kStageBytes each: A's tile, then B's); full/empty are the stages' barriers.
// Rung 24 (int8) runs the same producer. WithStreamK: as for_each_unit.
template <class Cfg, bool MnMajorA, bool MnMajorB, bool WithStreamK = true>
__device__ __forceinline__ void ws_produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                           unsigned char* smem, std::uint64_t* full, std::uint64_t* empty,
                                           int rank, int cluster_id, int clusters, int k_tiles,
                                           int cluster_rows, int n_tiles, const StreamK& sk,
                                           const WsBatch& batch) {
  using namespace hopper;
  constexpr int ClusterM = Cfg::kClusterM;
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageBytes; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageBytes + Cfg::kABytes; };
  int it = 0;  // stage uses so far: stage it % kStages, its (it / kStages)-th use
  for_each_unit<Cfg::kSplitK, WithStreamK>(cluster_id, clusters, k_tiles, sk, [&](const WorkUnit u) {
    const ClusterTile ct = cluster_tile(u.tile, cluster_rows, n_tiles, Cfg::kGroupRows);
    const int m0 = (ct.row * ClusterM + rank) * Cfg::BM, n0 = ct.col * Cfg::BN;
    const int za = batch.shared_a ? 0 : ct.item, zb = batch.shared_b ? 0 : ct.item;
    for (int j = u.k_begin; j < u.k_end; ++j, ++it) {
      const int kt = u.reverse ? u.k_end - 1 - (j - u.k_begin) : j;
      const int s = it % Cfg::kStages;
      barrier_wait(&empty[s], ((it / Cfg::kStages) & 1) ^ 1);  // first use: free already
      barrier_arrive_expect_bytes(&full[s], Cfg::kStageBytes);
      const int k0 = kt * Cfg::BK;
      // (BM, BK) of A: one K-major box of BM rows, or MN-major boxes of 64 columns.
      if constexpr (MnMajorA) {
        tma_load_3d(stage_a(s), &map_a, &full[s], m0, k0, za);
        if constexpr (Cfg::BM == 128)
          tma_load_3d(stage_a(s) + Cfg::kBoxBytes, &map_a, &full[s], m0 + 64, k0, za);
      } else {
        tma_load_3d(stage_a(s), &map_a, &full[s], k0, m0, za);
      }
      // (BN, BK) of B in parts of kBPartRows columns (two halves of 128 at BN = 256); in
      // a pair, each block copies its parts into both blocks.
      for (int h = 0; h < Cfg::kBParts; ++h) {
        if (ClusterM == 2 && h != rank) continue;
        unsigned char* dst = stage_b(s) + h * Cfg::kBPartBytes;
        const int nh = n0 + h * Cfg::kBPartRows;
        if constexpr (MnMajorB) {  // one or two boxes of 64 columns
          constexpr bool kTwo = Cfg::kBPartRows == 128;
          if constexpr (ClusterM == 2) {
            tma_load_3d_multicast(dst, &map_b, &full[s], nh, k0, zb, 0b11);
            if constexpr (kTwo)
              tma_load_3d_multicast(dst + Cfg::kBoxBytes, &map_b, &full[s], nh + 64, k0, zb, 0b11);
          } else {
            tma_load_3d(dst, &map_b, &full[s], nh, k0, zb);
            if constexpr (kTwo) tma_load_3d(dst + Cfg::kBoxBytes, &map_b, &full[s], nh + 64, k0, zb);
          }
        } else {
          if constexpr (ClusterM == 2) tma_load_3d_multicast(dst, &map_b, &full[s], k0, nh, zb, 0b11);
          else tma_load_3d(dst, &map_b, &full[s], k0, nh, zb);
        }
      }
    }
  });
}

// One consumer warpgroup's main loop over work unit u: waits for each stage, multiplies its
// 64 rows of A's tile (warpgroup c) by B's tile into acc (float for 16-bit and tf32 inputs,
// int for int8), and hands each stage back to the producers of the cluster once its
// multiplies are done. `it` counts the stages used so far (stage it % kStages).
template <class Cfg, bool MnMajorA, bool MnMajorB, class Acc, int N>
__device__ __forceinline__ void ws_consume(Acc (&acc)[N], const WorkUnit& u, int& it, unsigned char* smem,
                                           std::uint64_t* full, std::uint64_t* empty, int c, bool signals) {
  using namespace hopper;
  using T = typename Cfg::Element;
  auto stage_a = [&](int s) { return smem + s * Cfg::kStageBytes; };
  auto stage_b = [&](int s) { return smem + s * Cfg::kStageBytes + Cfg::kABytes; };
  // Byte offsets inside a stage: this warpgroup's 64 rows of A, and one wgmma's K step.
  // K-major tiles step along the 128-byte row (32 bytes of K); MN-major tiles step down
  // 32 / sizeof(T) rows of k (2048 bytes).
  constexpr int kStepA = MnMajorA ? Cfg::kInstrK * 128 : 32;
  constexpr int kStepB = MnMajorB ? Cfg::kInstrK * 128 : 32;
  constexpr std::uint32_t kLeadA = MnMajorA ? Cfg::kBoxBytes : 16;
  constexpr std::uint32_t kLeadB = MnMajorB ? Cfg::kBoxBytes : 16;
  const int a_rows_offset = c * 64 * 128;  // K-major: 64 rows; MN-major: the second box
  auto release = [&](int s) {
    if (!signals) return;
    for (int r = 0; r < Cfg::kClusterM; ++r) barrier_arrive_cluster(&empty[s], r);
  };
  for (int kt = u.k_begin; kt < u.k_end; ++kt, ++it) {
    const int s = it % Cfg::kStages;
    barrier_wait(&full[s], (it / Cfg::kStages) & 1);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / Cfg::kInstrK; ++kk) {
      const std::uint64_t da = smem_descriptor(stage_a(s) + a_rows_offset + kk * kStepA, kLeadA, 1024);
      const std::uint64_t db = smem_descriptor(stage_b(s) + kk * kStepB, kLeadB, 1024);
      wgmma_64xn<T, MnMajorA, MnMajorB>(acc, da, db);
    }
    wgmma_commit();
    // Keep this stage's multiplies in flight; the previous stage's are done, so its
    // buffers can be refilled.
    wgmma_wait<1>();
    if (kt > u.k_begin) release((it - 1) % Cfg::kStages);
  }
  wgmma_wait<0>();
  if (u.k_end > u.k_begin) release((it - 1) % Cfg::kStages);  // (an empty unit used no stage)
}

// Stream-K's partial sums, 4 accumulators at a time: float4 or int4 (rung 24's exact sums).
template <class Acc>
using Acc4 = std::conditional_t<std::is_same_v<Acc, int>, int4, float4>;

// Stream-K after a work unit's main loop, for consumer c of block `rank` of cluster
// `cluster_id`. Not the tile's end: leaves the unit's partial sums for the cluster that
// ends the tile (its slot: 64 x BN sums, 4-vector r4 of thread i at [r4 * 128 + i], so a
// warp moves 512 contiguous bytes), raises its flag, and returns false (no epilogue). The
// tile's end (or a whole tile): adds what the clusters before this one left for it, in
// cluster order, and returns true.
template <class Cfg, class Acc, int N>
__device__ __forceinline__ bool stream_k_finish(Acc (&acc)[N], const WorkUnit& u, const StreamK& sk, int k_tiles,
                                                int cluster_id, int clusters, int rank, int c, bool signals) {
  using namespace hopper;
  constexpr int kSlot = 128 * (N / 4);
  const int lane128 = threadIdx.x % 128;
  auto slot = [&](int cl) {
    return reinterpret_cast<Acc4<Acc>*>(sk.partials) + ((cl * Cfg::kClusterM + rank) * Cfg::kConsumers + c) * kSlot;
  };
  auto flag = [&](int cl) { return sk.flags + (cl * Cfg::kClusterM + rank) * Cfg::kConsumers + c; };
  if (u.k_end < k_tiles) {
    Acc4<Acc>* out = slot(cluster_id);
#pragma unroll
    for (int r4 = 0; r4 < N / 4; ++r4)
      out[r4 * 128 + lane128] = Acc4<Acc>{acc[4 * r4], acc[4 * r4 + 1], acc[4 * r4 + 2], acc[4 * r4 + 3]};
    named_barrier(1 + c, 128);
    if (signals) flag_raise(flag(cluster_id), sk.launch);
    return false;
  }
  if (u.k_begin > 0) {
    const int first = stream_k_split(sk.dp_tiles, sk.sk_tiles, k_tiles, clusters).first_sk_block(u.tile);
    for (int cl = first; cl < cluster_id; ++cl) {
      if (signals) flag_wait(flag(cl), sk.launch);
      named_barrier(1 + c, 128);
      const Acc4<Acc>* in = slot(cl);
#pragma unroll
      for (int r4 = 0; r4 < N / 4; ++r4) {
        const Acc4<Acc> v = in[r4 * 128 + lane128];
        acc[4 * r4] += v.x, acc[4 * r4 + 1] += v.y, acc[4 * r4 + 2] += v.z, acc[4 * r4 + 3] += v.w;
      }
    }
  }
  return true;
}

// The kernel's parameters, as the launcher passes them (it is compiled on first use, so the
// host never sees its instantiation; the kernel checks that they agree).
template <class Cfg>
using WgmmaWsParameters = void(CUtensorMap, CUtensorMap, CUtensorMap, TensorArgs<typename Cfg::Element>, StreamK,
                               WsBatch);

// The problem's M, N and K as compile-time constants (cuda_wgmma_fixed), so that the tile
// counts, the K loop's trip count and the stream-K or split-K arithmetic fold; 0 reads
// them from the arguments (every other launch). The launcher passes the same values.
template <int M, int N, int K>
struct FixedShape {
  static constexpr int kM = M, kN = N, kK = K;
};
using AnyShape = FixedShape<0, 0, 0>;

template <class Shape, class T>
__device__ __forceinline__ TensorArgs<T> with_shape(TensorArgs<T> g) {
  if constexpr (Shape::kM > 0) g.m = Shape::kM;
  if constexpr (Shape::kN > 0) g.n = Shape::kN;
  if constexpr (Shape::kK > 0) g.k = Shape::kK;
  return g;
}

// map_c is used only when g.c_tma.
template <class Cfg, bool MnMajorA, bool MnMajorB, class Shape = AnyShape>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_ws_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c,
                    const TensorArgs<typename Cfg::Element> args, const StreamK sk,
                    const WsBatch batch) {
  static_assert(std::is_same_v<decltype(wgmma_ws_kernel<Cfg, MnMajorA, MnMajorB, Shape>), WgmmaWsParameters<Cfg>>);
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = typename Cfg::Element;
  const TensorArgs<T> g = with_shape<Shape>(args);
  constexpr int ClusterM = Cfg::kClusterM;
  using namespace hopper;

  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - smem_address(smem_raw) % 1024) % 1024);
  unsigned char* epilogue = smem + Cfg::kStages * Cfg::kStageBytes;  // one buffer per consumer
  std::uint64_t* full =
      reinterpret_cast<std::uint64_t*>(epilogue + Cfg::kConsumers * Cfg::kEpilogueBytes);
  std::uint64_t* empty = full + Cfg::kStages;

  const int rank = ClusterM == 1 ? 0 : int(cluster_block_rank());
  const int warpgroup = threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      barrier_init(&full[s], 1);  // the producer's arrival; the bytes complete the phase
      barrier_init(&empty[s], Cfg::kConsumers * ClusterM);  // every consumer that reads it
    }
    fence_barrier_init();
  }
  cluster_sync();  // barriers of both blocks initialised before anyone signals them

  const int m_tiles = (g.m + Cfg::BM - 1) / Cfg::BM;
  const int n_tiles = (g.n + Cfg::BN - 1) / Cfg::BN;
  const int cluster_rows = (m_tiles + ClusterM - 1) / ClusterM;
  const int k_tiles = (g.k + Cfg::BK - 1) / Cfg::BK;
  const int cluster_id = blockIdx.x / ClusterM, clusters = gridDim.x / ClusterM;

  if (warpgroup == 0) {
    // ---- producer: one thread issues every copy --------------------------------------
    // Two consumers need more than an even share of the registers; one does not.
    if constexpr (Cfg::kConsumers == 2) release_registers<40>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      if (g.c_tma) prefetch_tensor_map(&map_c);
      ws_produce<Cfg, MnMajorA, MnMajorB>(map_a, map_b, smem, full, empty, rank, cluster_id, clusters,
                                          k_tiles, cluster_rows, n_tiles, sk, batch);
    }
  } else {
    // ---- consumers: warpgroup c multiplies rows [64c, 64c + 64) of the tile ------------
    if constexpr (Cfg::kConsumers == 2) claim_registers<232>();
    const int c = warpgroup - 1;
    const bool signals = threadIdx.x % 128 == 0;  // one thread per warpgroup frees stages

    // Split-K's slots of partial sums: 64 x BN floats per consumer, in stream-K's order.
    constexpr int kAcc = Cfg::BN / 2;                // accumulators per thread
    [[maybe_unused]] constexpr int kSlotFloat4s = 128 * (kAcc / 4);  // one consumer's 64 x BN floats
    [[maybe_unused]] const int lane128 = threadIdx.x % 128;

    int it = 0;
    for_each_unit<Cfg::kSplitK>(cluster_id, clusters, k_tiles, sk, [&](const WorkUnit u) {
      const ClusterTile ct = cluster_tile(u.tile, cluster_rows, n_tiles, Cfg::kGroupRows);
      const int m0 = (ct.row * ClusterM + rank) * Cfg::BM, n0 = ct.col * Cfg::BN;

      float acc[kAcc];
#pragma unroll
      for (int r = 0; r < kAcc; ++r) acc[r] = 0.0f;

      ws_consume<Cfg, MnMajorA, MnMajorB>(acc, u, it, smem, full, empty, c, signals);

      if constexpr (Cfg::kSplitK) {
        // Split-K (rung 21): every slice leaves its partial sums and counts itself done;
        // the slice that counts last adds all of them in slice order (its own read back
        // from where it left them), so the bits do not depend on which slice came last,
        // and nobody waits for anybody. Many slices go in two levels the same way
        // (wgmma_split_group_size): the last slice of each group adds the group's slices
        // into the group's first slot and counts the group done; the last group adds the
        // groups' sums in group order.
        const std::size_t wg_tile = (std::size_t(u.tile) * ClusterM + rank) * Cfg::kConsumers + c;
        float4* slices = reinterpret_cast<float4*>(sk.partials) + wg_tile * sk.splits * kSlotFloat4s;
        const int group_size = wgmma_split_group_size(sk.splits);
        const int groups = (sk.splits + group_size - 1) / group_size;
        unsigned* counters = sk.flags + wg_tile * wgmma_split_counters(sk.splits);
        const int group = u.slice / group_size;
        // The slots this level adds: `count` of them from `first`, `stride` apart.
        int first = group * group_size, count = min(sk.splits - first, group_size), stride = 1;
        int slot_out = u.slice;  // where this warpgroup's sums go next
        unsigned* counter = groups > 1 ? counters + 1 + group : counters;
        for (int level = 0;; ++level) {
          float4* out = slices + std::size_t(slot_out) * kSlotFloat4s;
#pragma unroll
          for (int r4 = 0; r4 < kAcc / 4; ++r4)
            __stcg(out + r4 * 128 + lane128,
                   make_float4(acc[4 * r4], acc[4 * r4 + 1], acc[4 * r4 + 2], acc[4 * r4 + 3]));
          __threadfence();  // the sums are visible GPU-wide before they are counted
          named_barrier(1 + c, 128);
          bool last = false;
          if (signals) last = atomicAdd(counter, 1u) == unsigned(count - 1);
          if (!named_barrier_or(1 + c, 128, last)) return;
          __threadfence();  // everything counted is visible
          const float4* in = slices + std::size_t(first) * kSlotFloat4s;
#pragma unroll
          for (int r4 = 0; r4 < kAcc / 4; ++r4) {
            const float4 v = __ldcg(in + r4 * 128 + lane128);
            acc[4 * r4] = v.x, acc[4 * r4 + 1] = v.y, acc[4 * r4 + 2] = v.z, acc[4 * r4 + 3] = v.w;
          }
          for (int i = 1; i < count; ++i) {
            in = slices + std::size_t(first + i * stride) * kSlotFloat4s;
#pragma unroll
            for (int r4 = 0; r4 < kAcc / 4; ++r4) {
              const float4 v = __ldcg(in + r4 * 128 + lane128);
              acc[4 * r4] += v.x, acc[4 * r4 + 1] += v.y, acc[4 * r4 + 2] += v.z, acc[4 * r4 + 3] += v.w;
            }
          }
          if (level == 1 || groups == 1) break;
          // The group's sum replaces its first slice (read above, and by nobody else).
          slot_out = first;
          first = 0, count = groups, stride = group_size;
          counter = counters;
        }
      } else {
        if (!stream_k_finish<Cfg>(acc, u, sk, k_tiles, cluster_id, clusters, rank, c, signals)) return;
      }

      if (g.c_tma) {
        unsigned char* buffer = epilogue + c * Cfg::kEpilogueBytes;
        if (g.c_f32)
          tma_store_wgmma_tile<float, Cfg::kEpilogueBytes>(&map_c, g.alpha, acc, m0 + c * 64, n0, ct.item, buffer, 1 + c, signals);
        else
          tma_store_wgmma_tile<T, Cfg::kEpilogueBytes>(&map_c, g.alpha, acc, m0 + c * 64, n0, ct.item, buffer, 1 + c, signals);
      } else {
        TensorArgs<T> item = g;  // C of this tile's matrix
        item.c = static_cast<unsigned char*>(g.c) +
                 ct.item * batch.stride_c * (g.c_f32 ? sizeof(float) : sizeof(T));
        store_wgmma_tile(item, acc, m0 + c * 64, n0);
      }
    });
    if (signals && g.c_tma) bulk_wait();  // the last stores have landed before the block ends
  }
  __syncwarp();
  cluster_sync();  // no block leaves while its pair may still signal or fill its buffers
#else
  __trap();  // built only for sm_90a; the launcher never picks it elsewhere
#endif
}

}  // namespace gemmkit::cuda::kernels

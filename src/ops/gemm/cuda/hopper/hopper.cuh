// Hopper (sm_90a) building blocks the wgmma rungs share: shared-memory barriers
// (mbarrier), bulk tensor copies (TMA), warpgroup matrix multiply-accumulate (wgmma) and
// its shared-memory descriptors, register reallocation. Thin wrappers over one PTX
// instruction each, so the kernels read as the algorithm. Only __device__ code here.
//
// The shared-memory layout every operand tile uses is the one the bulk copy engine writes
// with 128-byte swizzling: rows of 128 bytes (64 16-bit or 32 32-bit elements), each row's
// eight 16-byte chunks permuted by XOR with the row index mod 8, in atoms of 8 rows = 1024
// bytes. wgmma reads the same layout through a descriptor, so no thread ever touches the
// operands: they go from global memory to the tensor cores without passing a register.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "ops/gemm/cuda/hopper/wgmma_operands.cuh"
#include "ops/gemm/cuda/common/tensor_common.cuh"

namespace gemmkit::cuda::kernels::hopper {

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- clusters ---------------------------------------------------------------------------
// (One PTX instruction each rather than cooperative_groups, whose header costs a kernel
// compiled on first use almost a second.)

// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_block_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives, then waits for all the others; memory
// written before is visible to the cluster after (release / acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address of `p` (this block's shared memory) in the shared memory of the cluster's block
// `rank`, as a generic pointer (distributed shared memory).
template <class T>
__device__ __forceinline__ T* map_shared_rank(T* p, unsigned rank) {
  std::uint64_t remote;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(reinterpret_cast<std::uint64_t>(p)), "r"(rank));
  return reinterpret_cast<T*>(remote);
}

// ---- mbarrier: a shared-memory barrier that also counts bytes delivered by TMA ----------

__device__ __forceinline__ void barrier_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals));
}

// Makes barrier initialisation visible to the copy engine and to the other CTAs of the
// cluster, before anyone uses the barriers.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also announces `bytes` of TMA traffic the phase must wait for.
__device__ __forceinline__ void barrier_arrive_expect_bytes(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}

// Arrives on the barrier at the same shared-memory offset in CTA `cta_rank` of the cluster
// (this CTA's own when cta_rank is its rank).
__device__ __forceinline__ void barrier_arrive_cluster(std::uint64_t* bar, unsigned cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_address(bar)),
      "r"(cta_rank)
      : "memory");
}

// Waits until the barrier's phase with this parity (0 or 1) has completed.
__device__ __forceinline__ void barrier_wait(std::uint64_t* bar, unsigned parity) {
  const std::uint32_t address = smem_address(bar);
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(address), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA: bulk tensor copies global -> shared, described by a CUtensorMap ---------------

// Copies the box at element coordinates (inner, outer) into `dst`; completion is counted on
// `bar` in bytes. Parts of the box outside the tensor arrive as zeros: edge tiles need no
// predicates in the main loop.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(inner), "r"(outer)
      : "memory");
}

// The same box delivered to the same shared-memory offset in every CTA of `cta_mask`, each
// CTA's barrier at `bar`'s offset counting the bytes it received.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, int inner, int outer,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(inner), "r"(outer),
      "h"(cta_mask)
      : "memory");
}

// The same from a rank-3 map (a strided batch): the box of matrix `item` at (inner, outer).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int inner, int outer, int item) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(inner), "r"(outer),
      "r"(item)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, int inner, int outer,
                                                      int item, std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_address(bar)), "r"(inner), "r"(outer),
      "r"(item), "h"(cta_mask)
      : "memory");
}

// Copies `src` (a box laid out as tma_load_2d leaves it) to matrix `item` of a rank-3 map
// (a strided batch; 0 for one matrix) at (inner, outer); parts of the box outside the tensor
// are not written. Completion is tracked per thread with bulk groups (bulk_commit /
// bulk_wait_read).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int inner,
                                             int outer, int item) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(smem_address(src)), "r"(inner), "r"(outer), "r"(item)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until this thread's committed bulk stores have finished reading shared memory.
// Pending: how many of the latest groups may still be reading.
template <int Pending = 0>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}
// Waits until this thread's committed bulk stores are complete in global memory.
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Makes this thread's ordinary shared-memory stores visible to the copy engine.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Barrier among `threads` threads (a multiple of 32) that use the same id (1..15; 0 is
// __syncthreads).
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// The same barrier, which also returns whether `value` was true in any of the threads.
__device__ __forceinline__ bool named_barrier_or(int id, int threads, bool value) {
  unsigned any = 0;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\n"
      "bar.red.or.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(unsigned(value)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---- register reallocation between warpgroups (needs a register cap at kernel entry) ----

template <int Registers>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

// ---- wgmma ----------------------------------------------------------------------------

// Shared-memory matrix descriptor for a 128-byte-swizzled tile (PTX ISA "matrix descriptor"):
// bits 0-13 start address / 16, 16-29 leading byte offset / 16, 32-45 stride byte offset / 16,
// 62-63 swizzle mode (1 = 128 bytes). The start must lie in a 1024-byte-aligned atom (or
// step inside one along the 128-byte row, as the K steps of a K-major tile do).
//   K-major tile (rows of K):  stride offset = 1024 (next 8 rows); leading offset unused.
//   MN-major tile (rows of M or N, one row per k): leading offset = bytes between 64-element
//   chunks of M or N; stride offset = 1024 (next 8 values of k).
__device__ __forceinline__ std::uint64_t smem_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                         std::uint32_t stride_bytes) {
  std::uint64_t d = (smem_address(tile) & 0x3FFFF) >> 4;
  d |= std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16;
  d |= std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32;
  d |= std::uint64_t(1) << 62;  // 128-byte swizzle
  return d;
}

// Orders this thread's register accesses to the accumulators before the next wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most `Pending` committed groups of this warpgroup are still running.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// d(64 x 256, f32) += A(64 x K) * B(K x 256), A and B in shared memory behind descriptors,
// K = 16 for 16-bit inputs and 8 for tf32. d is laid out per thread as the PTX ISA's
// m64nNk* accumulator fragment: d[r] is row 16*warp + lane/4 + 8*((r/2)%2), column
// 8*(r/4) + 2*(lane%4) + r%2 (warp and lane within the warpgroup).
// MnMajorA/B: the operand's tile is stored with M (or N) contiguous (16-bit types only;
// tf32 operands must be K-major).
template <class T, bool MnMajorA, bool MnMajorB>
__device__ __forceinline__ void wgmma_64x256(float (&d)[128], std::uint64_t desc_a,
                                             std::uint64_t desc_b) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " GEMMKIT_D128_OPERANDS
                 ", %128, %129, acc, 1, 1, %130, %131;\n}"
                 : GEMMKIT_D64(0), GEMMKIT_D64(64)
                 : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
  } else if constexpr (std::is_same_v<T, __half>) {
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " GEMMKIT_D128_OPERANDS
                 ", %128, %129, acc, 1, 1, %130, %131;\n}"
                 : GEMMKIT_D64(0), GEMMKIT_D64(64)
                 : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
  } else {
    static_assert(std::is_same_v<T, float> && !MnMajorA && !MnMajorB,
                  "tf32 wgmma reads K-major operands only");
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " GEMMKIT_D128_OPERANDS
                 ", %128, %129, acc, 1, 1;\n}"
                 : GEMMKIT_D64(0), GEMMKIT_D64(64)
                 : "l"(desc_a), "l"(desc_b));
  }
}

// d(64 x N, f32) += A(64 x K) * B(K x N) for N = 256, 128 or 64: d holds N / 2 floats per
// thread in the fragment order of wgmma_64x256 (d[r]: column 8*(r/4) + 2*(lane%4) + r%2).
// Narrower tiles keep more SMs busy on small outputs; N = 256 is wgmma_64x256 itself.
template <class T, bool MnMajorA, bool MnMajorB, int Acc>
__device__ __forceinline__ void wgmma_64xn(float (&d)[Acc], std::uint64_t desc_a,
                                           std::uint64_t desc_b) {
  constexpr int N = 2 * Acc;
  static_assert(N == 256 || N == 128 || N == 64, "wgmma tiles of 256, 128 or 64 columns");
  static_assert(!std::is_same_v<T, float> || (!MnMajorA && !MnMajorB),
                "tf32 wgmma reads K-major operands only");
  if constexpr (N == 256) {
    wgmma_64x256<T, MnMajorA, MnMajorB>(d, desc_a, desc_b);
  } else if constexpr (N == 128) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " GEMMKIT_D64_OPERANDS
                   ", %64, %65, acc, 1, 1, %66, %67;\n}"
                   : GEMMKIT_D64(0)
                   : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
    else if constexpr (std::is_same_v<T, __half>)
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " GEMMKIT_D64_OPERANDS
                   ", %64, %65, acc, 1, 1, %66, %67;\n}"
                   : GEMMKIT_D64(0)
                   : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
    else
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " GEMMKIT_D64_OPERANDS
                   ", %64, %65, acc, 1, 1;\n}"
                   : GEMMKIT_D64(0)
                   : "l"(desc_a), "l"(desc_b));
  } else {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " GEMMKIT_D32_OPERANDS
                   ", %32, %33, acc, 1, 1, %34, %35;\n}"
                   : GEMMKIT_D32(0)
                   : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
    else if constexpr (std::is_same_v<T, __half>)
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " GEMMKIT_D32_OPERANDS
                   ", %32, %33, acc, 1, 1, %34, %35;\n}"
                   : GEMMKIT_D32(0)
                   : "l"(desc_a), "l"(desc_b), "n"(int(MnMajorA)), "n"(int(MnMajorB)));
    else
      asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
                   "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " GEMMKIT_D32_OPERANDS
                   ", %32, %33, acc, 1, 1;\n}"
                   : GEMMKIT_D32(0)
                   : "l"(desc_a), "l"(desc_b));
  }
}

// Epilogue straight from one warpgroup's accumulator fragments: its 64 x N outputs (N =
// 2 * Acc: 256, 128 or 64) start at (row0, col0) of C; acc[4j + 2h + e] is row
// 16 * warp + lane / 4 + 8h, column 8j + 2 * (lane % 4) + e (warp and lane within the
// warpgroup).
template <class T, int Acc>
__device__ __forceinline__ void store_wgmma_tile(const TensorArgs<T>& g, const float (&acc)[Acc],
                                                 int row0, int col0) {
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  row0 += warp * 16 + lane / 4;
  col0 += 2 * (lane % 4);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + 8 * h;
    if (row >= g.m) continue;
#pragma unroll
    for (int j = 0; j < Acc / 4; ++j) {
      const int col = col0 + 8 * j;
      if (col < g.n) store_pair(g, row, col, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    }
  }
}

// The same outputs (beta == 0) through shared memory and TMA stores into matrix `item` of
// the rank-3 map of C (a strided batch; item 0 of one matrix): the warpgroup writes
// alpha * acc as Out into `buffer` (BufferBytes, 1024-byte aligned) in the 128-byte-swizzled
// box layout (64 rows x 128 bytes per box, conflict-free: the eight rows a store instruction
// touches land in eight different 16-byte chunks), then `leader` hands the boxes to the copy
// engine, which clips them at the matrix edge. The tile (64 KiB of floats, 32 KiB of halves
// at 256 columns; N = 2 * Acc columns) goes in passes through the two halves of the buffer
// in turn, so that one half fills while the copy engine reads the other; the stores drain
// while the warpgroup multiplies its next tile.
//
// tma_store_tile is the same for any output: pair(r) gives the values of acc[r], acc[r + 1]
// as they are stored (rung 24 stores int32 this way).
template <class Out, int BufferBytes, int Acc, class PairOf>
__device__ __forceinline__ void tma_store_tile(const CUtensorMap* map_c, PairOf&& pair, int row0,
                                               int col0, int item, unsigned char* buffer,
                                               int barrier_id, bool leader) {
  constexpr int N = 2 * Acc;
  constexpr int kBoxCols = 128 / sizeof(Out);  // a 128-byte box row: 64 halves or 32 floats
  constexpr int kHalfBytes = BufferBytes / 2;
  constexpr int kPassCols = kHalfBytes / (64 * sizeof(Out));
  constexpr int kGroupsPerPass = kPassCols / 8;  // 8-column groups j of the fragment
  static_assert(kPassCols >= kBoxCols && N % kPassCols == 0, "passes of whole boxes");
  // With an even number of passes per tile, each tile starts in the half that the latest
  // group did not read; with an odd number (one pass of a narrow tile) it may be the same.
  constexpr bool kEvenPasses = (N / kPassCols) % 2 == 0;
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  // One loop over all column groups, fully unrolled, so acc is indexed by constants only.
#pragma unroll
  for (int j = 0; j < Acc / 4; ++j) {
    const int pass = j / kGroupsPerPass;
    unsigned char* half = buffer + (pass % 2) * kHalfBytes;
    if (j % kGroupsPerPass == 0) {
      // The stores that last read this half (two passes ago, or the previous tile's) are
      // done reading it; the latest group, out of the other half, may still be (unless it
      // read this very half: then all must be done).
      if (leader) {
        if (kEvenPasses || pass > 0) bulk_wait_read<1>();
        else bulk_wait_read<0>();
      }
      named_barrier(barrier_id, 128);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + 8 * h;                  // row in the 64
      const int col = 8 * j + 2 * (lane % 4) - pass * kPassCols;    // column in the pass
      const int box = col / kBoxCols, byte = (col % kBoxCols) * int(sizeof(Out));
      const int chunk = (byte / 16) ^ (r % 8);                      // the 128-byte swizzle
      Pair<Out>* dst =
          reinterpret_cast<Pair<Out>*>(half + box * 8192 + r * 128 + chunk * 16 + byte % 16);
      *dst = pair(4 * j + 2 * h);
    }
    if (j % kGroupsPerPass == kGroupsPerPass - 1) {
      fence_async_shared();
      named_barrier(barrier_id, 128);
      if (leader) {
#pragma unroll
        for (int box = 0; box < kPassCols / kBoxCols; ++box)
          tma_store_3d(map_c, half + box * 8192, col0 + pass * kPassCols + box * kBoxCols, row0,
                       item);
        bulk_commit();
      }
    }
  }
}

// alpha * acc as Out (float accumulators), through tma_store_tile.
template <class Out, int BufferBytes = 32768, int Acc>
__device__ __forceinline__ void tma_store_wgmma_tile(const CUtensorMap* map_c, float alpha,
                                                     const float (&acc)[Acc], int row0, int col0,
                                                     int item, unsigned char* buffer,
                                                     int barrier_id, bool leader) {
  tma_store_tile<Out, BufferBytes, Acc>(
      map_c,
      [&](int r) { return Pair<Out>{from_f32<Out>(alpha * acc[r]), from_f32<Out>(alpha * acc[r + 1])}; },
      row0, col0, item, buffer, barrier_id, leader);
}

// ---- int8 wgmma (rung 24) ---------------------------------------------------------------

// d(64 x N, s32) += A(64 x 32) * B(32 x N) on int8, N = 256, 208, 128 or 64 (d holds N / 2
// ints per thread, in the fragment order of the float shapes). 8-bit wgmma reads K-major
// operands only: A's and B's tiles are rows of K (128 bytes = 128 values), and one
// instruction's K = 32 is 32 bytes of them, the same step as 16 values of 16 bits.
// Accumulate = false: d = A * B, the sums start here (no instruction zeroes d first, which
// matters where another set of accumulators is still being multiplied into).
template <class T, bool MnMajorA, bool MnMajorB, bool Accumulate = true, int Acc>
__device__ __forceinline__ void wgmma_64xn(int (&d)[Acc], std::uint64_t desc_a, std::uint64_t desc_b) {
  constexpr int N = 2 * Acc;
  static_assert(std::is_same_v<T, std::int8_t> && !MnMajorA && !MnMajorB,
                "int32 accumulators: int8 inputs, K-major operands");
  static_assert(N == 256 || N == 208 || N == 128 || N == 64, "wgmma tiles of 256, 208, 128 or 64 columns");
  if constexpr (N == 256)
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 " GEMMKIT_D128_OPERANDS
                 ", %128, %129, acc;\n}"
                 : GEMMKIT_R64(0), GEMMKIT_R64(64)
                 : "l"(desc_a), "l"(desc_b), "n"(int(Accumulate)));
  else if constexpr (N == 208)
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %106, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n208k32.s32.s8.s8 " GEMMKIT_D104_OPERANDS
                 ", %104, %105, acc;\n}"
                 : GEMMKIT_R104(0)
                 : "l"(desc_a), "l"(desc_b), "n"(int(Accumulate)));
  else if constexpr (N == 128)
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 " GEMMKIT_D64_OPERANDS
                 ", %64, %65, acc;\n}"
                 : GEMMKIT_R64(0)
                 : "l"(desc_a), "l"(desc_b), "n"(int(Accumulate)));
  else
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 " GEMMKIT_D32_OPERANDS
                 ", %32, %33, acc;\n}"
                 : GEMMKIT_R32(0)
                 : "l"(desc_a), "l"(desc_b), "n"(int(Accumulate)));
}

}  // namespace gemmkit::cuda::kernels::hopper

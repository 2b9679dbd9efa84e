// cpu_blocked (rung 4): cache-blocked GEMM in the BLIS style. Rung 3 streams a whole row of C
// and of op(B) through the cache for every multiplier of A, two loads and a store per
// multiply-add, and reuses nothing beyond a row. Here:
//  - op(B) is copied, a (KC, NC) panel at a time, into NR-wide slivers, and op(A), an (MC, KC)
//    block at a time, into MR-tall slivers. Packing absorbs the transposes and leading
//    dimensions, and the panel and block then stay in L3 and L2 while they are reused.
//  - A micro-kernel keeps an (MR, NR) tile of C in vector registers and, per step of k, loads
//    one NR-wide row of the B sliver and broadcasts MR values of the A sliver: MR*NR/L fused
//    multiply-adds for NR/L + MR loads (L lanes per 256-bit vector). It is written with GCC
//    vector extensions, so it compiles for any target and becomes AVX2 FMA code here (i64,
//    which AVX2 cannot multiply, has a kernel of its own; see micro_kernel_split64).
//  - Edge tiles are zero-padded in the packed copies; the kernel always computes a whole tile
//    and the write-back keeps the part inside C, applying alpha and beta there.
//  - OpenMP threads split the blocks of rows of C (and the slivers of a panel when there are
//    fewer blocks than threads).
// Integers compute in the unsigned type of their width, so overflow wraps without UB; int8
// inputs (C in int32) and int32 inputs with C in int64 are widened as they are packed.
#include <omp.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

#include "runtime/ceil_div.hpp"
#include "ops/gemm/cpu/cpu_kernels.hpp"

namespace gemmkit::cpu {
namespace {

// 256-bit vectors: AVX2 registers when compiled for x86-64-v3.
template <class U>
struct Simd {
  typedef U type __attribute__((vector_size(32)));
  static constexpr int lanes = 32 / sizeof(U);
};

constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// The packing buffers, kept by the calling thread between calls and grown when a call needs
// more: fresh memory costs a page fault per 4 KiB on first touch, which at 256^3 took as long
// as the multiplication (the first calls of a size ran slower than the later ones). Returns `bytes`
// bytes, 64-byte aligned, valid until this thread's next call.
std::byte* packing_scratch(std::size_t bytes) {
  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  thread_local std::unique_ptr<std::byte, Free> buffer;
  thread_local std::size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset();
    capacity = 0;
    try {
      buffer.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{64})));
    } catch (const std::bad_alloc&) {
      fail(ErrorCategory::out_of_memory, "cpu_blocked: cannot allocate packing buffers");
    }
    capacity = bytes;
  }
  return buffer.get();
}

// 32 x 32 -> 64-bit products of the low halves of the 64-bit lanes (vpmuludq). GCC does not
// see that masked operands fit in 32 bits, so on AVX2 this asks for the instruction directly.
inline Simd<std::uint64_t>::type mul_low_halves(Simd<std::uint64_t>::type x,
                                                Simd<std::uint64_t>::type y) {
#if defined(__AVX2__)
  return (Simd<std::uint64_t>::type)_mm256_mul_epu32((__m256i)x, (__m256i)y);
#else
  return (x & 0xffffffffu) * (y & 0xffffffffu);
#endif
}

// The micro-kernel for 64-bit integers, which AVX2 cannot multiply: per lane, modulo 2^64,
//   a b = lo(a) lo(b) + 2^32 (hi(a) lo(b) + lo(a) hi(b)).
// The first part is summed in 64-bit lanes with vpmuludq; the second only modulo 2^32, in
// 32-bit lanes with vpmulld against a copy of a with its halves swapped. Both sums are linear,
// so they are combined once per tile instead of once per product: 4 instructions per vector
// of products instead of the 7 of the compiler's generic 64-bit multiply.
template <int MR, int NR>
void micro_kernel_split64(std::int64_t kc, const std::uint64_t* __restrict a,
                          const std::uint64_t* __restrict b, std::uint64_t* __restrict tile) {
  using V = Simd<std::uint64_t>::type;
  using V32 = Simd<std::uint32_t>::type;
  constexpr int L = Simd<std::uint64_t>::lanes, NV = NR / L;
  static_assert(NR % L == 0, "NR must be a whole number of vectors");
  V low[MR][NV] = {};
  V32 cross[MR][NV] = {};  // 32-bit lane 2l: hi(a) lo(b); lane 2l + 1: lo(a) hi(b)
  for (std::int64_t p = 0; p < kc; ++p) {
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + p * NR + v * L, sizeof(V));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const std::uint64_t ar = a[p * MR + r];
      const V av = V{} + ar;
      const V32 swapped = (V32)(V{} + ((ar >> 32) | (ar << 32)));
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        low[r][v] += mul_low_halves(av, bv[v]);
        cross[r][v] += swapped * (V32)bv[v];
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      const V c = (V)cross[r][v];
      const V sum = low[r][v] + ((c + (c >> 32)) << 32);  // the two 32-bit halves, added, on top
      std::memcpy(tile + r * NR + v * L, &sum, sizeof(V));
    }
}

// (MR, NR) tile = (MR, kc) sliver of op(A) x (kc, NR) sliver of op(B). The A sliver holds MR
// values per step of k, the B sliver NR. The accumulators are MR x NR/L vectors (6 x 2 for
// f32: 12 of the 16 ymm registers), fully unrolled so they stay in registers.
template <class U, int MR, int NR>
void micro_kernel(std::int64_t kc, const U* __restrict a, const U* __restrict b,
                  U* __restrict tile) {
  if constexpr (std::is_same_v<U, std::uint64_t>) {
    micro_kernel_split64<MR, NR>(kc, a, b, tile);
  } else {
    using V = typename Simd<U>::type;
    constexpr int L = Simd<U>::lanes, NV = NR / L;
    static_assert(NR % L == 0, "NR must be a whole number of vectors");
    V acc[MR][NV] = {};
    for (std::int64_t p = 0; p < kc; ++p) {
      V bv[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + p * NR + v * L, sizeof(V));
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const U ar = a[p * MR + r];
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[r][v] += ar * bv[v];
      }
    }
    std::memcpy(tile, acc, sizeof acc);
  }
}

// C[0:rows, 0:cols] = alpha * tile + beta * C, or alpha * tile when C is write-only.
template <class U, int NR>
void write_back(const U* __restrict tile, U* __restrict c, std::int64_t ldc, std::int64_t rows,
                std::int64_t cols, U alpha, U beta, bool read_c) {
  for (std::int64_t r = 0; r < rows; ++r) {
    U* __restrict crow = c + r * ldc;
    const U* __restrict trow = tile + r * NR;
    if (read_c) {
      for (std::int64_t j = 0; j < cols; ++j) crow[j] = alpha * trow[j] + beta * crow[j];
    } else {
      for (std::int64_t j = 0; j < cols; ++j) crow[j] = alpha * trow[j];
    }
  }
}

// Rows [i0, i0 + mc) x columns [p0, p0 + kc) of op(A) into MR-row slivers: sliver s is
// (kc, MR), rows i0 + s*MR ..., zero past row i0 + mc. S: the stored element type, widened
// to U (int8 to 32 bits, int32 to 64: sign-extended, so the products are the exact ones).
template <class U, int MR, class S>
void pack_a(const Operand<S>& a, std::int64_t i0, std::int64_t mc, std::int64_t p0,
            std::int64_t kc, U* __restrict dst) {
  for (std::int64_t s = 0; s < ceil_div(mc, MR); ++s) {
    const std::int64_t rows = std::min<std::int64_t>(MR, mc - s * MR);
    U* __restrict sliver = dst + s * MR * kc;
    for (std::int64_t p = 0; p < kc; ++p) {
      for (std::int64_t r = 0; r < rows; ++r) sliver[p * MR + r] = static_cast<U>(a(i0 + s * MR + r, p0 + p));
      for (std::int64_t r = rows; r < MR; ++r) sliver[p * MR + r] = U{0};
    }
  }
}

// One NR-column sliver of op(B): rows [p0, p0 + kc) x columns [j0, j0 + cols), as (kc, NR),
// zero past column j0 + cols.
template <class U, int NR, class S>
void pack_b_sliver(const Operand<S>& b, std::int64_t p0, std::int64_t kc, std::int64_t j0,
                   std::int64_t cols, U* __restrict sliver) {
  for (std::int64_t p = 0; p < kc; ++p) {
    for (std::int64_t j = 0; j < cols; ++j) sliver[p * NR + j] = static_cast<U>(b(p0 + p, j0 + j));
    for (std::int64_t j = cols; j < NR; ++j) sliver[p * NR + j] = U{0};
  }
}

// C = beta * C (zero when beta == 0): all that is left when k == 0 or alpha == 0.
template <class U>
void scale_c(const GemmProblem& p, U beta) {
  U* c = static_cast<U*>(p.c);
  for (std::int64_t i = 0; i < p.m; ++i)
    for (std::int64_t j = 0; j < p.n; ++j) c[i * p.ldc + j] = p.beta == 0 ? U{0} : beta * c[i * p.ldc + j];
}

// S: the inputs' stored type; U: the compute type, which C holds (S = U but for int8 inputs
// with C in int32 and int32 inputs with C in int64).
template <class S, class U>
void blocked(const GemmProblem& p) {
  using Tiles = Blocking<U>;
  constexpr int MR = Tiles::mr, NR = Tiles::nr;
  static_assert(Tiles::nc % NR == 0 && Tiles::mc % MR == 0, "blocks must hold whole slivers");
  const std::int64_t m = p.m, n = p.n, k = p.k;
  if (m == 0 || n == 0) return;
  const U alpha = scalar_as<U>(p.alpha), beta = scalar_as<U>(p.beta);
  if (k == 0 || p.alpha == 0) return scale_c<U>(p, beta);
  const Operand<S> a = op_a<S>(p), b = op_b<S>(p);
  U* const c = static_cast<U*>(p.c);

  // Small problems are not worth waking a second thread for; a matrix of a batch run side by
  // side (inside a parallel region) has its thread only.
  const int threads = p.flops() < 2.0 * 64 * 64 * 64 || omp_in_parallel()
                          ? 1
                          : std::max(1, omp_get_max_threads());
  // Row blocks: a multiple of the thread count, of equal height (a multiple of MR) at most MC.
  const std::int64_t row_blocks = round_up(ceil_div(m, Tiles::mc), threads);
  const std::int64_t mc = std::min<std::int64_t>(round_up(ceil_div(m, row_blocks), MR), Tiles::mc);
  const std::int64_t ic_count = ceil_div(m, mc);
  // With fewer row blocks than threads the slivers of each panel are shared out too.
  const std::int64_t jr_groups = std::max<std::int64_t>(1, threads / ic_count);
  const std::int64_t kc_max = std::min<std::int64_t>(k, Tiles::kc);
  const std::int64_t nc_max = std::min<std::int64_t>(round_up(n, NR), Tiles::nc);

  // One (kc, nc) panel of op(B), shared, then one (mc, kc) block of op(A) per thread.
  // Sizes rounded to 64 elements keep every part 64-byte aligned.
  const std::int64_t b_elems = round_up(kc_max * nc_max, 64);
  const std::int64_t a_elems = round_up(round_up(mc, MR) * kc_max, 64);
  U* const scratch = reinterpret_cast<U*>(
      packing_scratch(static_cast<std::size_t>(b_elems + threads * a_elems) * sizeof(U)));

#pragma omp parallel num_threads(threads)
  {
    U* const b_pack = scratch;
    U* const a_block = scratch + b_elems + omp_get_thread_num() * a_elems;
    for (std::int64_t jc = 0; jc < n; jc += Tiles::nc) {
      const std::int64_t nc = std::min<std::int64_t>(Tiles::nc, n - jc);
      const std::int64_t slivers = ceil_div(nc, NR);
      for (std::int64_t pc = 0; pc < k; pc += Tiles::kc) {
        const std::int64_t kc = std::min<std::int64_t>(Tiles::kc, k - pc);
        // The first k panel applies beta; later ones add to what it wrote.
        const bool read_c = pc > 0 || p.beta != 0;
        const U beta_now = pc > 0 ? U{1} : beta;

        // Every thread is done with the previous panel before it is overwritten. (Not at the
        // end of each panel: after the last one the end of the parallel region waits anyway,
        // and each wait costs a time slice when another process holds a core.)
        if (jc > 0 || pc > 0) {
#pragma omp barrier
        }
        // (kc, nc) panel of op(B) as NR-wide slivers, packed by all threads.
#pragma omp for schedule(static)
        for (std::int64_t s = 0; s < slivers; ++s)
          pack_b_sliver<U, NR, S>(b, pc, kc, jc + s * NR, std::min<std::int64_t>(NR, nc - s * NR),
                               b_pack + s * NR * kc);

        // Dynamic: a thread that loses its core to another process holds nobody up.
        std::int64_t packed_ic = -1;  // the row block now in this thread's a_block
#pragma omp for schedule(dynamic) nowait
        for (std::int64_t item = 0; item < ic_count * jr_groups; ++item) {
          const std::int64_t ic = item / jr_groups * mc, group = item % jr_groups;
          const std::int64_t rows = std::min<std::int64_t>(mc, m - ic);
          if (packed_ic != ic) {
            pack_a<U, MR, S>(a, ic, rows, pc, kc, a_block);
            packed_ic = ic;
          }
          const std::int64_t per_group = ceil_div(slivers, jr_groups);
          const std::int64_t s_end = std::min(slivers, (group + 1) * per_group);
          for (std::int64_t s = group * per_group; s < s_end; ++s) {
            const std::int64_t j = jc + s * NR, cols = std::min<std::int64_t>(NR, n - j);
            for (std::int64_t ir = 0; ir < rows; ir += MR) {
              alignas(64) U tile[MR * NR];
              micro_kernel<U, MR, NR>(kc, a_block + ir * kc, b_pack + s * NR * kc, tile);
              write_back<U, NR>(tile, c + (ic + ir) * p.ldc + j, p.ldc,
                                std::min<std::int64_t>(MR, rows - ir), cols, alpha, beta_now,
                                read_c);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void blocked_gemm(const GemmProblem& problem) {
  const bool side_by_side = batch_side_by_side(problem);
  if (problem.dtype == DType::i8) return run_batch(problem, side_by_side, blocked<std::int8_t, std::uint32_t>);
  if (problem.dtype == DType::i32 && problem.c_dtype() == DType::i64)
    return run_batch(problem, side_by_side, blocked<std::int32_t, std::uint64_t>);
  with_compute_type(problem.dtype, "cpu_blocked", [&]<class U>() { run_batch(problem, side_by_side, blocked<U, U>); });
}

// cpu_blocked is also the CPU's exact int8 GEMM (C in i32) and its i32 GEMM with C in i64:
// the integer dtypes the GPU offers, with the same results.
KernelEntry blocked_entry() {
  std::vector<DType> dtypes = kCpuFloatsAndIntegers;
  dtypes.push_back(DType::i8);
  KernelEntry e = cpu_entry("cpu_blocked", 4, "cache-blocked GEMM in the BLIS style", dtypes, 30, blocked_gemm);
  e.batched = true;
  e.wider_integer_output = true;
  return e;
}

}  // namespace gemmkit::cpu

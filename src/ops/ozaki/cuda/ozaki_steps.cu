// The Ozaki scheme II on the GPU (gemmkit/ozaki.hpp): FP64 and FP32 GEMM from
// int8 tensor-core GEMMs.
//   1. The scan, ozaki_row_exponents and ozaki_spread: the exponent of the
//      largest |entry| and the sum of |entries| of each row of op(A) and column
//      of op(B), the spread the default plan adds bits for, and the first row
//      or column holding Inf or NaN; one read of each operand. ozaki_shifts
//      turns the exponents into the powers of two that scale each row and
//      column to the plan's bits.
//   2. exact_to_int8_planes (exact_residues.cuh) scales, rounds and reduces
//      every entry modulo each prime, straight into the K-major int8 planes the
//      modular GEMMs read.
//   3. modular_gemm: one int8 GEMM per prime, residues out (the fused kernel on
//      sm_90).
//   4. ozaki_epilogue: per entry the Chinese remainder rebuild (OzakiRebuild:
//      only the words that hold C', no division), the integer rounded once to
//      a double, scaled back, alpha and beta.
// The workspace holds the scan, the planes and modular_gemm's scratch.
// ozaki_detail::ozaki_gemm_over_ranks runs the same steps with the moduli
// This file holds the steps' kernels and launchers and the workspace's layout
// (ozaki_steps.hpp declares them); ozaki_gemm.cu runs them in one process,
// ozaki_ranks.cu over the ranks of a job.
// split over the ranks of a job (ops/ozaki/ozaki_ranks.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arith/crt_math.hpp"
#include "ops/ozaki/ozaki_device.hpp"
#include "ops/ozaki/ozaki_ranks.hpp"
#include "runtime/cuda/check.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_problem.hpp"
#include "ops/exact/cuda/exact_planes.hpp"
#include "runtime/cuda/event.hpp"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/launch.hpp"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/ozaki.hpp"
#include "ops/ozaki/cuda/ozaki_steps.hpp"

namespace gemmkit::ozaki_detail {

using cuda::ceil_div;
using cuda::padded16;

using cuda::kMaxPlaneRows;

namespace {  // the kernels and what only they use

// The exponents' initial value (bytes 0x80, below every ilogb of a double): a
// zero row keeps it.
constexpr int kNoEntry = int(0x80808080u);

// exponent[r] = max over the row's entries of ilogb |S(r, c)| (kNoEntry stays
// for a zero row), S rows x cols: S(r, c) = src[r * ld + c], or src[c * ld + r]
// when transposed; sum[r] += sum of |S(r, c)| (in chunks, by atomicAdd); *bad =
// the least row with an Inf or NaN. Block 256 threads,
// blockIdx.y a chunk of kChunk columns (atomicMax joins the chunks). Row-major
// S: a warp per row, lanes along it (coalesced); transposed: a thread per row,
// consecutive rows consecutive in memory, and shorter chunks, so that enough
// blocks keep enough loads in flight.
constexpr int kChunk = 1024, kChunkTransposed = 128;
template <class T, bool Transposed>
__global__ void __launch_bounds__(256)
    ozaki_row_exponents(const T* __restrict__ src, std::int64_t ld, std::int64_t rows, std::int64_t cols, int* exponent,
                        double* sum, unsigned long long* bad) {
  constexpr int kCols = Transposed ? kChunkTransposed : kChunk;
  const std::int64_t c0 = std::int64_t(blockIdx.y) * kCols, c1 = c0 + kCols < cols ? c0 + kCols : cols;
  double largest = 0, total = 0;
  bool finite = true;
  std::int64_t r;
  if constexpr (!Transposed) {
    r = std::int64_t(blockIdx.x) * 8 + threadIdx.x / 32;
    if (r >= rows) return;
    for (std::int64_t c = c0 + threadIdx.x % 32; c < c1; c += 32) {
      const double x = fabs(double(src[r * ld + c]));
      finite = finite && isfinite(x);
      largest = x > largest ? x : largest;
      total += x;
    }
    for (int o = 16; o > 0; o /= 2) {
      largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, o));
      total += __shfl_xor_sync(0xffffffffu, total, o);
    }
    finite = __all_sync(0xffffffffu, finite);
    if (threadIdx.x % 32 != 0) return;
  } else {
    r = std::int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (r >= rows) return;
#pragma unroll 8
    for (std::int64_t c = c0; c < c1; ++c) {
      const double x = fabs(double(src[c * ld + r]));
      finite = finite && isfinite(x);
      largest = x > largest ? x : largest;
      total += x;
    }
  }
  if (!finite)
    atomicMin(bad, static_cast<unsigned long long>(r));
  else if (largest > 0) {
    atomicMax(exponent + r, ilogb(largest));
    atomicAdd(sum + r, total);
  }
}

// *spread = max over rows of ceil(log2(2^exponent / mean)), the mean of the
// row's `cols` |entries| (sum / cols): the bits a plan needs beyond the
// mantissa's for the mean entry to keep the mantissa's precision. The scaling
// puts 2^exponent at 2^(bits - 1), so an entry x is rounded with a relative
// error of at most 2^(exponent - bits) / x; for x = mean that is 2^-53 (f64)
// when bits = 53 + log2(2^exponent / mean).
__global__ void ozaki_spread(const int* exponent, const double* sum, std::int64_t rows, std::int64_t cols,
                             int* spread) {
  int worst = 0;
  for (std::int64_t r = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; r < rows;
       r += std::int64_t(gridDim.x) * blockDim.x)
    if (exponent[r] != kNoEntry && sum[r] > 0)
      worst = max(worst, int(ceil(log2(ldexp(double(cols), exponent[r]) / sum[r]))));
  if (worst > 0) atomicMax(spread, worst);
}

template <class T>
void launch_row_exponents(const void* src, bool transposed, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                          int* exponent, double* sum, unsigned long long* bad, int* spread, Stream stream) {
  const auto* s = static_cast<const T*>(src);
  if (transposed)
    ozaki_row_exponents<T, true>
        <<<dim3(unsigned(ceil_div(rows, 256)), unsigned(ceil_div(cols, kChunkTransposed))), 256, 0, stream>>>(
            s, ld, rows, cols, exponent, sum, bad);
  else
    ozaki_row_exponents<T, false>
        <<<dim3(unsigned(ceil_div(rows, 8)), unsigned(ceil_div(cols, kChunk))), 256, 0, stream>>>(s, ld, rows, cols,
                                                                                                  exponent, sum, bad);
  cuda::check_launch("ozaki_row_exponents");
  ozaki_spread<<<unsigned(std::min<std::int64_t>(ceil_div(rows, 256), 1024)), 256, 0, stream>>>(exponent, sum, rows, cols,
                                                                                                  spread);
  cuda::check_launch("ozaki_spread");
}

// exponent -> shift in place: the power of two that brings the row's largest
// entry into [2^(bits-1), 2^bits); 0 for a zero row.
__global__ void ozaki_shifts(int* e, std::int64_t count, int bits) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    e[i] = e[i] == kNoEntry ? 0 : bits - 1 - e[i];
}

}  // namespace

OzakiRebuild make_rebuild(int moduli) {
  const crt_detail::CrtConstants c = crt_detail::make_constants(
      std::vector<std::uint32_t>(int8_moduli().begin(), int8_moduli().begin() + moduli));  // validates them
  OzakiRebuild k;
  k.moduli = c.moduli;
  k.pairs = (c.moduli + 1) / 2;
  k.odd = c.moduli % 2;
  for (int t = 0; t < k.pairs; ++t) {
    const int a = std::max(2 * t - k.odd, 0);
    const bool single = k.odd == 1 && t == 0;
    const std::uint64_t pa = c.p[a], pb = single ? 1 : c.p[a + 1], p = pa * pb;
    // M_t = P / p_t, and w = M_t^-1 mod p_t.
    if (single)
      std::copy(c.m[a], c.m[a] + crt_detail::kMaxWords, k.m[t]);
    else
      crt_detail::divide_words(c.m[a], std::uint32_t(pb), k.m[t]);
    std::uint32_t unused[crt_detail::kMaxWords];
    const std::uint64_t w = crt_detail::inverse_mod(crt_detail::divide_words(k.m[t], std::uint32_t(p), unused),
                                                    std::uint32_t(p));
    // x mod p_t from x mod pa and x mod pb: x = r_a e_a + r_b e_b (mod p_t).
    const std::uint64_t e_a = single ? 1 : pb * crt_detail::inverse_mod(std::uint32_t(pb % pa), std::uint32_t(pa));
    const std::uint64_t e_b = single ? 0 : pa * crt_detail::inverse_mod(std::uint32_t(pa % pb), std::uint32_t(pb));
    k.weight_a[t] = std::uint32_t(e_a % p * w % p);
    k.weight_b[t] = std::uint32_t(e_b % p * w % p);
    k.offset[t] = std::uint32_t((2 * p - 128 * std::uint64_t(k.weight_a[t] + k.weight_b[t]) % p) % p);
    const int shift = std::bit_width(p - 1) - 1;  // ceil(log2 p) - 1
    k.shift[t] = std::uint32_t(shift);
    k.inverse[t] = std::uint32_t(((std::uint64_t{1} << (32 + shift)) + p - 1) / p);
    k.minus_p[t] = std::uint32_t(0 - p);
    k.fraction[t] = std::uint32_t(((std::uint64_t{1} << 35) + p / 2) / p);
  }
  std::uint64_t carry = 1;  // -P = ~P + 1
  int bits = 0;
  for (int j = 0; j < crt_detail::kMaxWords; ++j) {
    carry += std::uint32_t(~c.modulus[j]);
    k.minus_modulus[j] = std::uint32_t(carry);
    carry >>= 32;
    if (c.modulus[j] != 0) bits = 32 * j + std::bit_width(c.modulus[j]);
  }
  k.words = (bits + 31) / 32;
  return k;
}


namespace {  // the rebuild's kernel

// x 2^scale, x L words of two's complement (least significant first), rounded
// to the nearest double: x's magnitude's top 64 bits, with a sticky bit for the
// rest, converted once, then scaled (exactly, unless the result is subnormal).
template <int L>
__device__ __forceinline__ double limbs_to_double(std::uint64_t (&x)[L], int scale) {
  const bool negative = (x[L - 1] >> 63) != 0;
  if (negative) {  // |x| = ~x + 1
    unsigned carry = 1;
#pragma unroll
    for (int l = 0; l < L; ++l) {
      x[l] = ~x[l] + carry;
      carry = carry && x[l] == 0;
    }
  }
  // The top nonzero limb a = x[top], the one below it b, and whether any limb under b is
  // nonzero: found with constant indices only, so that x stays in registers.
  std::uint64_t a = 0, b = 0, under = 0, seen_under = 0;
  int top = 0;
#pragma unroll
  for (int l = 0; l < L; ++l) {
    if (l >= 2) seen_under |= x[l - 2];
    if (x[l] != 0) {
      a = x[l], b = l > 0 ? x[l - 1] : 0, under = seen_under, top = l;
    }
  }
  if (a == 0) return 0.0;
  const int lead = __clzll(static_cast<long long>(a));
  const std::uint64_t bits = lead > 0 ? (a << lead) | (b >> (64 - lead)) : a;
  const std::uint64_t rest = (lead > 0 ? b << lead : b) | under;
  // bits in [2^63, 2^64) times 2^e is a normal double for e in [-1085, 959]:
  // then 2^e itself, when normal, makes it one multiplication.
  const double top64 = __ull2double_rn(bits | (rest != 0 ? 1u : 0u));
  const int e = 64 * top - lead + scale;
  const double magnitude =
      e >= -1022 && e <= 959 ? top64 * __longlong_as_double((1023ll + e) << 52) : ldexp(top64, e);
  return negative ? -magnitude : magnitude;
}

// Entries of C a thread of ozaki_epilogue rebuilds: consecutive columns, whose
// residues it reads as one word per plane.
constexpr int kEpilogueColumns = 4;
constexpr int kEpilogueThreads = 128;

// C(r, c) = alpha 2^-(shift_a[r] + shift_b[c]) C'(r, c) + beta C0(r, c), C'
// rebuilt from its residue planes (ld, plane_stride: multiples of 16) in W
// words (OzakiRebuild); with no moduli (k == 0 or alpha == 0) C' is zero.
// Block (x, y): kEpilogueThreads * kEpilogueColumns columns of rows y,
// y + gridDim.y, ...
template <class T, int W>
__global__ void __launch_bounds__(kEpilogueThreads)
    ozaki_epilogue(const __grid_constant__ OzakiRebuild k, const std::int8_t* __restrict__ planes, std::int64_t ld,
                   std::int64_t plane_stride, std::int64_t rows, std::int64_t cols, const int* __restrict__ shift_a,
                   const int* __restrict__ shift_b, double alpha, double beta, T* c, std::int64_t ldc) {
  constexpr int E = kEpilogueColumns, L = (W + 1) / 2;
  const std::int64_t col0 = (std::int64_t(blockIdx.x) * kEpilogueThreads + threadIdx.x) * E;
  if (col0 >= cols) return;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    std::uint64_t acc[E][W] = {};  // raw's words, each a sum of 32-bit products
    std::uint64_t fraction[E] = {};
    const std::int8_t* at = planes + r * ld + col0;
    // Unrolled by 4 only: the constants come by uniform loads (ULDC) indexed by
    // t, eight planes' loads are in flight at once, and the accumulators keep
    // their registers from one pair to the next.
#pragma unroll 4
    for (int t = 0; t < k.pairs; ++t) {
      // The pair's residues + 128 (the top bit of each byte flipped), as bytes; a
      // modulus alone reads its plane twice (weight_b 0).
      const int plane_b = 2 * t - k.odd + 1, plane_a = plane_b == 0 ? 0 : plane_b - 1;
      const std::uint32_t word_a =
          __ldg(reinterpret_cast<const std::uint32_t*>(at + plane_a * plane_stride)) ^ 0x80808080u;
      const std::uint32_t word_b =
          __ldg(reinterpret_cast<const std::uint32_t*>(at + plane_b * plane_stride)) ^ 0x80808080u;
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const std::uint32_t u = __byte_perm(word_a, 0, 0x4440 | e) * k.weight_a[t] +
                                __byte_perm(word_b, 0, 0x4440 | e) * k.weight_b[t] + k.offset[t];
        const std::uint32_t y = u + (__umulhi(u, k.inverse[t]) >> k.shift[t]) * k.minus_p[t];
        fraction[e] += std::uint64_t(y) * k.fraction[t];
#pragma unroll
        for (int j = 0; j < W; ++j) acc[e][j] += std::uint64_t(y) * k.m[t][j];
      }
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
      if (col0 + e >= cols) break;
      double v = 0;
      if (k.moduli > 0) {
        // C' = raw - q P: add q (-P), carry, as 64-bit limbs (sign-extended).
        const auto q = std::uint32_t((fraction[e] + (std::uint64_t{1} << 34)) >> 35);
        std::uint32_t x[2 * L];
        std::uint64_t carry = 0;
#pragma unroll
        for (int j = 0; j < W; ++j) {
          carry += acc[e][j] + std::uint64_t(q) * k.minus_modulus[j];
          x[j] = std::uint32_t(carry);
          carry >>= 32;
        }
        if constexpr (W % 2 == 1) x[W] = (x[W - 1] >> 31) != 0 ? 0xffffffffu : 0u;
        std::uint64_t limbs[L];
#pragma unroll
        for (int l = 0; l < L; ++l) limbs[l] = (std::uint64_t(x[2 * l + 1]) << 32) | x[2 * l];
        v = alpha * limbs_to_double(limbs, -(shift_a[r] + shift_b[col0 + e]));
      }
      T* out = c + r * ldc + col0 + e;
      *out = T(beta == 0 ? v : v + beta * double(*out));  // f32: rounded once more, from the double
    }
  }
}

// Calls f(std::integral_constant<int, W>{}) for the least instantiated W >= words.
template <class F>
void with_rebuild_words(int words, F&& f) {
  if (words <= 3) return f(std::integral_constant<int, 3>{});
  if (words <= 4) return f(std::integral_constant<int, 4>{});
  if (words <= 5) return f(std::integral_constant<int, 5>{});
  if (words <= 6) return f(std::integral_constant<int, 6>{});
  if (words <= 9) return f(std::integral_constant<int, 9>{});
  return f(std::integral_constant<int, 12>{});
}

// ozaki_epilogue over rows x cols of C (shift_a, c: from the first of them).
template <class T>
void launch_epilogue(const OzakiRebuild& rebuild, const std::int8_t* planes, std::int64_t ld, std::int64_t plane_stride,
                     std::int64_t rows, std::int64_t cols, const int* shift_a, const int* shift_b, double alpha,
                     double beta, T* c, std::int64_t ldc, Stream stream) {
  const dim3 grid(unsigned(ceil_div(cols, kEpilogueThreads * kEpilogueColumns)),
                  unsigned(std::min<std::int64_t>(rows, 65535)));
  with_rebuild_words(rebuild.words, [&](auto w) {
    ozaki_epilogue<T, w()><<<grid, kEpilogueThreads, 0, stream>>>(rebuild, planes, ld, plane_stride, rows, cols, shift_a,
                                                                  shift_b, alpha, beta, c, ldc);
  });
  cuda::check_launch("ozaki_epilogue");
}



}  // namespace

Regions regions(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan, std::int64_t block) {
  const std::size_t q = std::size_t(plan.moduli), kp = std::size_t(padded16(p.k)), np = std::size_t(padded16(p.n));
  Regions r;
  r.block = block;
  std::size_t at = workspace_aligned(sizeof(Scan));
  r.shift_a = at, at += workspace_aligned(std::size_t(p.m) * sizeof(int));
  r.shift_b = at, at += workspace_aligned(std::size_t(p.n) * sizeof(int));
  r.sum_a = at, at += workspace_aligned(std::size_t(p.m) * sizeof(double));
  r.sum_b = at, at += workspace_aligned(std::size_t(p.n) * sizeof(double));
  r.a = at, at += workspace_aligned(q * std::size_t(block) * kp);
  r.b = at, at += workspace_aligned(q * std::size_t(p.n) * kp);
  r.c = at, at += workspace_aligned(q * std::size_t(block) * np);
  r.gemm = at;
  at += workspace_aligned(
      modular_gemm_workspace_bytes(ctx, cuda::planes_problem(block, p.n, p.k, plan.moduli, nullptr, nullptr, nullptr)));
  r.total = at;
  return r;
}


// Rows of C per pass when each row takes `per_row` bytes of planes: the fewest
// even passes within the larger of `moduli` moduli's planes of op(B) halved and
// 1 GiB, from kMinBlock to kMaxPlaneRows rows.
std::int64_t pass_rows_within(const GemmProblem& p, int moduli, double per_row) {
  const double budget =
      std::max(double(moduli) * double(p.n) * double(padded16(p.k)) / 2, double(std::int64_t{1} << 30));
  const auto passes = std::int64_t(std::ceil(double(p.m) * per_row / budget));
  const std::int64_t block = ceil_div(p.m, std::max<std::int64_t>(passes, 1));
  return std::clamp(block, std::min(p.m, kMinBlock), kMaxPlaneRows);
}

// The layout of the declared workspace: one pass over all the rows, unless the
// planes of op(A) and C for all of them would take more than half the bytes of
// op(B)'s planes and more than 1 GiB; then the fewest passes within that (a
// 32768^3 FP64 product: 4 passes, 31 GB of workspace instead of 61).
Regions default_regions(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan) {
  const double q = plan.moduli, kp = double(padded16(p.k)), np = double(padded16(p.n));
  return regions(ctx, p, plan, pass_rows_within(p, plan.moduli, q * (kp + np)));
}

// The layout for `bytes` of workspace: the declared one when they hold it, else
// the one with the most rows per pass that they hold (each pass a whole
// fraction of the rows, down to kMinBlock), if any.
std::optional<Regions> regions_within(const Context& ctx, const GemmProblem& p, const OzakiPlan& plan,
                                      std::size_t bytes) {
  if (const Regions declared = default_regions(ctx, p, plan); declared.total <= bytes) return declared;
  for (std::int64_t passes = 1;; passes = passes < 16 ? passes + 1 : passes * 2) {
    const std::int64_t block = std::clamp(ceil_div(p.m, passes), std::min(p.m, kMinBlock), kMaxPlaneRows);
    const Regions r = regions(ctx, p, plan, block);
    if (r.total <= bytes) return r;
    if (block <= kMinBlock) return std::nullopt;
  }
}

std::optional<std::string> ozaki_rejects(const GemmProblem& p) {
  if ((p.dtype != DType::f64 && p.dtype != DType::f32) || p.c_dtype() != p.dtype)
    return "f64 or f32 inputs, C of the same dtype";
  // op(B)'s planes are made in one launch; C's rows go in passes, up to the
  // 32-bit range the other kernels keep to.
  const bool col = p.layout == Layout::col_major;
  if ((col ? p.m : p.n) > kMaxPlaneRows)
    return "more than " + std::to_string(kMaxPlaneRows) + " columns of C (rows, when C is column-major)";
  if ((col ? p.n : p.m) > INT_MAX) return "more than 2^31 - 1 rows of C (columns, when C is column-major)";
  return std::nullopt;
}

void check_ozaki_problem(const GemmProblem& problem) {
  validate(problem);
  if (auto why = ozaki_rejects(problem))
    fail(ErrorCategory::usage, "Ozaki emulation of " + problem.shape_string() + ": " + *why);
  if (problem.batch != 1)
    fail(ErrorCategory::usage,
         "Ozaki emulation takes one product at a time, not a batch of " + std::to_string(problem.batch));
}

// The largest plan a call can take: the caller's moduli, or the default plan
// with the most extra bits the operands can ask for.
OzakiPlan largest_plan(const GemmProblem& p, int moduli) {
  return plan_ozaki(p.k, moduli, p.dtype, moduli == 0 ? kOzakiMaxExtraBits : 0);
}


// 1. The scan of p's operands (the row-major form of `problem`, named in
//    errors): the exponents and sums of |entries| of the rows of op(A) and the
//    columns of op(B) (rows of op(B)^T, n x k), the spread, the first
//    non-finite lines; the one wait of the call. Returns the plan (the caller's
//    moduli, or the default plan, which keeps its mantissa's bits for the
//    entries at the mean size of their row or column too), and leaves its
//    shifts in shift_a and shift_b. A usage error for an Inf or NaN.
template <class T>
OzakiPlan scan_operands(const GemmProblem& problem, const GemmProblem& p, int moduli, const ScanBuffers& s,
                        Stream stream) {
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(s.found, 0xff, 2 * sizeof(unsigned long long), stream));
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(&s.found->spread, 0, sizeof(int), stream));
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(s.shift_a, 0x80, std::size_t(p.m) * sizeof(int), stream));  // kNoEntry
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(s.shift_b, 0x80, std::size_t(p.n) * sizeof(int), stream));
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(s.sum_a, 0, std::size_t(p.m) * sizeof(double), stream));
  GEMMKIT_CUDA_CHECK(cudaMemsetAsync(s.sum_b, 0, std::size_t(p.n) * sizeof(double), stream));
  launch_row_exponents<T>(p.a, p.trans_a, p.lda, p.m, p.k, s.shift_a, s.sum_a, &s.found->bad_a, &s.found->spread,
                          stream);
  launch_row_exponents<T>(p.b, !p.trans_b, p.ldb, p.n, p.k, s.shift_b, s.sum_b, &s.found->bad_b, &s.found->spread,
                          stream);
  Scan found{};
  GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(&found, s.found, sizeof found, cudaMemcpyDeviceToHost, stream));
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  const bool col = problem.layout == Layout::col_major;  // the row-major form swapped A and B
  auto refuse = [&](char operand, const char* line, unsigned long long at) {
    fail(ErrorCategory::usage, std::string("Ozaki emulation of ") + problem.shape_string() + ": op(" + operand +
                                   ") has an Inf or NaN in " + line + " " + std::to_string(at) +
                                   " (the emulation has no integer for it; native GEMM takes it)");
  };
  if (found.bad_a != ~0ull) col ? refuse('B', "column", found.bad_a) : refuse('A', "row", found.bad_a);
  if (found.bad_b != ~0ull) col ? refuse('A', "row", found.bad_b) : refuse('B', "column", found.bad_b);
  const OzakiPlan plan = moduli == 0 ? plan_ozaki(p.k, 0, p.dtype, std::min(found.spread, kOzakiMaxExtraBits))
                                     : plan_ozaki(p.k, moduli, p.dtype);
  ozaki_shifts<<<unsigned(std::min<std::int64_t>(ceil_div(p.m, 256), 4096)), 256, 0, stream>>>(s.shift_a, p.m,
                                                                                               plan.bits);
  ozaki_shifts<<<unsigned(std::min<std::int64_t>(ceil_div(p.n, 256), 4096)), 256, 0, stream>>>(s.shift_b, p.n,
                                                                                               plan.bits);
  cuda::check_launch("ozaki_shifts");
  return plan;
}

// 2. op(B) scaled, rounded and reduced modulo the `count` primes from the
//    first-th: the planes of B'^T (n x k each), once.
template <class T>
void make_b_planes(const GemmProblem& p, int first, int count, const int* shift_b, std::int8_t* out, Stream stream) {
  cuda::launch_planes<T, cuda::kernels::PlaneKind::residues>(p.b, !p.trans_b, p.ldb, p.n, p.k, out, count,
                                                             cuda::moduli_table(count, first), stream, shift_b);
}

// 3. A pass over rows r0 .. r0 + rows - 1 of C: those rows of A' reduced modulo
//    the same primes into a_planes, and C' modulo each of them into c_planes
//    (rows x n each, ld padded16(n), one after the other), by modular_gemm with
//    `gemm` of workspace.
template <class T>
void pass_residues(Context& ctx, const GemmProblem& p, int first, int count, std::int64_t r0, std::int64_t rows,
                   const int* shift_a, std::int8_t* a_planes, const std::int8_t* b_planes, std::int8_t* c_planes,
                   Workspace gemm, Stream stream) {
  // op(A)'s rows from r0: A(r, c) at a[r * lda + c], or a[c * lda + r] when transposed.
  const auto* a_rows = static_cast<const T*>(p.a) + (p.trans_a ? r0 : r0 * p.lda);
  cuda::launch_planes<T, cuda::kernels::PlaneKind::residues>(a_rows, p.trans_a, p.lda, rows, p.k, a_planes, count,
                                                             cuda::moduli_table(count, first), stream, shift_a + r0);
  const ModularGemmProblem g = cuda::planes_problem(rows, p.n, p.k, count, a_planes, b_planes, c_planes, first);
  const std::size_t bytes = modular_gemm_workspace_bytes(ctx, g);
  if (bytes > gemm.bytes) fail(ErrorCategory::internal, "Ozaki plan beyond its workspace");
  modular_gemm(ctx, g, stream, Workspace{bytes ? gemm.data : nullptr, bytes});
}

// 4. The rebuild of rows r0 .. r0 + rows - 1 of C from the residues of every
//    modulus of the plan (pass_residues' layout); no product: C = beta C0.
template <class T>
void rebuild_rows(const OzakiRebuild& rebuild, const GemmProblem& p, std::int64_t r0, std::int64_t rows,
                  const std::int8_t* c_planes, const int* shift_a, const int* shift_b, Stream stream) {
  const std::int64_t np = padded16(p.n);
  launch_epilogue<T>(rebuild, c_planes, np, rows * np, rows, p.n, shift_a + r0, shift_b, p.alpha, p.beta,
                     static_cast<T*>(p.c) + r0 * p.ldc, p.ldc, stream);
}

// The whole call for elements T (double or float); `problem` checked, p its
// row-major form, the workspace laid out by r. Returns the plan that ran.
// The element types the header promises.
#define GEMMKIT_OZAKI_STEPS(T)                                                                                   \
  template OzakiPlan scan_operands<T>(const GemmProblem&, const GemmProblem&, int, const ScanBuffers&, Stream);  \
  template void make_b_planes<T>(const GemmProblem&, int, int, const int*, std::int8_t*, Stream);               \
  template void pass_residues<T>(Context&, const GemmProblem&, int, int, std::int64_t, std::int64_t, const int*, \
                                 std::int8_t*, const std::int8_t*, std::int8_t*, Workspace, Stream);            \
  template void rebuild_rows<T>(const OzakiRebuild&, const GemmProblem&, std::int64_t, std::int64_t,            \
                                const std::int8_t*, const int*, const int*, Stream);
GEMMKIT_OZAKI_STEPS(double)
GEMMKIT_OZAKI_STEPS(float)
#undef GEMMKIT_OZAKI_STEPS

}  // namespace gemmkit::ozaki_detail

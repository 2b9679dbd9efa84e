// Exact integer GEMM, the kernels around the int8 GEMMs (src/ops/exact/cuda/exact_gemm.cu runs them):
//   exact_max_abs          the bound: max |x| of an operand, one read of it;
//   exact_to_int8_planes   an i32/i64 operand as centred int8 residues mod each prime (or as
//                          balanced base-256 digits), in the K-major layout the int8 GEMMs read;
//                          an f64 operand scaled by a power of two per row to integers first
//                          (the Ozaki scheme, src/ops/ozaki/cuda/ozaki_steps.cu);
//   exact_epilogue         alpha X + beta C0 in multi-word integers from the CRT's limbs, into
//                          C (an entry that does not fit is reported, not written) or limbs.
// Why: with them the int8 tensor cores compute an exact integer product; each kernel reads
// and writes its data once, so the pipeline stays bandwidth-bound outside the GEMMs.
// Measured: see docs/ladder.md
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <type_traits>

namespace gemmkit::cuda::kernels {

// Reductions without division: for each modulus p (odd, below 256) the constants that turn
// an int64 into its centred residue with integer multiply-adds only (exact_to_int8_planes).
//   x = c2 2^42 + c1 2^21 + c0  (c0, c1 in [0, 2^21), c2 = x >> 42 in [-2^21, 2^21));
//   u = c0 + c1 (2^21 mod p) + c2 (2^42 mod p) + offset, offset = p ceil(2^29 / p) + p / 2,
//     so 0 <= u < 2^31 and u = x + p / 2 (mod p);
//   u mod p = u - p floor(u / p), the quotient exact as umulhi(u, inverse) >> shift for
//     u < 2^31 (inverse = ceil(2^(32 + shift) / p) < 2^32, shift = ceil(log2 p) - 1);
//   (u mod p) - p / 2 is x's residue centred in [-(p-1)/2, (p-1)/2].
struct ModuliTable {
  static constexpr int kMax = 64;
  int count = 0;
  std::uint32_t p[kMax];
  std::uint32_t inverse[kMax];
  std::uint32_t shift[kMax];
  std::uint32_t two21[kMax];  // 2^21 mod p
  std::uint32_t two42[kMax];  // 2^42 mod p
  std::uint32_t offset[kMax];
};

// x's residue mod table entry q, centred (see ModuliTable), from x's three chunks.
__device__ __forceinline__ int centred_residue(const ModuliTable& t, int q, std::uint32_t c0, std::uint32_t c1,
                                               int c2) {
  const std::uint32_t u = c0 + c1 * t.two21[q] + std::uint32_t(c2 * int(t.two42[q])) + t.offset[q];
  const std::uint32_t quotient = __umulhi(u, t.inverse[q]) >> t.shift[q];
  return int(u + quotient * (0u - t.p[q])) - int(t.p[q] / 2);  // one multiply-add
}

// Max |x| over a rows x cols row-major matrix (leading dimension ld) into *out (atomicMax;
// *out starts at 0). Blocks stride over rows (y) and columns (x).
template <class T>
__global__ void exact_max_abs(const T* __restrict__ x, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                              unsigned long long* out) {
  unsigned long long v = 0;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; c < cols;
         c += std::int64_t(gridDim.x) * blockDim.x) {
      const std::int64_t e = x[r * ld + c];
      // |INT64_MIN| = 2^63 in unsigned arithmetic.
      const unsigned long long a = e < 0 ? 0ull - static_cast<unsigned long long>(e) : static_cast<unsigned long long>(e);
      v = a > v ? a : v;
    }
  using Reduce = cub::BlockReduce<unsigned long long, 256>;
  __shared__ typename Reduce::TempStorage temp;
  struct Max {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; }
  };
  const unsigned long long block_max = Reduce(temp).Reduce(v, Max{});
  if (threadIdx.x == 0 && block_max > 0) atomicMax(out, block_max);
}

// What exact_to_int8_planes writes into plane q for a value.
enum class PlaneKind { residues, digits };

// Source S (rows x cols as the GEMM reads it: A's m x k, or B^T's n x k) -> planes of int8,
// plane q row-major rows x cols_padded at out + q * plane_stride (ld cols_padded, a multiple
// of 16; columns cols..cols_padded - 1 zero).
//   Transposed == false: S(r, c) = src[r * ld + c];  true: S(r, c) = src[c * ld + r].
//   residues: plane q holds S mod p_q, centred in [-(p-1)/2, (p-1)/2];
//   digits:   plane q holds digit q of S in balanced base 256 (int8, S = sum_q d_q 256^q).
// T double: S(r, c) stands for the integer rint(S(r, c) 2^row_shift[r]), which the caller
// keeps below 2^62 in magnitude (the shifts of ozaki_row_shifts).
// Integer T: row_shift is unused (null).
// Block 256 threads, one 64 x 64 tile of S: read in S's storage order (coalesced either
// way) into shared memory, then each thread writes 8 consecutive bytes of a row per plane,
// for two rows.
template <class T, bool Transposed, PlaneKind Kind>
__global__ void __launch_bounds__(256) exact_to_int8_planes(const T* __restrict__ src, std::int64_t ld,
                                                            std::int64_t rows, std::int64_t cols,
                                                            std::int64_t cols_padded, std::int8_t* __restrict__ out,
                                                            std::int64_t plane_stride, int planes,
                                                            const __grid_constant__ ModuliTable table,
                                                            const int* __restrict__ row_shift) {
  __shared__ T tile[64][65];  // tile[r - r0][c - c0]; 65: conflict-free column walks
  const std::int64_t r0 = std::int64_t(blockIdx.y) * 64, c0 = std::int64_t(blockIdx.x) * 64;
  const int t = threadIdx.x;
  if constexpr (!Transposed) {
    // Thread t: column t % 64 of rows t / 64, + 4, ..., + 60: a warp reads 32 consecutive.
    const int c = t % 64;
    for (int r = t / 64; r < 64; r += 4) {
      const std::int64_t gr = r0 + r, gc = c0 + c;
      tile[r][c] = gr < rows && gc < cols ? src[gr * ld + gc] : T(0);
    }
  } else {
    // S(r, c) = src[c * ld + r]: thread t reads row t % 64 (consecutive in memory).
    const int r = t % 64;
    for (int c = t / 64; c < 64; c += 4) {
      const std::int64_t gr = r0 + r, gc = c0 + c;
      tile[r][c] = gr < rows && gc < cols ? src[gc * ld + gr] : T(0);
    }
  }
  __syncthreads();
  // Thread t: columns 8 (t % 8) .. + 7 of tile rows t / 8 and t / 8 + 32, a row
  // at a time, so that the chunks of its 8 values stay in registers over all the
  // planes; a warp writes 4 rows of 64 consecutive bytes per plane.
  const int cb = 8 * (t % 8);
  const std::int64_t gc = c0 + cb;
  if (gc >= cols_padded) return;  // cols_padded % 16 == 0: a chunk is all in or all out
#pragma unroll 1
  for (int r = t / 8; r < 64; r += 32) {
    const std::int64_t gr = r0 + r;
    if (gr >= rows) return;
    // Floating-point S: scaled by 2^shift in two exact halves (2^shift alone may
    // be outside the double range), rounded to an integer once.
    double half_scale = 1, scale = 1;
    if constexpr (std::is_floating_point_v<T>) {
      const int shift = row_shift[gr], s1 = shift / 2;
      half_scale = __longlong_as_double((1023ll + s1) << 52);     // 2^s1, |s1| < 1023
      scale = __longlong_as_double((1023ll + shift - s1) << 52);  // 2^(shift - s1)
    }
    std::int8_t* row_out = out + gr * cols_padded + gc;
    // v as three chunks low + 2^21 middle + 2^42 top (centred_residue).
    std::int64_t v[8];
    std::uint32_t low[8], middle[8];
    int top[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      if constexpr (std::is_floating_point_v<T>)
        v[e] = __double2ll_rn(double(tile[r][cb + e]) * half_scale * scale);
      else
        v[e] = tile[r][cb + e];
      low[e] = std::uint32_t(v[e]) & 0x1fffffu;
      middle[e] = std::uint32_t(v[e] >> 21) & 0x1fffffu;
      top[e] = int(v[e] >> 42);
    }
    for (int q = 0; q < planes; ++q) {
      std::uint32_t packed[2] = {0, 0};  // the 8 int8 values, 4 to a word (registers)
      if constexpr (Kind == PlaneKind::residues) {
#pragma unroll
        for (int e = 0; e < 8; e += 4) {
          // Bytes 0 of four residues into one word.
          const std::uint32_t first = __byte_perm(centred_residue(table, q, low[e], middle[e], top[e]),
                                                  centred_residue(table, q, low[e + 1], middle[e + 1], top[e + 1]),
                                                  0x0040);
          const std::uint32_t second =
              __byte_perm(centred_residue(table, q, low[e + 2], middle[e + 2], top[e + 2]),
                          centred_residue(table, q, low[e + 3], middle[e + 3], top[e + 3]), 0x0040);
          packed[e / 4] = __byte_perm(first, second, 0x5410);
        }
      } else {
        // Digit q of v: v = 256 (v >> 8) + (v & 255), and a low byte b >= 128 is the digit
        // b - 256 with a carry of 1 into the rest (never overflowing: v >> 8 < 2^55).
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const std::uint32_t b = std::uint32_t(v[e] & 255);
          packed[e / 4] |= b << (8 * (e % 4));
          v[e] = (v[e] >> 8) + (b >= 128 ? 1 : 0);
        }
      }
      *reinterpret_cast<int2*>(row_out + std::int64_t(q) * plane_stride) =
          make_int2(int(packed[0]), int(packed[1]));
    }
  }
}

// Multi-word two's-complement integers, least significant word first, kWords wide.
constexpr int kExactWords = 10;

__device__ __forceinline__ void words_times(std::uint64_t (&x)[kExactWords], long long s) {
  const bool negative = s < 0;
  const std::uint64_t u = negative ? 0ull - static_cast<std::uint64_t>(s) : static_cast<std::uint64_t>(s);
  // x u mod 2^(64 kWords): exact when the product fits, x sign-extended.
  std::uint64_t carry = 0;
#pragma unroll
  for (int w = 0; w < kExactWords; ++w) {
    const std::uint64_t lo = x[w] * u, hi = __umul64hi(x[w], u);
    x[w] = lo + carry;
    carry = hi + (x[w] < lo ? 1 : 0);
  }
  if (negative) {
    std::uint64_t c = 1;
#pragma unroll
    for (int w = 0; w < kExactWords; ++w) {
      x[w] = ~x[w] + c;
      c = c && x[w] == 0 ? 1 : 0;
    }
  }
}

__device__ __forceinline__ void words_add(std::uint64_t (&x)[kExactWords], const std::uint64_t (&y)[kExactWords]) {
  std::uint64_t carry = 0;
#pragma unroll
  for (int w = 0; w < kExactWords; ++w) {
    const std::uint64_t s = x[w] + y[w];
    const std::uint64_t c1 = s < x[w] ? 1 : 0;
    x[w] = s + carry;
    carry = c1 + (x[w] < s ? 1 : 0);
  }
}

// Digit slices: X = sum over digit pairs (a, b) of D_ab 256^(a + b), D_ab (int32, plane
// a * db + b at d + (a * db + b) * plane_stride, row-major rows x cols, leading dimension ld)
// the product of digit a of op(A) and digit b of op(B). Into `limbs` words an entry at
// out + (i * ld_out + j) * limbs (the CRT's format), exact: `limbs` holds every |X| <= the
// bound, and the sums are formed in kExactWords words. (A template, so that every file that
// includes this header shares one definition.)
template <class Sum = int>
__global__ void __launch_bounds__(256) exact_digits_combine(const Sum* __restrict__ d, int da, int db,
                                                            std::int64_t plane_stride, std::int64_t ld,
                                                            std::int64_t rows, std::int64_t cols,
                                                            std::uint64_t* __restrict__ out, std::int64_t ld_out,
                                                            int limbs) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  for (std::int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    std::uint64_t x[kExactWords] = {};
    for (int a = 0; a < da; ++a)
      for (int b = 0; b < db; ++b) {
        const long long v = d[std::int64_t(a * db + b) * plane_stride + i * ld + j];
        // v 2^s as words: bits s .. s + 63 hold v (sign-extended above), s = 8 (a + b) < 64 * 2.
        const int s = 8 * (a + b), w0 = s / 64, sh = s % 64;
        const std::uint64_t ext = v < 0 ? ~0ull : 0ull;
        const std::uint64_t lo = static_cast<std::uint64_t>(v) << sh;
        const std::uint64_t hi = sh ? static_cast<std::uint64_t>(v >> (64 - sh)) : ext;
        std::uint64_t carry = 0;
#pragma unroll
        for (int w = 0; w < kExactWords; ++w) {
          const std::uint64_t y = w < w0 ? 0ull : w == w0 ? lo : w == w0 + 1 ? hi : ext;
          const std::uint64_t s1 = x[w] + y;
          const std::uint64_t c1 = s1 < y ? 1ull : 0ull;
          x[w] = s1 + carry;
          carry = c1 + (x[w] < s1 ? 1ull : 0ull);
        }
      }
    std::uint64_t* o = out + (i * ld_out + j) * limbs;
    const std::uint64_t ext = static_cast<long long>(x[kExactWords - 1]) < 0 ? ~0ull : 0ull;
#pragma unroll
    for (int w = 0; w < kExactWords; ++w)
      if (w < limbs) o[w] = x[w];
    for (int w = kExactWords; w < limbs; ++w) o[w] = ext;
  }
}

// C = alpha X + beta C0 for the rows x cols entries of X (`limbs` words each at
// x + (i * cols + j) * limbs; limbs == 0: X = 0). C0 is c (CT, leading dimension ldc) when
// beta != 0. ToLimbs: the result goes to out_words (out_limbs words per entry at
// out_words + (i * ld_out + j) * out_limbs), exact by the caller's choice of out_limbs.
// Else to c as CT when it fits; the first entry that does not fit, in the caller's
// row-major order (key i * cols + j, or j * rows + i when the caller's C is column-major,
// i.e. this is its transpose), goes to report[0] by atomicMin; report[3] gets `limbs`.
template <class CT, bool ToLimbs>
__global__ void __launch_bounds__(256) exact_epilogue(const std::uint64_t* __restrict__ x, int limbs,
                                                      std::int64_t rows, std::int64_t cols, long long alpha,
                                                      long long beta, CT* c, std::int64_t ldc,
                                                      std::uint64_t* __restrict__ out_words, std::int64_t ld_out,
                                                      int out_limbs, bool key_transposed,
                                                      unsigned long long* report) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j == 0 && blockIdx.y == 0) report[3] = static_cast<unsigned long long>(limbs);  // for the host's message
  if (j >= cols) return;
  for (std::int64_t i = blockIdx.y; i < rows; i += gridDim.y) {
    std::uint64_t y[kExactWords];
    const std::uint64_t* xe = x + (i * cols + j) * limbs;
    std::uint64_t top = 0;
#pragma unroll
    for (int w = 0; w < kExactWords; ++w) {
      if (w < limbs) top = y[w] = xe[w];
      else y[w] = static_cast<long long>(top) < 0 ? ~0ull : 0ull;
    }
    if (alpha != 1) words_times(y, alpha);
    if (beta != 0) {
      const long long c0 = static_cast<long long>(c[i * ldc + j]);
      std::uint64_t z[kExactWords];
#pragma unroll
      for (int w = 0; w < kExactWords; ++w) z[w] = w == 0 ? static_cast<std::uint64_t>(c0) : c0 < 0 ? ~0ull : 0ull;
      words_times(z, beta);
      words_add(y, z);
    }
    if constexpr (ToLimbs) {
      std::uint64_t* o = out_words + (i * ld_out + j) * out_limbs;
      const std::uint64_t ext = static_cast<long long>(y[kExactWords - 1]) < 0 ? ~0ull : 0ull;
#pragma unroll
      for (int w = 0; w < kExactWords; ++w)
        if (w < out_limbs) o[w] = y[w];
      for (int w = kExactWords; w < out_limbs; ++w) o[w] = ext;
    } else {
      const long long v = static_cast<long long>(y[0]);
      const std::uint64_t ext = v < 0 ? ~0ull : 0ull;
      bool fits = true;
#pragma unroll
      for (int w = 1; w < kExactWords; ++w) fits = fits && y[w] == ext;
      if constexpr (sizeof(CT) == 4) fits = fits && v >= -2147483648ll && v <= 2147483647ll;
      if (fits) {
        c[i * ldc + j] = static_cast<CT>(v);
      } else {
        const std::uint64_t key = key_transposed ? std::uint64_t(j * rows + i) : std::uint64_t(i * cols + j);
        atomicMin(report, static_cast<unsigned long long>(key));
      }
    }
  }
}

}  // namespace gemmkit::cuda::kernels

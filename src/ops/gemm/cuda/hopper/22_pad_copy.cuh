// Rung 22, Hopper for operands TMA cannot describe. Rung 19 reads A and B with TMA, which
// needs each operand's base on 16 bytes and its rows a whole number of 16 bytes apart; a
// bf16 3000x4100x2050 product (lda = 2050: rows 4100 bytes apart) is refused, and auto
// fell to rung 17's mma.sync at 34-52% of cuBLAS (bench/results/2026-11-24_h200_7eb49c8/).
// Here the operands that break the rule
// are first copied into the workspace with their rows padded to whole 16 bytes, and rung
// 19 (or whichever Hopper rung the launcher names) multiplies the copies. The padding is
// never read as data: the tensor maps keep the true K (and M, N), and TMA fills boxes that
// reach past them with zeros, so the pad columns are written as zeros only because whole
// 16-byte stores are the fastest way to write a row.
//
// Cost: the copy moves 2 x (bytes of the copied operands) while the multiply does
// 2 M N K flops. For bf16 on an H200 (~4.8 TB/s, ~990 dense TFLOPS) copying A (M x K)
// costs about 300 / N of the multiply's time, B (K x N) about 300 / M: ~7% each at
// 3000x4100x2050, less on larger problems, more on small ones. The copy writes only the
// operands that need it and, being bandwidth-bound, must run near copy bandwidth: every
// thread makes one aligned 16-byte store, and reads its 16 source bytes as the one or two
// aligned 16-byte words that hold them (the neighbour's second word is its own first, an
// L1 hit), shifted into place in registers.
// Measured: see docs/ladder.md.
#pragma once

#include <cstdint>
#include <type_traits>

namespace gemmkit::cuda::kernels {

// Chunks of 16 bytes each thread copies per row, at most: a block's x covers a segment of
// blockDim.x * kPadChunksPerThread chunks of a row, so that a row just past a multiple of
// the block leaves idle warps that exit rather than idle blocks.
constexpr int kPadChunksPerThread = 4;

// One operand to copy: in is (rows, cols) with leading dimension ld_in (elements of 2 or 4
// bytes at any element-aligned address); out is (rows, ld_out) with ld_out = cols rounded
// up to 16 bytes and out on 16 bytes.
struct PadJob {
  const unsigned char* in;
  std::int64_t rows, cols, ld_in;
  unsigned char* out;
  std::int64_t ld_out;
};

// out = in with rows padded, for job blockIdx.z (A and B in one launch: a launch less on
// small problems). Columns [cols, ld_out) of out are written as zeros.
// Block (bx, by): threadIdx.x walks the 16-byte chunks of segment blockIdx.x of a row,
// threadIdx.y rows; the grid's y steps through the rows (its limit is 65535 blocks). The
// grid covers the larger job; the smaller one's extra blocks find no work.
template <int ElemBytes>
__global__ void pad_rows_kernel(PadJob job0, PadJob job1) {
  static_assert(ElemBytes == 2 || ElemBytes == 4, "16-bit or 32-bit elements");
  constexpr int kPerChunk = 16 / ElemBytes;
  const PadJob job = blockIdx.z == 0 ? job0 : job1;
  const unsigned char* __restrict__ in = job.in;
  unsigned char* __restrict__ out = job.out;
  const std::int64_t rows = job.rows, ld_in = job.ld_in, ld_out = job.ld_out;
  const std::int64_t segment = std::int64_t(blockDim.x) * kPadChunksPerThread;
  const std::int64_t chunks = ld_out / kPerChunk, segment_end = (std::int64_t(blockIdx.x) + 1) * segment;
  const std::int64_t chunk_end = chunks < segment_end ? chunks : segment_end;
  const std::int64_t row_bytes = job.cols * ElemBytes;
  // Aligned 16-byte words may be read only where they lie inside the matrix's span: from
  // in rounded down to 16 bytes (inside the allocation that holds in) up to the end of its
  // last row (memory after it may belong to no allocation).
  const std::uintptr_t span_end =
      reinterpret_cast<std::uintptr_t>(in) + std::uintptr_t(((rows - 1) * ld_in) * ElemBytes + row_bytes);
  for (std::int64_t r = std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y; r < rows;
       r += std::int64_t(gridDim.y) * blockDim.y) {
    for (std::int64_t chunk = std::int64_t(blockIdx.x) * segment + threadIdx.x; chunk < chunk_end;
         chunk += blockDim.x) {
      const std::int64_t first = chunk * 16;  // byte offset of the chunk in its row
      // Bytes of the row in this chunk: > 0, as chunks = ceil(cols / kPerChunk).
      const int valid = int(row_bytes - first < 16 ? row_bytes - first : 16);
      const unsigned char* src = in + (r * ld_in) * ElemBytes + first;
      const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(src);
      const std::uintptr_t aligned = at & ~std::uintptr_t(15);
      const int shift = int(at - aligned);         // 0..14, a multiple of ElemBytes
      const bool two_words = shift + valid > 16;  // the chunk straddles two aligned words
      std::uint32_t w[4];
      if (aligned + (two_words ? 32 : 16) <= span_end) {
        // a[0..3]: the aligned word holding the chunk's first byte, a[4..7]: the next one.
        std::uint32_t a[8];
        const uint4 w0 = *reinterpret_cast<const uint4*>(aligned);
        const uint4 w1 = two_words ? *reinterpret_cast<const uint4*>(aligned + 16) : make_uint4(0, 0, 0, 0);
        a[0] = w0.x, a[1] = w0.y, a[2] = w0.z, a[3] = w0.w;
        a[4] = w1.x, a[5] = w1.y, a[6] = w1.z, a[7] = w1.w;
        // Output word k is bytes [shift + 4k, shift + 4k + 4) of a: words q + k and q + k + 1
        // funnel-shifted by the bytes of shift past a word boundary (0 or 2). Selects, not a
        // runtime index, keep a in registers.
        const int q = shift >> 2, byte_shift = 8 * (shift & 3);
        std::uint32_t s[5];
  #pragma unroll
        for (int j = 0; j < 5; ++j)
          s[j] = q == 0 ? a[j] : q == 1 ? a[j + 1] : q == 2 ? a[j + 2] : a[j + 3];
  #pragma unroll
        for (int k = 0; k < 4; ++k) w[k] = __funnelshift_r(s[k], s[k + 1], byte_shift);
        // Bytes past the row's end (the next row's, or the padding of in) become zeros.
  #pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int keep = valid - 4 * k;  // bytes of word k inside the row
          if (keep <= 0) w[k] = 0;
          else if (keep < 4) w[k] &= (1u << (8 * keep)) - 1u;
        }
      } else {
        // The matrix's last bytes: element by element, so nothing past its end is read.
        using Unit = std::conditional_t<ElemBytes == 2, std::uint16_t, std::uint32_t>;
        Unit e[kPerChunk];
  #pragma unroll
        for (int i = 0; i < kPerChunk; ++i)
          e[i] = i * ElemBytes < valid ? reinterpret_cast<const Unit*>(src)[i] : Unit(0);
        if constexpr (ElemBytes == 2) {
  #pragma unroll
          for (int k = 0; k < 4; ++k) w[k] = std::uint32_t(e[2 * k]) | (std::uint32_t(e[2 * k + 1]) << 16);
        } else {
  #pragma unroll
          for (int k = 0; k < 4; ++k) w[k] = e[k];
        }
      }
      *reinterpret_cast<uint4*>(out + (r * ld_out) * ElemBytes + first) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

}  // namespace gemmkit::cuda::kernels

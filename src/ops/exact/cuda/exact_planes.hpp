// Internal: the residue planes the exact integer GEMM (exact_gemm.cu) and the
// Ozaki FP64 emulation (ozaki_gemm.cu) both feed to modular_gemm: operands as
// int8 planes, one per modulus, K-major, rows padded to 16 bytes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "runtime/cuda/check.hpp"
#include "ops/exact/cuda/exact_residues.cuh"
#include "launch/launch.hpp"
#include "gemmkit/modular.hpp"

namespace gemmkit::cuda {

// Rows of an int8 plane: whole 16-byte chunks (the conversion writes 16 bytes
// at a time, and the int8 GEMMs like rows on 16 bytes); the padding is zero.
inline std::int64_t padded16(std::int64_t x) { return std::max<std::int64_t>(16, (x + 15) / 16 * 16); }

// The most rows launch_planes takes: its grid puts 64-row tiles on y (at most 65535).
inline constexpr std::int64_t kMaxPlaneRows = 65535 * 64;

// The `count` int8 primes from the first-th with the constants of their
// reductions (kernels::ModuliTable).
inline kernels::ModuliTable moduli_table(int count, int first = 0) {
  kernels::ModuliTable t;
  t.count = count;
  for (int q = 0; q < count; ++q) {
    const std::uint64_t p = int8_moduli()[std::size_t(first + q)];
    const int shift = std::bit_width(p - 1) - 1;  // ceil(log2 p) - 1
    t.p[q] = std::uint32_t(p);
    t.shift[q] = std::uint32_t(shift);
    t.inverse[q] = std::uint32_t(((std::uint64_t{1} << (32 + shift)) + p - 1) / p);
    t.two21[q] = std::uint32_t((std::uint64_t{1} << 21) % p);
    t.two42[q] = std::uint32_t((std::uint64_t{1} << 42) % p);
    t.offset[q] = std::uint32_t(((std::uint64_t{1} << 29) + p - 1) / p * p + p / 2);
  }
  return t;
}

// The modular GEMM of `moduli` primes from the first-th on planes of m x k (A),
// n x k (B^T) and m x n (C), rows padded to 16 bytes (pointers null when only
// sizing).
inline ModularGemmProblem planes_problem(std::int64_t m, std::int64_t n, std::int64_t k, int moduli,
                                         const std::int8_t* a, const std::int8_t* b, std::int8_t* c,
                                         int first = 0) {
  const std::int64_t kp = padded16(k), np = padded16(n);
  ModularGemmProblem g;
  g.m = m, g.n = n, g.k = kp;  // the zero columns of the padding add nothing
  g.moduli.assign(int8_moduli().begin() + first, int8_moduli().begin() + first + moduli);
  g.a = a, g.lda = kp, g.stride_a = m * kp;
  g.b = b, g.ldb = kp, g.stride_b = n * kp;
  g.c = c, g.ldc = np, g.stride_c = m * np;
  return g;
}

// S (rows x cols: S(r, c) = src[r * ld + c], or src[c * ld + r] when
// transposed) -> planes (row_shift: f64 sources only, see
// exact_to_int8_planes).
template <class T, kernels::PlaneKind Kind>
void launch_planes(const void* src, bool transposed, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                   std::int8_t* out, int planes, const kernels::ModuliTable& table, Stream stream,
                   const int* row_shift = nullptr) {
  const std::int64_t cp = padded16(cols);
  const dim3 grid(unsigned(ceil_div(cp, 64)), unsigned(ceil_div(rows, 64)));
  const auto* s = static_cast<const T*>(src);
  if (transposed)
    kernels::exact_to_int8_planes<T, true, Kind>
        <<<grid, 256, 0, stream>>>(s, ld, rows, cols, cp, out, rows * cp, planes, table, row_shift);
  else
    kernels::exact_to_int8_planes<T, false, Kind>
        <<<grid, 256, 0, stream>>>(s, ld, rows, cols, cp, out, rows * cp, planes, table, row_shift);
  check_launch("exact_to_int8_planes");
}

}  // namespace gemmkit::cuda

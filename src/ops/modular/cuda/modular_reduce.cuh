// Device pieces of the modular int8 GEMM (src/ops/modular/cuda/modular_gemm.cu) besides the GEMM: the
// kernel that reduces a cuBLAS product to residues in the layouts the caller asked for (the
// centred reduction itself is arith/centred_residue.hpp's, shared with rung 24's epilogue), and
// the copy that gives unaligned int8 operands the 16-byte rows tensor-core GEMMs read. Only
// __device__ code here.
#pragma once

#include <cstdint>

#include "arith/centred_residue.hpp"

namespace gemmkit::cuda::kernels {

// z: the int32 products of one modulus, column-major m x n with leading dimension ldz (a
// multiple of 4, so 4 rows from a multiple of 4 never pass it). Each becomes its centred
// residue mod p, written to C (m x n row-major, ldc) and/or C^T (n x m row-major, ldct),
// either null. Block 256 threads over a 64 x 64 tile of columns col_base + 64 blockIdx.y:
// 16-byte loads of 4 rows of a column; C^T's rows are z's columns, stored 4 bytes at a
// time; C goes through shared memory so that its stores are 4 bytes of a row too. vec_*:
// the output and its leading dimension are on 4 bytes (4-byte stores allowed).
// Z: the products' type (int, as cuBLAS writes them; a template so that every file that
// includes this header shares one definition).
template <class Z>
__global__ void reduce_products_to_residues(const Z* __restrict__ z, std::int64_t ldz, int m,
                                            int n, int col_base, int p, std::int8_t* __restrict__ c,
                                            std::int64_t ldc, bool vec_c, std::int8_t* __restrict__ ct,
                                            std::int64_t ldct, bool vec_ct) {
  __shared__ std::int8_t tile[64][68];  // tile[column - col0][row - row0], rows padded to 68
  const CentredResidue mod(p);  // arith/centred_residue.hpp
  const int row0 = blockIdx.x * 64, col0 = col_base + blockIdx.y * 64;
  // Thread t: rows 4 (t % 16) .. + 3 of columns t / 16, t / 16 + 16, + 32, + 48.
  const int r4 = (threadIdx.x % 16) * 4;
  for (int j = threadIdx.x / 16; j < 64; j += 16) {
    const int row = row0 + r4, col = col0 + j;
    char4 v = make_char4(0, 0, 0, 0);
    if (col < n && row < m) {
      const int4 x = *reinterpret_cast<const int4*>(z + std::int64_t(col) * ldz + row);
      v = make_char4(mod(x.x), mod(x.y), mod(x.z), mod(x.w));
      if (ct) {
        std::int8_t* out = ct + std::int64_t(col) * ldct + row;
        if (vec_ct && row + 3 < m) {
          *reinterpret_cast<char4*>(out) = v;
        } else {
          const std::int8_t e[4] = {std::int8_t(v.x), std::int8_t(v.y), std::int8_t(v.z), std::int8_t(v.w)};
          for (int i = 0; i < 4 && row + i < m; ++i) out[i] = e[i];
        }
      }
    }
    *reinterpret_cast<char4*>(&tile[j][r4]) = v;
  }
  if (!c) return;  // uniform over the block: no thread reaches the barrier then
  __syncthreads();
  // Thread t: columns 4 (t % 16) .. + 3 of rows t / 16, + 16, + 32, + 48.
  const int c4 = (threadIdx.x % 16) * 4;
  for (int i = threadIdx.x / 16; i < 64; i += 16) {
    const int row = row0 + i, col = col0 + c4;
    if (row >= m || col >= n) continue;
    std::int8_t* out = c + std::int64_t(row) * ldc + col;
    if (vec_c && col + 3 < n) {
      *reinterpret_cast<char4*>(out) = make_char4(tile[c4][i], tile[c4 + 1][i], tile[c4 + 2][i], tile[c4 + 3][i]);
    } else {
      for (int e = 0; e < 4 && col + e < n; ++e) out[e] = tile[c4 + e][i];
    }
  }
}

// out += in mod p on centred residues (rows x cols, row-major, leading dimensions ld_out
// and ld_in): |out + in| <= p - 1, so one step of p centres the sum. How a K longer than
// int32 sums hold adds up its chunks' residues.
template <class T>
__global__ void add_residues(T* __restrict__ out, std::int64_t ld_out, const T* __restrict__ in, std::int64_t ld_in,
                             std::int64_t rows, std::int64_t cols, int p) {
  const int half = (p - 1) / 2;
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / cols, c = i % cols;
    int x = int(out[r * ld_out + c]) + int(in[r * ld_in + c]);
    if (x > half) x -= p;
    else if (x < -half) x += p;
    out[r * ld_out + c] = T(x);
  }
}

// Copies `count` matrices of rows x cols (matrix z at in + z * stride, leading dimension ld)
// to out, matrix after matrix, each rows x ld_out with columns cols..ld_out-1 zero (so a GEMM
// may run over the padded K).
template <class T>
__global__ void pack_rows(const T* __restrict__ in, std::int64_t ld, std::int64_t stride, std::int64_t rows,
                          std::int64_t cols, std::int64_t count, T* __restrict__ out, std::int64_t ld_out) {
  const std::int64_t total = count * rows * ld_out;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t col = i % ld_out, row = (i / ld_out) % rows, item = i / (ld_out * rows);
    out[i] = col < cols ? in[item * stride + row * ld + col] : T(0);
  }
}

}  // namespace gemmkit::cuda::kernels

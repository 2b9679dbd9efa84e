// cpu_restrict (rung 2): rung 1's loops with __restrict pointers and a register accumulator
// (the teaching texts' hostmult1). The loops are rung 1's, but the pointers are
// __restrict-qualified and the dot product is summed in a local variable, so the compiler
// keeps it in a register instead of storing and reloading C[i][j] at every step of k. The
// column walk down op(B) is still there: this rung removes the aliasing cost only.
#include "ops/gemm/cpu/cpu_kernels.hpp"

namespace gemmkit::cpu {
namespace {

// op(A)(i, k) = a[i * a_row + k * a_col], op(B)(k, j) = b[k * b_row + j * b_col].
template <class U>
void restrict_loops(const U* __restrict a, std::int64_t a_row, std::int64_t a_col,
                    const U* __restrict b, std::int64_t b_row, std::int64_t b_col,
                    U* __restrict c, std::int64_t ldc, std::int64_t m, std::int64_t n,
                    std::int64_t k, U alpha, U beta, bool read_c) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      U sum{0};
      for (std::int64_t p = 0; p < k; ++p) sum += a[i * a_row + p * a_col] * b[p * b_row + j * b_col];
      U& cij = c[i * ldc + j];
      cij = read_c ? alpha * sum + beta * cij : alpha * sum;
    }
  }
}

template <class U>
void restrict_gemm_typed(const GemmProblem& p) {
  const Operand<U> a = op_a<U>(p), b = op_b<U>(p);
  restrict_loops<U>(a.data, a.row, a.col, b.data, b.row, b.col, static_cast<U*>(p.c), p.ldc,
                    p.m, p.n, p.k, scalar_as<U>(p.alpha), scalar_as<U>(p.beta), p.beta != 0);
}

}  // namespace

void restrict_gemm(const GemmProblem& problem) {
  with_compute_type(problem.dtype, "cpu_restrict",
                    [&]<class U>() { restrict_gemm_typed<U>(problem); });
}

KernelEntry restrict_entry() {
  return cpu_entry("cpu_restrict", 2,
                   "rung 1's loops with __restrict pointers and a register accumulator (the teaching texts' hostmult1)",
                   kCpuFloatsAndIntegers, 20, restrict_gemm);
}

}  // namespace gemmkit::cpu

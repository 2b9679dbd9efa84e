// cpu_naive (rung 1): the textbook triple loop, as the teaching texts' hostmult0 writes it: i and j
// over C, k innermost, accumulating straight into C's element in memory. Nothing tells the
// compiler that C cannot alias A or B, so every step of the k loop stores C[i][j] and
// reloads it; op(B) is walked down a column, a new cache line per step. It is the baseline
// every later rung is measured against, not something to use.
#include "ops/gemm/cpu/cpu_kernels.hpp"

namespace gemmkit::cpu {
namespace {

template <class U>
void naive(const GemmProblem& p) {
  const auto [a, b, c, alpha, beta, read_c] = loop_operands<U>(p);
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      U& cij = c[i * p.ldc + j];
      const U c0 = read_c ? cij : U{0};
      cij = U{0};
      for (std::int64_t k = 0; k < p.k; ++k) cij += a(i, k) * b(k, j);
      cij = alpha * cij + beta * c0;
    }
  }
}

}  // namespace

void naive_gemm(const GemmProblem& problem) {
  with_compute_type(problem.dtype, "cpu_naive", [&]<class U>() { naive<U>(problem); });
}

KernelEntry naive_entry() {
  return cpu_entry("cpu_naive", 1,
                   "the textbook triple loop, as the teaching texts' hostmult0 writes it: i and j over C, k innermost, "
                   "accumulating straight into C's element in memory",
                   kCpuFloatsAndIntegers, 10, naive_gemm);
}

}  // namespace gemmkit::cpu

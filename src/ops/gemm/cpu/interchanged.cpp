// cpu_interchanged (rung 3): rung 2's arithmetic with the loops interchanged to i, k, j. Rung 2
// walks op(B) down a column, a new cache line for every multiply-add; here each step of k
// takes one value of op(A) and streams a whole row of op(B) into a row of sums, so the inner
// loop reads and writes consecutive elements and the compiler vectorises it. Each C(i, j)
// still adds its K products in rung 2's order, in a register-sized row buffer that is
// written to C once. Nothing is reused beyond one row: rung 4 adds the cache blocking. With
// op(B) stored transposed the inner loop strides again, as rung 2's did.
#include <algorithm>
#include <vector>

#include "ops/gemm/cpu/cpu_kernels.hpp"

namespace gemmkit::cpu {
namespace {

template <class U>
void interchanged(const GemmProblem& p) {
  const auto [a, b, c, alpha, beta, read_c] = loop_operands<U>(p);
  std::vector<U> sums(static_cast<std::size_t>(p.n));
  for (std::int64_t i = 0; i < p.m; ++i) {
    std::fill(sums.begin(), sums.end(), U{0});
    U* __restrict row = sums.data();
    for (std::int64_t q = 0; q < p.k; ++q) {
      const U a_iq = a(i, q);
      const U* __restrict b_q = b.data + q * b.row;  // op(B)(q, j) = b_q[j * b.col]
      for (std::int64_t j = 0; j < p.n; ++j) row[j] += a_iq * b_q[j * b.col];
    }
    U* c_i = c + i * p.ldc;
    for (std::int64_t j = 0; j < p.n; ++j) c_i[j] = read_c ? alpha * row[j] + beta * c_i[j] : alpha * row[j];
  }
}

void interchanged_gemm(const GemmProblem& problem) {
  with_compute_type(problem.dtype, "cpu_interchanged", [&]<class U>() { interchanged<U>(problem); });
}

}  // namespace

KernelEntry interchanged_entry() {
  return cpu_entry("cpu_interchanged", 3, "rung 2's arithmetic with the loops interchanged to i, k, j",
                   kCpuFloatsAndIntegers, 25, interchanged_gemm);
}

}  // namespace gemmkit::cpu

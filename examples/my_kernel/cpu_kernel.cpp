// A CPU GEMM kernel written outside gemmkit: C = alpha * op(A) * op(B) + beta * C, f32.
#include <cstdint>

#include "my_kernel.hpp"

namespace {

// gemmkit hands every kernel a validated, row-major problem (a column-major call arrives
// already rewritten as its row-major transpose), with pointers into host memory for a CPU
// kernel. A batch arrives one product at a time unless the entry says `batched`.
void run(const gemmkit::GemmProblem& p, const gemmkit::KernelLaunch&) {
  const auto* a = static_cast<const float*>(p.a);
  const auto* b = static_cast<const float*>(p.b);
  auto* c = static_cast<float*>(p.c);
  const auto alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
  // op(A)(i, l) and op(B)(l, j), whichever way each operand is stored.
  const auto a_at = [&](std::int64_t i, std::int64_t l) {
    return p.trans_a ? a[l * p.lda + i] : a[i * p.lda + l];
  };
  const auto b_at = [&](std::int64_t l, std::int64_t j) {
    return p.trans_b ? b[j * p.ldb + l] : b[l * p.ldb + j];
  };
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < p.m; ++i) {
    float* row = c + i * p.ldc;
    // beta == 0 means C is write-only: whatever it held (even NaN) must not leak through.
    for (std::int64_t j = 0; j < p.n; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    // i-l-j order: the inner loop walks a row of B and a row of C, both contiguous when B
    // is not transposed, so the compiler can vectorise it.
    for (std::int64_t l = 0; l < p.k; ++l) {
      const float scaled = alpha * a_at(i, l);
      for (std::int64_t j = 0; j < p.n; ++j) row[j] += scaled * b_at(l, j);
    }
  }
}

}  // namespace

gemmkit::KernelEntry my_cpu_kernel() {
  gemmkit::KernelEntry e;
  e.name = "my_cpu_loops";  // unique among every registered kernel
  e.backend = gemmkit::Backend::cpu;
  e.rung = 100;             // after gemmkit's own rungs in `gemmkit list`
  e.summary = "example: i-l-j loops, rows of C over OpenMP threads (examples/my_kernel)";
  e.dtypes = {gemmkit::DType::f32};
  e.run = run;
  return e;
}

// Strided batches on the CPU: how the cpu_openblas, cpu_widened and cpu_blocked entries
// share the threads between the matrices of a batch.
#include <omp.h>

#include "ops/gemm/cpu/cpu_kernels.hpp"

namespace gemmkit::cpu {

bool batch_side_by_side(const GemmProblem& p) {
  const int threads = omp_get_max_threads();
  if (p.batch < 2 || threads < 2) return false;
  // Below about 128^3 a product gains little from more threads than one (the kernels run
  // such sizes on one thread anyway), so its batch is the only parallelism there is.
  const double item_flops = 2.0 * double(p.m) * double(p.n) * double(p.k);
  if (item_flops < 2.0 * 128 * 128 * 128) return true;
  // Larger ones: one per thread when the rounds of `threads` matrices are at least 3/4
  // full (7 on 2 threads: 4 rounds, 88%); otherwise every thread on each matrix in turn.
  const std::int64_t rounds = (p.batch + threads - 1) / threads;
  return 4 * p.batch >= 3 * rounds * threads;
}

void run_batch(const GemmProblem& p, bool side_by_side,
               const std::function<void(const GemmProblem&)>& item) {
  if (p.batch == 1) return item(p);
  if (!side_by_side) {
    for (std::int64_t i = 0; i < p.batch; ++i) item(batch_item(p, i));
    return;
  }
  // Exceptions must not leave an OpenMP region: the first one is kept and rethrown.
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t i = 0; i < p.batch; ++i) {
    try {
      item(batch_item(p, i));
    } catch (...) {
#pragma omp critical(gemmkit_cpu_batch_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace gemmkit::cpu

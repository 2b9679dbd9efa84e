// Timing SUMMA for the scaling benchmarks (gemmkit bench --distributed): random operands made
// where they live, warm-up runs, then timed runs between barriers, the slowest rank's time each.
#include <algorithm>
#include <chrono>

#include "dist/dist_common.hpp"
#include "gemmkit/random.hpp"

namespace gemmkit::dist {
namespace {

// Random blocks of every rank (its own seed), in place of zeros.
DistMatrix random_dist_matrix(const ProcessGrid& grid, DType dtype, std::int64_t rows, std::int64_t cols,
                              std::int64_t block, std::uint64_t seed) {
  DistMatrix m(grid, dtype, rows, cols, block, block);
  collective(grid.comm(), [&] {
    Distribution values;
    if (is_integer(dtype)) values = {Distribution::Kind::ints, -1000, 1000};
    m.local() = random_matrix(rows_of(m.local()), cols_of(m.local()), dtype, values,
                              seed * 1000003 + std::uint64_t(grid.rank()));
  });
  return m;
}

}  // namespace

SummaBenchResult bench_summa(const ProcessGrid& grid, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                             std::int64_t block, const SummaBenchOptions& options) {
  collective(grid.comm(), [&] {
    if (options.warmup < 0 || options.reps < 1 || !(options.max_seconds > 0))
      fail(ErrorCategory::usage, "bench_summa: warmup must be >= 0, reps >= 1 and max_seconds > 0");
    mpi_type(dtype);
  });
  const DistMatrix a = random_dist_matrix(grid, dtype, m, k, block, options.seed);
  const DistMatrix b = random_dist_matrix(grid, dtype, k, n, block, options.seed + 1);
  DistMatrix c(grid, dtype, m, n, block, block);
  SummaBenchResult result;
  for (int i = 0; i < options.warmup; ++i) result.local_kernel = summa(1.0, a, b, 0.0, c, options.summa);
  double spent = 0;
  while (int(result.seconds.size()) < options.reps && (result.seconds.empty() || spent < options.max_seconds)) {
    MPI_Barrier(grid.comm());
    const auto start = std::chrono::steady_clock::now();
    result.local_kernel = summa(1.0, a, b, 0.0, c, options.summa);
    MPI_Barrier(grid.comm());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The slowest rank's, so that every rank has the same times and stops at the same run.
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
    result.seconds.push_back(seconds);
    spent += seconds;
  }
  std::vector<double> sorted = result.seconds;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t half = sorted.size() / 2;
  result.median_s = sorted.size() % 2 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2;
  result.min_s = sorted.front();
  result.gflops = result.median_s > 0 ? 2.0 * double(m) * double(n) * double(k) / result.median_s / 1e9 : 0;
  return result;
}

}  // namespace gemmkit::dist

// Timing SUMMA for the scaling benchmarks (gemmkit bench --distributed): random operands made
// where they live, warm-up runs, then timed runs between barriers, the slowest rank's time
// each; on GPUs cuBLASMp beside it on the same blocks.
#include <algorithm>
#include <functional>
#include <optional>

#include "distributed/dist_common.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/timing_spread.hpp"

namespace gemmkit::dist {
namespace {

Distribution values_for(DType dtype) {
  Distribution values;
  if (is_integer(dtype)) values = {Distribution::Kind::ints, -1000, 1000};
  return values;
}

// Random blocks of every rank (its own seed), made where they live: in host memory, or on the
// GpuGrid's device (uploaded from the host), so that no rank holds a whole matrix.
DistMatrix random_dist_matrix(const ProcessGrid& grid, const GpuGrid* gpus, DType dtype, std::int64_t rows,
                              std::int64_t cols, std::int64_t block, std::uint64_t seed) {
  DistMatrix m = gpus ? DistMatrix(*gpus, dtype, rows, cols, block, block)
                      : DistMatrix(grid, dtype, rows, cols, block, block);
  collective(grid.comm(), [&] {
    AnyMatrix local = random_matrix(m.local_rows(), m.local_cols(), dtype, values_for(dtype),
                                    seed * 1000003 + std::uint64_t(grid.rank()));
    if (gpus) upload_local(m, local);
    else m.local() = std::move(local);
  });
  return m;
}

// `run` timed as options say (time_runs), each run between barriers: the slowest rank's time,
// so that every rank has the same times and stops at the same run.
std::vector<double> time_runs(const ProcessGrid& grid, const SummaBenchOptions& options,
                              const std::function<void()>& run) {
  return gemmkit::time_runs({options.warmup, options.reps, options.max_seconds}, [&] {
    MPI_Barrier(grid.comm());
    double s = cpu_seconds([&] {
      run();
      MPI_Barrier(grid.comm());
    });
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
    return s;
  });
}

}  // namespace

BenchReport bench_summa(const ProcessGrid& grid, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t block, const SummaBenchOptions& options) {
  const bool on_gpu = options.summa.backend == Backend::cuda;
  collective(grid.comm(), [&] {
    if (options.warmup < 0 || options.reps < 1 || !(options.max_seconds > 0))
      fail(ErrorCategory::usage, "bench_summa: warmup must be >= 0, reps >= 1 and max_seconds > 0");
    if (!on_gpu) mpi_type(dtype);
    else if (dtype != DType::f64 && dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
      fail(ErrorCategory::usage, "bench_summa on the CUDA backend times f64, f32, f16 or bf16, not " +
                                     std::string(dtype_name(dtype)));
  });
  BenchReport report;
  report.operation = "summa";
  report.backend = on_gpu ? Backend::cuda : Backend::cpu;
  report.dtype = dtype;
  BenchRow row;
  row.operation = report.operation;
  row.kernel = "summa";
  row.gemm.emplace().shape = {m, n, k};
  row.size = row.gemm->shape.text();
  row.dtype = dtype;
  row.distributed = DistributedBenchFacts{grid.size(), grid_name(grid.shape()), block, ""};
  std::optional<BenchRow> reference;
  const double flops = row.gemm->shape.flops();
  std::optional<GpuGrid> gpus;
  if (on_gpu) gpus.emplace(grid);
  const GpuGrid* device = gpus ? &*gpus : nullptr;
  {
    const DType c_dtype = dtype == DType::f16 || dtype == DType::bf16 ? DType::f32 : dtype;
    const DistMatrix a = random_dist_matrix(grid, device, dtype, m, k, block, options.seed);
    const DistMatrix b = random_dist_matrix(grid, device, dtype, k, n, block, options.seed + 1);
    DistMatrix c = device ? DistMatrix(*device, c_dtype, m, n, block, block) : DistMatrix(grid, dtype, m, n, block, block);
    std::string& local_kernel = row.distributed->local_kernel;
    record_runs(row, {time_runs(grid, options, [&] { local_kernel = summa(1.0, a, b, 0.0, c, options.summa); }), {}},
                flops, !on_gpu);
    if (on_gpu && options.reference && cublasmp_available()) {
      // cublasmp_matmul returns once C is complete; its first call sets cuBLASMp up (the warm-up).
      reference = row;
      reference->kernel = "cublasMpMatmul";
      reference->reference = true;
      reference->distributed.reset();
      record_runs(*reference, {time_runs(grid, options, [&] { cublasmp_matmul(1.0, a, b, 0.0, c); }), {}}, flops,
                  false);
      report.percent_of = reference->kernel;
    }
  }  // the device blocks go before the GpuGrid
  report.rows.push_back(std::move(row));
  if (reference) report.rows.push_back(std::move(*reference));
  set_ratios(report.rows.begin(), report.rows.end(), reference ? &report.rows.back() : nullptr, 0);
  return report;
}

}  // namespace gemmkit::dist

// The one report of every operation's benchmark: run_gemm_bench (gemmkit/bench.hpp),
// reduce_bench, spmv_bench_cuda, conv1d_bench and dist::bench_summa return it; the CLI and
// Python print it. A row is one kernel's timed runs on one problem, beside the reference run in
// the same pass; what only one operation has is in that operation's optional facts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/timing_spread.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {

// What a row's rate counts, per second in units of 1e9: floating-point operations (a GEMM's
// 2 m n k per product) or bytes moved (memory-bound work).
enum class RateUnit { gflops, gbs };
std::string_view rate_unit_name(RateUnit unit);  // "GFLOP/s" or "GB/s"

struct BenchShape {
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }  // one product
  std::string text() const;  // "MxNxK"
};

// A GEMM row's problem (run_gemm_bench's rows; SUMMA's have the shape alone).
struct GemmBenchFacts {
  BenchShape shape{};
  std::int64_t batch = 1;
  bool trans_a = false, trans_b = false;  // the run's BenchOptions::trans_a/b and layout
  Layout layout = Layout::row_major;
  std::optional<DType> accuracy;        // the entry's KernelEntry::accuracy
  DType tolerance_dtype = DType::f32;   // whose tolerance the check applied
};

struct ReduceBenchFacts {
  double value = 0;           // the result of the runs
  bool bit_identical = true;  // every run gave the same bits as the first
};

struct Conv1dBenchFacts {
  std::int64_t checked = 0;  // outputs compared with the CPU reference
};

// SUMMA's row over the processes of an MPI job (its times: the slowest rank's).
struct DistributedBenchFacts {
  int processes = 1;
  std::string grid;          // "PxQ"
  std::int64_t block = 0;    // of the block-cyclic distribution
  std::string local_kernel;  // the GEMM each process ran on its blocks
};

struct BenchRow {
  std::string operation;  // "gemm", "reduce", "spmv", "conv1d", "summa"
  std::string kernel;     // a kernel, a variant of one ("vec16_unroll2"), "auto" or "device_copy"
  std::string size;       // the problem: "512x512x512", "64 x 512x512x512", "268435456 values", ...
  DType dtype = DType::f32;
  int rung = 0;
  bool reference = false;  // a reference library's run (OpenBLAS, cuBLAS, CUB, cuSPARSE, cuBLASMp)
  bool skipped = false;
  bool failed = false;     // it threw: the note says what
  std::string note;        // why it was skipped or failed, or what the row adds
  std::vector<double> seconds;  // each timed run, in run order
  TimingSpread timing;          // their spread (samples, min, median, max), noisy and why
  double rate = 0;              // from the median, in `unit`
  RateUnit unit = RateUnit::gflops;
  // The rate as a percentage of the reference's (BenchReport::percent_of) in the same pass;
  // -1: no reference (or not run).
  double percent_of_reference = -1;
  // The reference's median in runs alternating with this row's (0: not timed in pairs, e.g.
  // the reference itself); the ratio is taken against it then.
  double reference_median_s = 0;
  // A device copy moving the bytes this row must, timed in the same run, as a percentage of
  // its median: 100% is the memory-bandwidth ceiling. -1: not measured.
  double percent_of_copy = -1;
  // The result against the operation's reference (GEMM: the exact product; spmv and conv1d:
  // error over its bound, tolerance 1); method none and passed: not checked.
  VerifyResult check;
  std::optional<GemmBenchFacts> gemm;
  std::optional<ReduceBenchFacts> reduce;
  std::optional<Conv1dBenchFacts> conv1d;
  std::optional<DistributedBenchFacts> distributed;
};

// The matrix of an spmv report.
struct SpmvBenchFacts {
  bool offsets_64bit = false;  // the row offsets as stored on the device
  std::string auto_kernel;     // what "auto" chooses for the matrix
};

struct BenchReport {
  std::string operation;
  Backend backend = Backend::cpu;
  DType dtype = DType::f32;
  std::string percent_of;   // the kernel every ratio is taken against ("" if none)
  bool paired = false;      // kernels timed in ABBA pairs beside the reference (GEMM on the GPU)
  bool l2_flushed = false;  // every timed run started with a cold L2
  // Memory-bound work: the bytes one run is counted as moving (rates are bytes / median), and
  // the device copy moving as many, timed in the same run (its rate the ceiling).
  double bytes = 0;
  std::optional<BenchRow> copy;
  std::vector<BenchRow> rows;  // in run order (GEMM: shape by shape)
  std::optional<SpmvBenchFacts> spmv;
  // The first failure (out of memory, a device error, a kernel that threw): the rows hold
  // the rest, the failed ones marked.
  std::optional<Error> first_failure;

  bool all_passed() const;  // every row that ran passed its check
  std::size_t failed_rows() const;
};

// Sets row.seconds and row.timing from its timed runs (timing_spread: `cpu` runs are checked for
// shared cores), and row.rate: `work` (flops or bytes, as row.unit counts) over their median.
// With the reference's runs paired with them (runs.reference), their spread and median too.
void record_runs(BenchRow& row, const PairedTimes& runs, double work, bool cpu);

// The ratios of rows [first, last) of one problem: percent_of_reference against `reference`'s
// rate (a row timed in pairs with it: against its reference_median_s), percent_of_copy against
// a copy of `copy_median_s` (0: none). Skipped rows keep -1, and rows with neither.
void set_ratios(std::vector<BenchRow>::iterator first, std::vector<BenchRow>::iterator last,
                const BenchRow* reference, double copy_median_s);

}  // namespace gemmkit

// Internal: the tuning table behind `--kernel auto` on the CUDA backend. A tuning run on
// the H200 times every kernel of ours beside cuBLAS on the shape suites (bench/shapes/);
// bench/tune/make_auto_table.py keeps, per measured shape, the fastest kernel (cuBLAS
// only where none of ours reached it) and writes src/ops/gemm/auto_table.inc. Auto takes the
// winner of the nearest measured shape of the same class: dtype, and whether the operands'
// rows lie on 16 bytes (TMA's condition, which decides which of our kernels can run).
#pragma once

#include <string>
#include <vector>

#include "gemmkit/gemm.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit::detail {

struct TunedShape {
  DType dtype;
  std::int64_t m, n, k, batch;  // row-major
  bool trans_a, trans_b;
  bool rows_on_16_bytes;  // A's and B's rows start on 16-byte boundaries
  const char* kernel;     // the fastest at this shape in the tuning run
  double percent_of_cublas;
};

// Where the table was measured: device, compute capability, date, commit, results folder.
struct TuningRun {
  const char* device;
  int compute_capability;
  const char* results;  // bench/results/<folder>
};
const TuningRun& tuning_run();

// The measured shapes of the row-major problem's class, nearest first (distance: the sum
// of |log2| differences of M, N, K and the batch, plus 1/2 per differing transpose), at most
// `limit`. Empty for dtypes the table does not cover.
struct TunedMatch {
  const TunedShape* shape;
  double distance;
};
std::vector<TunedMatch> nearest_tuned_shapes(const GemmProblem& row_major, std::size_t limit);

// "1024x1024x8192 (A^T), 8 x ..." as the table row would be asked for.
std::string tuned_shape_string(const TunedShape& s);

// The table as GEMM's registry uses it (Registry::set_measured_table): the winners of the
// nearest few measured shapes, so that a kernel that refuses the problem (a skinny kernel
// asked for M = 65) gives way to the next nearest measurement rather than to the priorities.
MeasuredTable<GemmProblem> gemm_measured_table();

}  // namespace gemmkit::detail

// The benchmark engine: every kernel of a backend beside the reference library of the same
// dtype, in one run, each result verified. `gemmkit bench` only parses options and prints
// what run_gemm_bench returns; a program that registers its own kernel (register_kernel)
// benchmarks it the same way. It returns the report of every benchmark (bench_report.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/bench_report.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/run_meta.hpp"

namespace gemmkit {

// ---- the GEMM benchmark ----------------------------------------------------------------

// "MxNxK" (x or X between positive decimal sizes, e.g. 16x8192x8192), or nullopt.
std::optional<BenchShape> parse_bench_shape(const std::string& text);

struct BenchOptions {
  // Kernel names, all of the context's backend; empty: every kernel of the backend that
  // supports the dtype. The backend's reference entries always run too (listed first), so
  // every ratio is measured in the same run.
  std::vector<std::string> kernels;
  std::vector<BenchShape> shapes;  // run smallest first (a stable sort by flops)
  DType dtype = DType::f32;
  bool trans_a = false, trans_b = false;  // A and/or B stored transposed
  Layout layout = Layout::row_major;
  // A strided batch of `batch` products per shape, stored one after another (stride = the
  // matrix's size). Kernels that are not `batched` run it as the library does (one product
  // after another); GFLOP/s count every product.
  std::int64_t batch = 1;
  int warmup = 1;               // untimed runs first
  int reps = 5;                 // timed runs at most (pairs on the GPU)
  double max_seconds = 3.0;     // stop timing a kernel at a shape after this (>= 1 run)
  // Skip a kernel at a shape when its best rate at a smaller one predicts a run longer
  // than this (a large first shape is estimated from probe runs on smaller ones).
  double max_run_seconds = 2.0;
  std::uint64_t seed = 1;       // of the random operands
};

// Where the run is, for a progress line: the kernel about to run at a shape.
struct BenchProgress {
  std::size_t done = 0, total = 0;  // done counts this one
  const std::string& kernel;
  const BenchShape& shape;
};

// Runs every selected kernel at every shape on ctx's backend: random operands (integers
// for integer dtypes), warm-up, timed runs (GPU: on a stream of the engine's own, under
// events, each run after an L2 flush, in ABBA pairs with the reference), verification of
// every timed result against the exact or double-double reference, and the ratio to the
// reference. Rows of operation "gemm" with their GemmBenchFacts, rates in GFLOP/s (every
// product of a batch counted), percent_of_copy on the GPU (a device copy of the bytes the
// product must move: A and B read, C written, and read too when beta != 0). Usage errors for
// unknown kernels, kernels of another backend or without the dtype, or no shapes; failures
// at run time go into the rows (and first_failure).
BenchReport run_gemm_bench(Context& ctx, const BenchOptions& options,
                           const std::function<void(const BenchProgress&)>& progress = {});

// The table `gemmkit bench` prints: a line naming the backend, dtype and device, one line per
// row (skipped rows say why; a failed check says FAILED), and what the columns mean.
std::string bench_table(const BenchReport& report, const RunMeta& meta);

// The device-to-device copy of `bytes` (GPU, on a stream of its own, the median of `reps`
// runs after `warmup`): the ceiling a memory-bound kernel is measured against, as the
// bandwidth 2 * bytes / seconds. CPU contexts: memcpy between two host buffers.
double copy_ceiling_seconds(Context& ctx, std::size_t bytes, int warmup = 2, int reps = 10);

// ---- shape suites (bench/shapes/*.txt) --------------------------------------------------
// A suite file lists one shape per line: `MxNxK`, then optional flags `A^T`, `B^T`, `row`
// or `col` (the layout; row is the default), then an optional `# comment` saying where the
// shape comes from. Blank lines and lines that are only a comment are skipped; the comment
// lines before the first shape are the suite's description.

struct SuiteShape {
  BenchShape shape{};
  bool trans_a = false, trans_b = false;
  Layout layout = Layout::row_major;
  std::string source;  // the line's comment, without '#'
  int line = 0;        // 1-based line of the file
  // "MxNxK", with " A^T", " B^T", " col" as the line gives them
  std::string text() const;
};

struct ShapeSuite {
  std::string name;         // the file's name without ".txt" ("all" for the union)
  std::string path;         // the file read ("" for the union)
  std::string description;  // the header comment, lines joined by '\n'
  std::vector<SuiteShape> shapes;
};

// Reads a suite file. Input errors: an unreadable file, a malformed line ("FILE:LINE: what
// is wrong"), a repeated shape with the same flags, a file without shapes.
ShapeSuite read_shape_suite(const std::string& path);

// The suite names (file names without ".txt", sorted) of the *.txt files in `dir`.
std::vector<std::string> shape_suite_names(const std::string& dir);

// A suite of `dir` by name; "all", when no all.txt exists, is the union of every suite of
// the folder in name order, each shape once (the first file's line kept). Usage error for an
// unknown name, listing the known ones.
ShapeSuite find_shape_suite(const std::string& name, const std::string& dir);

// Per kernel, over the rows of a suite's runs (one dtype): the geometric mean and minimum of
// percent_of_reference over the shapes it was measured at and passed verification.
struct SuiteKernelSummary {
  std::string kernel;
  bool reference = false;
  std::size_t measured = 0;  // shapes with a ratio that count
  std::size_t missing = 0;   // shapes it was skipped at, failed, or had no ratio
  std::size_t failed = 0;    // of them: shapes where it threw or failed verification
  double geomean_percent = 0, min_percent = 0;  // 0 when measured == 0
  SuiteShape min_shape{};    // the shape of the minimum (source and line left empty)
};

// Kernels in the order of their first row.
std::vector<SuiteKernelSummary> summarize_suite(const std::vector<BenchRow>& rows);

// The lines `gemmkit bench --suite` prints after the tables.
std::string suite_summary_table(const std::string& suite_name, DType dtype, const std::string& percent_of,
                                const std::vector<SuiteKernelSummary>& summary);

}  // namespace gemmkit

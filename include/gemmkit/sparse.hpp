// Sparse matrices in CSR form and the sparse matrix-vector product y = A x.
//
// Index design: row offsets are always 64-bit on the host (an nnz past 2^31 - 1 needs no
// other type), column indices are always 32-bit (a matrix with 2^31 or more columns is
// refused with an input error). The CUDA backend narrows the row offsets to 32 bits on the
// device whenever nnz fits, since that is 4 bytes per row less to stream; its kernels are
// compiled for both offset widths. Values are f32 or f64.
//
// Within a row, column indices are strictly increasing (sorted, no duplicates): every
// builder here guarantees it and validate_csr checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/bench_report.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

template <class T>
struct CsrMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_offsets = {0};  // rows + 1 entries, row_offsets[0] == 0
  std::vector<std::int32_t> col_indices;        // nnz entries
  std::vector<T> values;                        // nnz entries
  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
  std::int64_t row_length(std::int64_t r) const { return row_offsets[r + 1] - row_offsets[r]; }
};

// Throws an input error naming `what` and the first inconsistency (sizes, offsets that are
// not non-decreasing, a column out of range or out of order).
template <class T>
void validate_csr(const CsrMatrix<T>& a, const std::string& what);

// From Matrix Market entries (0-based, as read_mtx_entries gives them): rows sorted by
// column, duplicates summed (in double, then rounded once to T).
template <class T>
CsrMatrix<T> csr_from_entries(const SparseEntries& entries, const std::string& what);

// read_mtx_entries + csr_from_entries. Array (dense) files work too; their explicit zeros
// are kept as entries.
template <class T>
CsrMatrix<T> read_csr(const std::string& path);

// The CPU reference y = A x: every row accumulated in long double, rounded once to T.
// x.size() must equal a.cols (usage error otherwise).
template <class T>
std::vector<T> spmv_reference(const CsrMatrix<T>& a, const std::vector<T>& x);

// Row-wise error bound of any order of summation in T, used by the tests:
// |y_i - ref_i| <= (len_i + 1) * eps(T) * sum_j |a_ij x_j| (first order; products rounded
// once, len_i - 1 additions). Returns, per row, sum_j |a_ij x_j| in long double.
template <class T>
std::vector<long double> spmv_abs_row_sums(const CsrMatrix<T>& a, const std::vector<T>& x);

// Benchmark matrices, seeded: the same options give the same matrix on every machine and
// any number of threads.
enum class SparsePattern {
  uniform,   // row lengths uniform in [mean/2, 3 mean/2], columns random over the whole width
  banded,    // the full band |i - j| <= half_bandwidth (square-ish: columns clipped at cols)
  powerlaw,  // Pareto row lengths (tail index 1.3, min 4) plus a few planted rows of
             // 2e5, 4e5 and 8e5 entries (capped at cols); columns random over the width
};
struct SparseGenOptions {
  std::int64_t rows = 1 << 22, cols = -1;  // cols -1: square
  int mean_row_length = 16;                // uniform
  int half_bandwidth = 8;                  // banded: 2 * 8 + 1 = 17 entries per inner row
  int heavy_rows = 3;                      // powerlaw: how many planted long rows
  std::uint64_t seed = 1;
};
const char* sparse_pattern_name(SparsePattern p);
SparsePattern parse_sparse_pattern(const std::string& name);  // usage error if unknown
template <class T>
CsrMatrix<T> generate_csr(SparsePattern pattern, const SparseGenOptions& options);

// Cheap statistics the kernel choice reads.
struct CsrStats {
  std::int64_t rows = 0, nnz = 0, max_row_length = 0, empty_rows = 0;
  double mean_row_length = 0;
  // How far from the diagonal the columns lie, on average, over up to 4096 evenly spaced
  // rows: |col - row * cols / rows|. Small means x is read in a narrow moving window
  // (banded, stencils); large means x is gathered from anywhere.
  double mean_column_distance = 0;
};
template <class T>
CsrStats csr_stats(const CsrMatrix<T>& a);

// ---- the kernels -------------------------------------------------------------------------
// y = A x as kernels see it: A in CSR form, x (cols values) and y (rows values), all in the
// memory of the backend that runs it (device memory for CUDA kernels). Row offsets are
// 32-bit or 64-bit (the CUDA backend narrows them to 32 bits whenever nnz fits: 4 bytes per
// row less to stream), column indices 32-bit, values f32 or f64.
struct SpmvProblem {
  DType dtype = DType::f64;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const void* row_offsets = nullptr;  // rows + 1 entries: std::int32_t or std::int64_t
  bool offsets_64bit = false;
  const std::int32_t* col_indices = nullptr;  // nnz entries, sorted within each row
  const void* values = nullptr;               // nnz entries of dtype
  const void* x = nullptr;
  void* y = nullptr;
  // csr_stats of the matrix, when the caller has them: "auto" then chooses from them
  // (choose_spmv_kernel); without them "auto" runs merge_path, which no row pattern defeats.
  std::optional<CsrStats> stats;
  int group_size = 0;  // vector_groups: threads per row; 0 = spmv_group_size(nnz / rows)
};
using SpmvKernel = Kernel<SpmvProblem>;
// cpu_reference, then the GPU ladder: "scalar" (one thread per row, the teaching texts' kernel),
// "vector" (a warp per row), "vector_groups" (2..32 threads per row, chosen from the mean
// row length), "merge_path" (the merged sequence of row ends and nonzeros split evenly), and
// the vendor references "cusparse" (CUSPARSE_SPMV_ALG_DEFAULT) and "cusparse_alg2"
// (CUSPARSE_SPMV_CSR_ALG2).
const Registry<SpmvProblem>& spmv_registry();

// The auto choice, from statistics alone (documented in docs/spmv.md).
std::string choose_spmv_kernel(const CsrStats& stats);
// The threads per row vector_groups uses for this mean row length (about four nonzeros per
// lane): 2, 4, 8, 16 or 32.
int spmv_group_size(double mean_row_length);

// ---- device API --------------------------------------------------------------------------
// The problem's arrays in ctx's memory (device memory of its device; host memory for the CPU
// context). Checks the kernel ("auto": see SpmvProblem::stats) and queues y = A x on
// `stream` without waiting. Scratch (merge_path's partition, cuSPARSE's buffer) comes from
// `workspace` when given (at least spmv_workspace_bytes), else from the context's pool.
// cuSPARSE runs through the context's handle. Returns the kernel that ran.
std::size_t spmv_workspace_bytes(const Context& ctx, const SpmvProblem& problem,
                                 std::string_view kernel = "auto");
const SpmvKernel& spmv(Context& ctx, const SpmvProblem& problem, Stream stream,
                       std::string_view kernel = "auto", Workspace workspace = {});

// A typed view of a CSR matrix in device memory, for the typed call below.
template <class T>
struct CsrDeviceView {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const void* row_offsets = nullptr;  // std::int32_t or std::int64_t (offsets_64bit)
  bool offsets_64bit = false;
  const std::int32_t* col_indices = nullptr;
  const T* values = nullptr;
};
template <class T>
SpmvProblem make_spmv_problem(const CsrDeviceView<T>& a, const T* x, T* y) {
  SpmvProblem p;
  p.dtype = dtype_of<T>;
  p.rows = a.rows;
  p.cols = a.cols;
  p.nnz = a.nnz;
  p.row_offsets = a.row_offsets;
  p.offsets_64bit = a.offsets_64bit;
  p.col_indices = a.col_indices;
  p.values = a.values;
  p.x = x;
  p.y = y;
  return p;
}
template <class T>
const SpmvKernel& spmv(Context& ctx, const CsrDeviceView<T>& a, const T* x, T* y, Stream stream,
                       std::string_view kernel = "auto", Workspace workspace = {}) {
  return spmv(ctx, make_spmv_problem(a, x, y), stream, kernel, workspace);
}

// ---- host API ----------------------------------------------------------------------------
struct SpmvRunOptions {
  std::string kernel = "auto";
  bool force_64bit_offsets = false;  // tests: exercise the wide-offset kernels at small sizes
  int group_size = 0;                // vector_groups: 0 = from the mean row length
  Context* context = nullptr;        // the context to run in (nullptr: one made for the call)
};

bool spmv_cuda_available();  // built with CUDA and a device present

// y = A x on the device (uploads, runs once, downloads). Throws a usage error for an unknown
// kernel or a size mismatch, device errors for CUDA failures.
template <class T>
std::vector<T> spmv_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o = {});

// y = A x from host memory on `backend` (nullopt: the GPU when spmv_cuda_available(), else
// the CPU), by the kernel o.kernel names ("auto": on the GPU the choice from csr_stats, on the
// CPU its one kernel, cpu_reference; a GPU kernel named for the CPU is a usage error). The
// kernel and backend that ran come back with y.
template <class T>
struct SpmvHostResult {
  std::vector<T> y;
  std::string kernel;
  Backend backend = Backend::cpu;
};
template <class T>
SpmvHostResult<T> spmv_host(const CsrMatrix<T>& a, const std::vector<T>& x, std::optional<Backend> backend,
                            const SpmvRunOptions& o = {});

// Times every GPU rung and cuSPARSE (both algorithms, analysis outside the timed region)
// beside the device copy, all in this call; every result is checked against `reference`.
// `tune` adds the variants of vector_groups (each group size) and merge_path. The report:
// operation "spmv", a row per variant (a device error skips it, saying why), rates in GB/s of
// the CSR arrays as stored on the device + x + y (bytes), percent_of the faster cuSPARSE,
// percent_of_copy against a device copy moving as many bytes; each row's check the max over
// rows of |y_i - ref_i| / ((len_i + 1) eps sum|a x|), passing at 1; spmv: the offsets stored
// and what auto chooses.
template <class T>
BenchReport spmv_bench_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& reference,
                            int warmup, int reps, bool tune);

}  // namespace gemmkit

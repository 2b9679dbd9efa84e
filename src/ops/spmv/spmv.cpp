// CSR matrices on the host: building from Matrix Market entries, checking, the long-double
// CPU reference of y = A x, the seeded benchmark generators and the auto kernel choice.
#include "gemmkit/sparse.hpp"
#include "runtime/cuda_part.hpp"
#include "ops/spmv/spmv_device.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "arith/splitmix.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

constexpr std::int64_t kMaxColumns = std::numeric_limits<std::int32_t>::max();

// splitmix64 (arith/splitmix.hpp), one stream per row keeps generation independent
// of the thread count.
struct RowRng {
  std::uint64_t state;
  RowRng(std::uint64_t seed, std::uint64_t stream) : state(seed * kSplitmixGamma ^ (stream + 1) * 0xD1B54A32D192ED03ull) {}
  std::uint64_t next() {
    return splitmix64_next(state);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

void check_columns_fit(std::int64_t cols, const std::string& what) {
  if (cols > kMaxColumns)
    fail(ErrorCategory::input, what + ": " + std::to_string(cols) + " columns; CSR column indices are "
                               "32-bit, so at most " + std::to_string(kMaxColumns) + " columns are supported");
}

// The host memory a CSR matrix of `rows` rows, `cols` columns and `nnz` entries needs while it
// is built and used (two row-offset arrays, the entry order, columns, values, x and y). Sizes
// from a file or an option can be anything up to 2^63: refuse what the machine cannot hold
// with the figures, before allocating (an allocation past the memory is killed, not refused).
void check_csr_memory(std::int64_t rows, std::int64_t cols, double nnz, double value_bytes,
                      const std::string& what) {
  const double need = (double(rows) + 1) * 2 * 8 + nnz * (8 + 4 + value_bytes) +
                      (double(rows) + double(cols)) * value_bytes;
  const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > have) {
    char figures[96];
    std::snprintf(figures, sizeof figures, " nonzeros needs %.3g GB of host memory; this machine has %.3g GB",
                  need / 1e9, have / 1e9);
    fail(ErrorCategory::out_of_memory, what + ": a CSR matrix of " + std::to_string(rows) + " rows, " +
                                           std::to_string(cols) + " columns and " +
                                           std::to_string(std::int64_t(nnz)) + figures);
  }
}

}  // namespace

template <class T>
void validate_csr(const CsrMatrix<T>& a, const std::string& what) {
  auto bad = [&](const std::string& why) { fail(ErrorCategory::input, what + ": malformed CSR: " + why); };
  if (a.rows < 0 || a.cols < 0) bad("negative size");
  check_columns_fit(a.cols, what);
  if (static_cast<std::int64_t>(a.row_offsets.size()) != a.rows + 1)
    bad(std::to_string(a.row_offsets.size()) + " row offsets for " + std::to_string(a.rows) + " rows");
  if (a.values.size() != a.col_indices.size())
    bad(std::to_string(a.values.size()) + " values but " + std::to_string(a.col_indices.size()) + " column indices");
  if (a.row_offsets.front() != 0) bad("row_offsets[0] is not 0");
  if (a.row_offsets.back() != a.nnz()) bad("row_offsets[rows] is not nnz");
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t b = a.row_offsets[r], e = a.row_offsets[r + 1];
    if (e < b) bad("row offsets decrease at row " + std::to_string(r));
    for (std::int64_t j = b; j < e; ++j) {
      const std::int32_t c = a.col_indices[j];
      if (c < 0 || c >= a.cols) bad("column " + std::to_string(c) + " out of range in row " + std::to_string(r));
      if (j > b && c <= a.col_indices[j - 1]) bad("columns not strictly increasing in row " + std::to_string(r));
    }
  }
}

template <class T>
CsrMatrix<T> csr_from_entries(const SparseEntries& e, const std::string& what) {
  check_columns_fit(e.cols, what);
  check_csr_memory(e.rows, e.cols, double(e.size()), sizeof(T), what);
  CsrMatrix<T> a;
  a.rows = e.rows;
  a.cols = e.cols;
  const std::size_t n = e.size();
  // Counting sort by row: (rows + 1) counts, then each entry's slot.
  std::vector<std::int64_t> start(static_cast<std::size_t>(e.rows) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++start[static_cast<std::size_t>(e.row[k]) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::int64_t> order(n);
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < n; ++k) order[static_cast<std::size_t>(fill[e.row[k]]++)] = static_cast<std::int64_t>(k);
  }
  auto value_of = [&](std::int64_t k) {
    return e.dtype == DType::f64 ? e.real_values[k] : static_cast<double>(e.int_values[k]);
  };
  a.row_offsets.assign(static_cast<std::size_t>(e.rows) + 1, 0);
  a.col_indices.reserve(n);
  a.values.reserve(n);
  std::vector<std::pair<std::int64_t, double>> row;  // (column, value) of one row
  for (std::int64_t r = 0; r < e.rows; ++r) {
    row.clear();
    for (std::int64_t s = start[r]; s < start[r + 1]; ++s) row.emplace_back(e.col[order[s]], value_of(order[s]));
    std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < row.size();) {
      double sum = 0;  // duplicates summed in double, rounded once
      const std::int64_t c = row[i].first;
      for (; i < row.size() && row[i].first == c; ++i) sum += row[i].second;
      a.col_indices.push_back(static_cast<std::int32_t>(c));
      a.values.push_back(static_cast<T>(sum));
    }
    a.row_offsets[r + 1] = static_cast<std::int64_t>(a.col_indices.size());
  }
  return a;
}

template <class T>
CsrMatrix<T> read_csr(const std::string& path) {
  const SparseEntries entries = read_mtx_entries(path);
  return io::reporting_memory(path, [&] { return csr_from_entries<T>(entries, io::quoted_path(path)); });
}

namespace {
// y = A x row by row, each row accumulated in long double and rounded once to T.
template <class T, class Offset>
void reference_rows(std::int64_t rows, const Offset* offsets, const std::int32_t* cols, const T* values,
                    const T* x, T* y) {
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < rows; ++r) {
    long double sum = 0;
    for (std::int64_t j = offsets[r]; j < offsets[r + 1]; ++j)
      sum += static_cast<long double>(values[j]) * static_cast<long double>(x[cols[j]]);
    y[r] = static_cast<T>(sum);
  }
}
}  // namespace

template <class T>
std::vector<T> spmv_reference(const CsrMatrix<T>& a, const std::vector<T>& x) {
  if (static_cast<std::int64_t>(x.size()) != a.cols)
    fail(ErrorCategory::usage, "spmv: x has " + std::to_string(x.size()) + " entries but the matrix has " +
                                   std::to_string(a.cols) + " columns");
  std::vector<T> y(static_cast<std::size_t>(a.rows));
  reference_rows(a.rows, a.row_offsets.data(), a.col_indices.data(), a.values.data(), x.data(), y.data());
  return y;
}

template <class T>
std::vector<long double> spmv_abs_row_sums(const CsrMatrix<T>& a, const std::vector<T>& x) {
  std::vector<long double> s(static_cast<std::size_t>(a.rows));
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < a.rows; ++r) {
    long double sum = 0;
    for (std::int64_t j = a.row_offsets[r]; j < a.row_offsets[r + 1]; ++j)
      sum += std::fabs(static_cast<long double>(a.values[j]) * static_cast<long double>(x[a.col_indices[j]]));
    s[r] = sum;
  }
  return s;
}

const char* sparse_pattern_name(SparsePattern p) {
  switch (p) {
    case SparsePattern::uniform: return "uniform";
    case SparsePattern::banded: return "banded";
    case SparsePattern::powerlaw: return "powerlaw";
  }
  return "?";
}

SparsePattern parse_sparse_pattern(const std::string& name) {
  if (name == "uniform") return SparsePattern::uniform;
  if (name == "banded") return SparsePattern::banded;
  if (name == "powerlaw") return SparsePattern::powerlaw;
  fail(ErrorCategory::usage, "unknown matrix pattern '" + name + "' (expected uniform, banded or powerlaw)");
}

template <class T>
CsrMatrix<T> generate_csr(SparsePattern pattern, const SparseGenOptions& o) {
  const std::int64_t rows = o.rows, cols = o.cols < 0 ? o.rows : o.cols;
  if (rows < 0) fail(ErrorCategory::usage, "generate_csr: negative row count");
  check_columns_fit(cols, "generate_csr");
  check_csr_memory(rows, cols, double(rows) * o.mean_row_length, sizeof(T), "generate_csr");
  CsrMatrix<T> a;
  a.rows = rows;
  a.cols = cols;
  a.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  if (rows == 0 || cols == 0) return a;

  // Pass 1: the length of every row, each from its own random stream.
  std::vector<std::int64_t> length(static_cast<std::size_t>(rows));
  const std::int64_t w = o.half_bandwidth;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    RowRng rng(o.seed, static_cast<std::uint64_t>(r));
    std::int64_t len = 0;
    switch (pattern) {
      case SparsePattern::uniform: {
        const std::int64_t lo = o.mean_row_length / 2, hi = o.mean_row_length + o.mean_row_length / 2;
        len = lo + rng.below(hi - lo + 1);
        break;
      }
      case SparsePattern::banded:
        len = std::max<std::int64_t>(0, std::min(cols - 1, r + w) - std::max<std::int64_t>(0, r - w) + 1);
        break;
      case SparsePattern::powerlaw: {
        // Pareto with x_min 4 and tail index 1.3: P(len > l) = (4 / l)^1.3.
        const double u = 1.0 - rng.uniform01();  // (0, 1]
        len = static_cast<std::int64_t>(std::min(4.0 * std::pow(u, -1.0 / 1.3), 1e9));
        break;
      }
    }
    length[r] = std::min(len, cols);
  }
  if (pattern == SparsePattern::powerlaw) {
    RowRng rng(o.seed, ~0ull);
    for (int k = 0; k < o.heavy_rows; ++k) {
      const std::int64_t r = rng.below(rows);
      length[r] = std::min<std::int64_t>(200000ll << k, cols);
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) a.row_offsets[r + 1] = a.row_offsets[r] + length[r];
  const std::int64_t nnz = a.row_offsets[rows];
  a.col_indices.resize(static_cast<std::size_t>(nnz));
  a.values.resize(static_cast<std::size_t>(nnz));

  // Pass 2: columns and values. Random rows take one column from each of `len` equal strata
  // of [0, cols): distinct and sorted without a sort.
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t r = 0; r < rows; ++r) {
    RowRng rng(o.seed ^ 0x5bd1e995ull, static_cast<std::uint64_t>(r));
    const std::int64_t begin = a.row_offsets[r], len = length[r];
    for (std::int64_t k = 0; k < len; ++k) {
      std::int64_t c;
      if (pattern == SparsePattern::banded) {
        c = std::max<std::int64_t>(0, r - w) + k;
      } else {
        const std::int64_t lo = k * cols / len, hi = (k + 1) * cols / len;  // stratum [lo, hi)
        c = lo + rng.below(hi - lo);
      }
      a.col_indices[begin + k] = static_cast<std::int32_t>(c);
      a.values[begin + k] = static_cast<T>(2.0 * rng.uniform01() - 1.0);
    }
  }
  return a;
}

template <class T>
CsrStats csr_stats(const CsrMatrix<T>& a) {
  CsrStats s;
  s.rows = a.rows;
  s.nnz = a.nnz();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t len = a.row_length(r);
    s.max_row_length = std::max(s.max_row_length, len);
    s.empty_rows += len == 0;
  }
  s.mean_row_length = a.rows ? double(s.nnz) / double(a.rows) : 0.0;
  const std::int64_t step = std::max<std::int64_t>(1, a.rows / 4096);
  double distance = 0;
  std::int64_t counted = 0;
  for (std::int64_t r = 0; r < a.rows; r += step)
    for (std::int64_t j = a.row_offsets[r]; j < a.row_offsets[r + 1]; ++j, ++counted)
      distance += std::fabs(double(a.col_indices[j]) - double(r) * double(a.cols) / double(a.rows));
  s.mean_column_distance = counted ? distance / double(counted) : 0.0;
  return s;
}

namespace {

template <class T>
void run_cpu(const SpmvProblem& p) {
  const auto* values = static_cast<const T*>(p.values);
  const auto* x = static_cast<const T*>(p.x);
  auto* y = static_cast<T*>(p.y);
  if (p.offsets_64bit)
    reference_rows(p.rows, static_cast<const std::int64_t*>(p.row_offsets), p.col_indices, values, x, y);
  else
    reference_rows(p.rows, static_cast<const std::int32_t*>(p.row_offsets), p.col_indices, values, x, y);
}

Registry<SpmvProblem> make_registry() {
  Registry<SpmvProblem> r("spmv");
  r.add(cpu_reference_kernel<SpmvProblem>("every row accumulated in long double, rounded once (OpenMP over rows)",
                                          {DType::f32, DType::f64}, [](const SpmvProblem& p) {
                                            if (p.dtype == DType::f32) run_cpu<float>(p);
                                            else run_cpu<double>(p);
                                          }));
  GEMMKIT_CUDA_PART(spmv_detail::register_cuda_kernels(r);)
  return r;
}

void validate(const SpmvProblem& p) {
  if (p.dtype != DType::f32 && p.dtype != DType::f64)
    fail(ErrorCategory::usage, "spmv runs in f32 or f64, not " + std::string(dtype_name(p.dtype)));
  if (p.rows < 0 || p.cols < 0 || p.nnz < 0)
    fail(ErrorCategory::usage, "spmv: negative size (rows " + std::to_string(p.rows) + ", cols " +
                                   std::to_string(p.cols) + ", nnz " + std::to_string(p.nnz) + ")");
  if (p.cols > std::numeric_limits<std::int32_t>::max())
    fail(ErrorCategory::usage, "spmv: " + std::to_string(p.cols) + " columns do not fit 32-bit column indices");
  if (!p.offsets_64bit && p.nnz > std::numeric_limits<std::int32_t>::max())
    fail(ErrorCategory::usage, "spmv: " + std::to_string(p.nnz) + " nonzeros need 64-bit row offsets");
  if (!p.row_offsets || (p.nnz > 0 && (!p.col_indices || !p.values)) || (p.cols > 0 && !p.x) ||
      (p.rows > 0 && !p.y))
    fail(ErrorCategory::usage, "spmv: null data pointer");
}

// "auto" with statistics: the documented choice; otherwise the name as given.
std::string kernel_name(const Context& ctx, const SpmvProblem& p, std::string_view kernel) {
  if ((kernel.empty() || kernel == "auto") && ctx.backend() == Backend::cuda && p.stats)
    return choose_spmv_kernel(*p.stats);
  return std::string(kernel);
}

}  // namespace

const Registry<SpmvProblem>& spmv_registry() {
  static const Registry<SpmvProblem> registry = make_registry();
  return registry;
}

std::size_t spmv_workspace_bytes(const Context& ctx, const SpmvProblem& problem, std::string_view kernel) {
  validate(problem);
  return chosen_workspace(spmv_registry(), ctx, problem, kernel_name(ctx, problem, kernel));
}

const SpmvKernel& spmv(Context& ctx, const SpmvProblem& problem, Stream stream, std::string_view kernel,
                       Workspace workspace) {
  validate(problem);
  return choose_and_run(spmv_registry(), ctx, problem, stream, kernel_name(ctx, problem, kernel), workspace);
}

int spmv_group_size(double mean_row_length) {
  int g = 2;  // the largest power of two <= mean / 4, within [2, 32]
  while (g < 32 && 2 * g <= mean_row_length / 4) g *= 2;
  return g;
}

std::string choose_spmv_kernel(const CsrStats& s) {
  // Measured on the H200 (docs/spmv.md): a group of lanes per row wins clearly when rows are
  // even and x is read in a narrow window (banded: 121-137% of cuSPARSE in
  // bench/results/2026-11-23_h200_22ce9cc/), where the work is
  // streaming the CSR arrays. When one row is much longer than the mean, row-split kernels
  // serialise it; when columns are scattered, the gathers of x bound every kernel and the
  // merge path's deep, coalesced tile loads do best. Both cases go to merge_path.
  if (s.rows == 0) return "vector_groups";
  const bool uneven = double(s.max_row_length) > 8.0 * std::max(s.mean_row_length, 4.0);
  const bool local = s.mean_column_distance <= 32768.0;
  return !uneven && local ? "vector_groups" : "merge_path";
}

#define GEMMKIT_SPARSE_INSTANTIATE(T)                                                          \
  template void validate_csr<T>(const CsrMatrix<T>&, const std::string&);                      \
  template CsrMatrix<T> csr_from_entries<T>(const SparseEntries&, const std::string&);          \
  template CsrMatrix<T> read_csr<T>(const std::string&);                                       \
  template std::vector<T> spmv_reference<T>(const CsrMatrix<T>&, const std::vector<T>&);        \
  template std::vector<long double> spmv_abs_row_sums<T>(const CsrMatrix<T>&, const std::vector<T>&); \
  template CsrMatrix<T> generate_csr<T>(SparsePattern, const SparseGenOptions&);                \
  template CsrStats csr_stats<T>(const CsrMatrix<T>&);
GEMMKIT_SPARSE_INSTANTIATE(float)
GEMMKIT_SPARSE_INSTANTIATE(double)

bool spmv_cuda_available() { return cuda_device_available(); }

template <class T>
std::vector<T> spmv_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o) {
  GEMMKIT_CUDA_PART(return spmv_detail::run_host_on_device(a, x, o).y;)
  detail::fail_without_cuda();
}

template <class T>
SpmvHostResult<T> spmv_host(const CsrMatrix<T>& a, const std::vector<T>& x, std::optional<Backend> backend,
                            const SpmvRunOptions& o) {
  if (!backend) backend = spmv_cuda_available() ? Backend::cuda : Backend::cpu;
  if (*backend == Backend::cuda) {
    GEMMKIT_CUDA_PART(return spmv_detail::run_host_on_device(a, x, o);)
    detail::fail_without_cuda();
  }
  if (o.kernel != "auto" && o.kernel != "cpu_reference") {
    const SpmvKernel* named = spmv_registry().find(o.kernel);
    fail(ErrorCategory::usage, named ? "spmv: kernel '" + o.kernel + "' runs on the GPU; the CPU backend has one "
                                       "kernel, cpu_reference"
                                     : "spmv: unknown kernel '" + o.kernel + "' (expected " + spmv_registry().names() +
                                           ")" + detail::without_cuda_note());
  }
  return {spmv_reference(a, x), "cpu_reference", Backend::cpu};
}

template <class T>
BenchReport spmv_bench_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& reference,
                            int warmup, int reps, bool tune) {
  GEMMKIT_CUDA_PART(return spmv_detail::bench_on_device(a, x, reference, warmup, reps, tune);)
  detail::fail_without_cuda();
}

template std::vector<float> spmv_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&, const SpmvRunOptions&);
template SpmvHostResult<float> spmv_host<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                                std::optional<Backend>, const SpmvRunOptions&);
template SpmvHostResult<double> spmv_host<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                                  std::optional<Backend>, const SpmvRunOptions&);
template std::vector<double> spmv_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&, const SpmvRunOptions&);
template BenchReport spmv_bench_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                            const std::vector<float>&, int, int, bool);
template BenchReport spmv_bench_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                             const std::vector<double>&, int, int, bool);

}  // namespace gemmkit

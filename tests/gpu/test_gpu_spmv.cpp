// Every SpMV rung (and cuSPARSE) against the long-double CPU reference, row by row within
// |y_i - ref_i| <= (len_i + 1) eps sum_j |a_ij x_j|, on seeded matrices: empty, 1 x 1,
// non-square, empty rows, one very long row, sizes around warp, block and tile boundaries,
// the three benchmark patterns; f32 and f64; 32- and 64-bit row offsets.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gemmkit/sparse.hpp"
#include "gpu/gpu_test_support.hpp"
#include "spmv_test_support.hpp"

using namespace gemmkit;

namespace {

// Rows of the given lengths, columns distinct and sorted (one per equal stratum), values and
// x uniform in [-1, 1).
template <class T>
CsrMatrix<T> matrix_with_lengths(const std::vector<std::int64_t>& lengths, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<T> a;
  a.rows = std::int64_t(lengths.size());
  a.cols = cols;
  for (std::int64_t len : lengths) {
    len = std::min(len, cols);
    for (std::int64_t k = 0; k < len; ++k) {
      const std::int64_t lo = k * cols / len, hi = (k + 1) * cols / len;
      a.col_indices.push_back(std::int32_t(lo + std::int64_t(rng() % std::uint64_t(hi - lo))));
      a.values.push_back(T(value(rng)));
    }
    a.row_offsets.push_back(std::int64_t(a.col_indices.size()));
  }
  validate_csr(a, "test matrix");
  return a;
}

template <class T>
std::vector<T> random_x(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = T(value(rng));
  return x;
}

const std::vector<std::string> kKernels = {"scalar", "vector", "vector_groups", "merge_path",
                                           "cusparse", "cusparse_alg2", "auto"};

// Runs f(kernel name, options, y) for every kernel, offset width and group size.
template <class T, class F>
void for_every_kernel(const CsrMatrix<T>& a, const std::vector<T>& x, F&& f) {
  for (const bool wide : {false, true})
    for (const auto& kernel : kKernels) {
      std::vector<int> groups = {0};
      if (kernel == "vector_groups") groups = {2, 4, 8, 16, 32};
      for (const int g : groups) {
        SpmvRunOptions o;
        o.kernel = kernel;
        o.force_64bit_offsets = wide;
        o.group_size = g;
        f(kernel + (g ? " g" + std::to_string(g) : "") + (wide ? " (64-bit offsets)" : ""), spmv_cuda(a, x, o));
      }
    }
}

template <class T>
void expect_all_kernels_match(const CsrMatrix<T>& a, const std::string& what, std::uint64_t seed = 7) {
  const std::vector<T> x = random_x<T>(a.cols, seed);
  for_every_kernel(a, x, [&](const std::string& kernel, const std::vector<T>& y) {
    ASSERT_TRUE(test::spmv_result_matches(a, x, y)) << what << ": kernel " << kernel;
  });
}

template <class T>
void edge_cases() {
  expect_all_kernels_match(matrix_with_lengths<T>({}, 0, 1), "0 x 0");
  expect_all_kernels_match(matrix_with_lengths<T>({}, 5, 1), "0 x 5");
  expect_all_kernels_match(matrix_with_lengths<T>({0, 0, 0}, 0, 1), "3 x 0");
  expect_all_kernels_match(matrix_with_lengths<T>({1}, 1, 1), "1 x 1");
  expect_all_kernels_match(matrix_with_lengths<T>({0}, 1, 1), "1 x 1 empty");
  expect_all_kernels_match(matrix_with_lengths<T>(std::vector<std::int64_t>(5000, 0), 77, 1), "all rows empty");
  // Non-square both ways.
  expect_all_kernels_match(matrix_with_lengths<T>(std::vector<std::int64_t>(1000, 5), 37, 2), "1000 x 37");
  std::vector<std::int64_t> wide_rows(37);
  for (std::size_t i = 0; i < wide_rows.size(); ++i) wide_rows[i] = std::int64_t(i * 97 % 400);
  expect_all_kernels_match(matrix_with_lengths<T>(wide_rows, 100000, 3), "37 x 100000");
  // One very long row among short and empty ones, at the start, the middle and the end.
  for (const std::int64_t at : {0, 2500, 4999}) {
    std::vector<std::int64_t> lengths(5000);
    for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = std::int64_t(i % 7 == 0 ? 0 : i % 5);
    lengths[std::size_t(at)] = 300000;
    expect_all_kernels_match(matrix_with_lengths<T>(lengths, 400000, 4), "one row of 300000 at " + std::to_string(at));
  }
  // A single long row alone (merge-path tiles all inside one row).
  expect_all_kernels_match(matrix_with_lengths<T>({123457}, 200000, 5), "1 x 200000, one row");
  // Mostly empty: tiles made only of row ends.
  std::vector<std::int64_t> sparse_rows(100000, 0);
  for (std::size_t i = 0; i < sparse_rows.size(); i += 1999) sparse_rows[i] = 3;
  expect_all_kernels_match(matrix_with_lengths<T>(sparse_rows, 100000, 6), "mostly empty");
}

template <class T>
void sizes_around_boundaries() {
  // Rows around warp (32), block (256 threads; 8..128 rows per block for groups) and tile
  // (256 x 7 merge items) boundaries, with random lengths 0..40.
  for (const std::int64_t rows : {2, 31, 32, 33, 63, 127, 128, 129, 255, 256, 257, 1791, 1792, 1793, 4097, 65537}) {
    std::mt19937_64 rng{static_cast<std::uint64_t>(rows)};
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(rows));
    for (auto& len : lengths) len = std::int64_t(rng() % 41);
    expect_all_kernels_match(matrix_with_lengths<T>(lengths, rows + 3, std::uint64_t(rows)),
                             std::to_string(rows) + " rows of 0..40");
  }
}

template <class T>
void benchmark_patterns() {
  SparseGenOptions o;
  o.rows = 300001;  // the planted power-law rows are 2e5 entries and longer (capped at cols)
  for (const SparsePattern p : {SparsePattern::uniform, SparsePattern::banded, SparsePattern::powerlaw})
    expect_all_kernels_match(generate_csr<T>(p, o), sparse_pattern_name(p));
}

}  // namespace

TEST(GpuSpmv, EdgeCasesF32) { SKIP_WITHOUT_DEVICE(); edge_cases<float>(); }
TEST(GpuSpmv, EdgeCasesF64) { SKIP_WITHOUT_DEVICE(); edge_cases<double>(); }
TEST(GpuSpmv, SizesAroundBoundariesF32) { SKIP_WITHOUT_DEVICE(); sizes_around_boundaries<float>(); }
TEST(GpuSpmv, SizesAroundBoundariesF64) { SKIP_WITHOUT_DEVICE(); sizes_around_boundaries<double>(); }
TEST(GpuSpmv, BenchmarkPatternsF32) { SKIP_WITHOUT_DEVICE(); benchmark_patterns<float>(); }
TEST(GpuSpmv, BenchmarkPatternsF64) { SKIP_WITHOUT_DEVICE(); benchmark_patterns<double>(); }

// The row check fails on each planted fault of every kernel's real y (integer-valued data).
template <class T>
void expect_planted_faults_caught() {
  for (const auto& shape : std::vector<std::pair<int, int>>{{40, 33}, {1793, 300}}) {
    const int rows = shape.first, cols = shape.second;
    const CsrMatrix<T> a = test::integer_csr<T>(rows, cols, 12, std::uint64_t(rows));
    const std::vector<T> x = test::integer_vector<T>(cols, 5);
    for_every_kernel(a, x, [&](const std::string& kernel, std::vector<T> y) {
      SCOPED_TRACE(kernel + " " + std::to_string(rows) + " x " + std::to_string(cols));
      const auto faults = test::spmv_faults(a, x, y);
      EXPECT_EQ(test::expect_faults_caught(test::output_bytes(y), [&] { return test::spmv_result_matches(a, x, y); },
                                           faults),
                int(faults.size()));
    });
  }
}

TEST(GpuSpmv, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  expect_planted_faults_caught<float>();
  expect_planted_faults_caught<double>();
}

TEST(GpuSpmv, MismatchedXIsAUsageError) {
  SKIP_WITHOUT_DEVICE();
  const CsrMatrix<float> a = matrix_with_lengths<float>({1, 2}, 4, 1);
  try {
    spmv_cuda(a, std::vector<float>(3, 1.0f));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
  }
}

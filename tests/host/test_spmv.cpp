// The CSR builder, the CPU reference of y = A x and the benchmark generators, against
// independent simple computations (a dense long-double product, exact integer sums).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "gemmkit/device.hpp"
#include "gemmkit/sparse.hpp"
#include "host/io_test_support.hpp"
#include "spmv_test_support.hpp"

using namespace gemmkit;
using gemmkit::test::ScratchDirTest;

namespace {

class SpmvHost : public ScratchDirTest {};

TEST_F(SpmvHost, MatrixMarketDuplicatesSummedAndRowsSorted) {
  const std::string p = write_file("a.mtx",
                                   "%%MatrixMarket matrix coordinate real general\n"
                                   "3 4 6\n"
                                   "2 4 1.5\n1 3 2\n2 1 -1\n1 3 0.25\n3 2 7\n2 4 0.5\n");
  const CsrMatrix<double> a = read_csr<double>(p);
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.cols, 4);
  EXPECT_EQ(a.row_offsets, (std::vector<std::int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(a.col_indices, (std::vector<std::int32_t>{2, 0, 3, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{2.25, -1, 2.0, 7}));
  validate_csr(a, "a");
  const std::vector<double> y = spmv_reference(a, std::vector<double>{1, 2, 3, 4});
  EXPECT_EQ(y, (std::vector<double>{6.75, 7.0, 14}));
}

TEST_F(SpmvHost, SymmetricAndPatternFiles) {
  const std::string p = write_file("s.mtx",
                                   "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                   "3 3 3\n2 1\n3 3\n3 1\n");
  const CsrMatrix<float> a = read_csr<float>(p);
  EXPECT_EQ(a.nnz(), 5);  // (2,1) (1,2) (3,3) (3,1) (1,3)
  EXPECT_EQ(spmv_reference(a, std::vector<float>{1, 10, 100}), (std::vector<float>{110, 1, 101}));
}

TEST_F(SpmvHost, ReferenceEqualsADenseLongDoubleProduct) {
  std::mt19937_64 rng(3);
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {3, 50}, {64, 64}, {200, 17}}) {
    std::vector<std::vector<long double>> dense(rows, std::vector<long double>(cols, 0));
    SparseEntries e;
    e.rows = rows;
    e.cols = cols;
    for (int k = 0; k < rows * cols / 3 + 1; ++k) {  // with duplicates
      const int r = int(rng() % rows), c = int(rng() % cols);
      const double v = double(std::int64_t(rng() % 2001) - 1000) / 64.0;  // exact in double
      e.row.push_back(r);
      e.col.push_back(c);
      e.real_values.push_back(v);
      dense[r][c] += v;
    }
    const CsrMatrix<double> a = csr_from_entries<double>(e, "random");
    validate_csr(a, "random");
    std::vector<double> x(cols);
    for (auto& v : x) v = double(std::int64_t(rng() % 201) - 100) / 8.0;
    const std::vector<double> y = spmv_reference(a, x);
    for (int r = 0; r < rows; ++r) {
      long double want = 0;
      for (int c = 0; c < cols; ++c) want += dense[r][c] * x[c];
      EXPECT_EQ(y[r], static_cast<double>(want)) << rows << "x" << cols << " row " << r;  // exact: small dyadics
    }
  }
}

TEST_F(SpmvHost, ReferenceRoundsOnceInF32) {
  // 1 + 2^-30 - 1 in f32 arithmetic gives 0; the long-double reference gives 2^-30.
  CsrMatrix<float> a;
  a.rows = 1;
  a.cols = 3;
  a.row_offsets = {0, 3};
  a.col_indices = {0, 1, 2};
  a.values = {1.0f, std::ldexp(1.0f, -30), -1.0f};
  EXPECT_EQ(spmv_reference(a, std::vector<float>{1, 1, 1})[0], std::ldexp(1.0f, -30));
  const auto sums = spmv_abs_row_sums(a, std::vector<float>{1, 1, 1});
  EXPECT_EQ(double(sums[0]), 2.0 + std::ldexp(1.0, -30));
}

TEST_F(SpmvHost, EmptyAndDegenerateMatrices) {
  CsrMatrix<double> empty;
  EXPECT_TRUE(spmv_reference(empty, {}).empty());
  CsrMatrix<double> no_cols;
  no_cols.rows = 3;
  no_cols.row_offsets = {0, 0, 0, 0};
  EXPECT_EQ(spmv_reference(no_cols, {}), (std::vector<double>{0, 0, 0}));
  gemmkit::test::expect_error([&] { spmv_reference(no_cols, {1.0}); }, ErrorCategory::usage, "1 entries");
  const CsrStats s = csr_stats(no_cols);
  EXPECT_EQ(s.empty_rows, 3);
  EXPECT_EQ(s.max_row_length, 0);
}

TEST_F(SpmvHost, ValidateCatchesMalformedArrays) {
  CsrMatrix<float> a;
  a.rows = 2;
  a.cols = 3;
  a.row_offsets = {0, 2, 3};
  a.col_indices = {0, 2, 1};
  a.values = {1, 2, 3};
  validate_csr(a, "ok");
  auto bad = a;
  bad.col_indices = {2, 0, 1};
  gemmkit::test::expect_error([&] { validate_csr(bad, "m"); }, ErrorCategory::input, "not strictly increasing");
  bad = a;
  bad.col_indices[2] = 3;
  gemmkit::test::expect_error([&] { validate_csr(bad, "m"); }, ErrorCategory::input, "out of range");
  bad = a;
  bad.row_offsets = {0, 3, 2};
  gemmkit::test::expect_error([&] { validate_csr(bad, "m"); }, ErrorCategory::input, "row_offsets[rows]");
}

TEST_F(SpmvHost, GeneratorsAreSeededAndHaveTheirShapes) {
  SparseGenOptions o;
  o.rows = 300000;
  const auto u = generate_csr<float>(SparsePattern::uniform, o);
  validate_csr(u, "uniform");
  const CsrStats us = csr_stats(u);
  EXPECT_NEAR(us.mean_row_length, 16.0, 0.1);
  EXPECT_LE(us.max_row_length, 24);
  EXPECT_EQ(u.values, generate_csr<float>(SparsePattern::uniform, o).values);  // same seed, same matrix
  o.seed = 2;
  EXPECT_NE(u.col_indices, generate_csr<float>(SparsePattern::uniform, o).col_indices);

  const auto b = generate_csr<double>(SparsePattern::banded, o);
  validate_csr(b, "banded");
  for (std::int64_t r = 0; r < b.rows; r += 997)
    for (std::int64_t j = b.row_offsets[r]; j < b.row_offsets[r + 1]; ++j) EXPECT_LE(std::abs(b.col_indices[j] - r), 8);
  EXPECT_EQ(csr_stats(b).max_row_length, 17);

  const auto p = generate_csr<float>(SparsePattern::powerlaw, o);
  validate_csr(p, "powerlaw");
  std::int64_t heavy = 0;
  for (std::int64_t r = 0; r < p.rows; ++r) heavy += p.row_length(r) > 100000;
  EXPECT_GE(heavy, 2);  // planted rows of 2e5 and more (capped at 300000 columns)
  EXPECT_EQ(choose_spmv_kernel(csr_stats(p)), "merge_path");
  EXPECT_EQ(choose_spmv_kernel(us), "merge_path");  // columns scattered: gathers of x dominate
  EXPECT_EQ(choose_spmv_kernel(csr_stats(b)), "vector_groups");  // even rows, x in a narrow window
  EXPECT_LE(csr_stats(b).mean_column_distance, 8.0);
}

TEST_F(SpmvHost, GroupSizeFollowsTheMeanRowLength) {
  EXPECT_EQ(spmv_group_size(0.5), 2);
  EXPECT_EQ(spmv_group_size(4), 2);
  EXPECT_EQ(spmv_group_size(16), 4);
  EXPECT_EQ(spmv_group_size(17), 4);
  EXPECT_EQ(spmv_group_size(64), 16);
  EXPECT_EQ(spmv_group_size(1000), 32);
  EXPECT_EQ(spmv_registry().find("merge_path") != nullptr, cuda_compiled());  // registered by the CUDA part
  EXPECT_EQ(spmv_registry().find("csr5"), nullptr);
}

// The row check the GPU suite applies to every kernel (spmv_test_support.hpp) passes the CPU
// reference's y and fails each planted fault of it, on integer-valued data.
template <class T>
void expect_spmv_faults_caught() {
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{2, 3}, {40, 33}, {300, 517}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    const CsrMatrix<T> a = gemmkit::test::integer_csr<T>(rows, cols, 12, std::uint64_t(rows));
    const std::vector<T> x = gemmkit::test::integer_vector<T>(cols, 5);
    std::vector<T> y = spmv_reference(a, x);
    const auto faults = gemmkit::test::spmv_faults(a, x, y);
    EXPECT_EQ(gemmkit::test::expect_faults_caught(gemmkit::test::output_bytes(y),
                                                  [&] { return gemmkit::test::spmv_result_matches(a, x, y); }, faults),
              int(faults.size()));
  }
}

TEST_F(SpmvHost, CatchesPlantedFaults) {
  expect_spmv_faults_caught<float>();
  expect_spmv_faults_caught<double>();
}

}  // namespace

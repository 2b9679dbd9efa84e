// Matrix Market reading and writing: round trips, every header variant, symmetry handling,
// and one test per class of malformed file.
#include "host/io_test_support.hpp"

namespace gemmkit::test {
namespace {

class MtxTest : public ScratchDirTest {
 protected:
  // Floats come back as f64 and integers as i64, with the same values.
  template <class T>
  void round_trip(std::int64_t rows, std::int64_t cols, std::int64_t ld = -1) {
    SCOPED_TRACE(std::string(dtype_name(dtype_of<T>)) + " " + std::to_string(rows) + "x" +
                 std::to_string(cols) + " ld " + std::to_string(ld));
    const Matrix<T> original = make_matrix<T>(rows, cols, ld);
    const std::string p = path("m.mtx");
    write_mtx(p, original);
    const AnyMatrix back = read_mtx(p);
    ASSERT_EQ(rows_of(back), rows);
    ASSERT_EQ(cols_of(back), cols);
    if constexpr (std::is_floating_point_v<T>) {
      ASSERT_TRUE(std::holds_alternative<Matrix<double>>(back));
      const auto& m = std::get<Matrix<double>>(back);
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          ASSERT_TRUE(same_value(m(i, j), static_cast<double>(original(i, j))))
              << m(i, j) << " " << original(i, j);
    } else {
      ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(back));
      const auto& m = std::get<Matrix<std::int64_t>>(back);
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) ASSERT_EQ(m(i, j), original(i, j));
    }
  }

  template <class T>
  void round_trip_shapes() {
    round_trip<T>(1, 1);
    round_trip<T>(1, 9);
    round_trip<T>(9, 1);
    round_trip<T>(5, 4, 7);
    round_trip<T>(0, 3);
    round_trip<T>(3, 0);
  }

  Matrix<double> read_real(const std::string& text) {
    const AnyMatrix m = read_mtx(write_file("t.mtx", text));
    EXPECT_TRUE(std::holds_alternative<Matrix<double>>(m));
    return std::get<Matrix<double>>(m);
  }
  Matrix<std::int64_t> read_int(const std::string& text) {
    const AnyMatrix m = read_mtx(write_file("t.mtx", text));
    EXPECT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(m));
    return std::get<Matrix<std::int64_t>>(m);
  }

  // Both readers must reject the file.
  void expect_bad(const std::string& text, const std::string& part) {
    const std::string p = write_file("bad.mtx", text);
    expect_input_error([&] { read_mtx(p); }, p, part);
    expect_input_error([&] { read_mtx_entries(p); }, p, part);
  }
};

TEST_F(MtxTest, RoundTripF64) { round_trip_shapes<double>(); }
TEST_F(MtxTest, RoundTripF32) { round_trip_shapes<float>(); }
TEST_F(MtxTest, RoundTripI32) { round_trip_shapes<std::int32_t>(); }
TEST_F(MtxTest, RoundTripI64) { round_trip_shapes<std::int64_t>(); }

TEST_F(MtxTest, WritesColumnMajorArray) {
  const std::string p = path("w.mtx");
  write_mtx(p, make_matrix<std::int32_t>(2, 3, 5, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read_file(p), "%%MatrixMarket matrix array integer general\n2 3\n1\n4\n2\n5\n3\n6\n");
  write_mtx(p, make_matrix<float>(1, 1, -1, {0.1f}));
  EXPECT_EQ(read_file(p), "%%MatrixMarket matrix array real general\n1 1\n0.10000000149011612\n");
}

// An empty matrix with a huge side writes its size line at once (the fuzzer found the writer
// walking 3e10 empty columns).
TEST_F(MtxTest, EmptyMatrixWithAHugeSideWritesAtOnce) {
  const std::string p = path("e.mtx");
  write_mtx(p, AnyMatrix(Matrix<double>(0, 30370005000)));
  EXPECT_EQ(read_file(p), "%%MatrixMarket matrix array real general\n0 30370005000\n");
}

TEST_F(MtxTest, ReadsCoordinateGeneralWithDuplicates) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "3 4 4\n"
      "1 1 1.5\n"
      "3 4 -2e3\n"
      "% comments between entries are tolerated\n"
      "2 2 .25\n"
      "1 1 +1\n";
  const SparseEntries e = read_mtx_entries(write_file("c.mtx", text));
  EXPECT_EQ(e.rows, 3);
  EXPECT_EQ(e.cols, 4);
  EXPECT_EQ(e.dtype, DType::f64);
  ASSERT_EQ(e.size(), 4u);  // the duplicate (1, 1) is kept
  EXPECT_EQ(e.row, (std::vector<std::int64_t>{0, 2, 1, 0}));
  EXPECT_EQ(e.col, (std::vector<std::int64_t>{0, 3, 1, 0}));
  EXPECT_EQ(e.real_values, (std::vector<double>{1.5, -2000, 0.25, 1}));

  const Matrix<double> m = read_real(text);
  EXPECT_EQ(m(0, 0), 2.5);  // duplicates summed
  EXPECT_EQ(m(2, 3), -2000);
  EXPECT_EQ(m(1, 1), 0.25);
  EXPECT_EQ(m(0, 1), 0);
}

TEST_F(MtxTest, BannerIsCaseInsensitive) {
  const Matrix<double> m =
      read_real("%%matrixmarket MATRIX Coordinate DOUBLE General\n1 1 1\n1 1 7\n");
  EXPECT_EQ(m(0, 0), 7);
}

TEST_F(MtxTest, MirrorsSymmetricCoordinate) {
  const auto m = read_int(
      "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 5\n3 1 -2\n3 2 "
      "9223372036854775807\n");
  EXPECT_EQ(m(0, 0), 5);
  EXPECT_EQ(m(2, 0), -2);
  EXPECT_EQ(m(0, 2), -2);
  EXPECT_EQ(m(2, 1), 9223372036854775807);
  EXPECT_EQ(m(1, 2), 9223372036854775807);
  EXPECT_EQ(m(1, 1), 0);
  const SparseEntries e = read_mtx_entries(path("t.mtx"));
  EXPECT_EQ(e.size(), 5u);  // the diagonal entry is not mirrored
  EXPECT_EQ(e.dtype, DType::i64);
}

TEST_F(MtxTest, NegatesSkewSymmetricMirror) {
  const Matrix<double> m =
      read_real("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n");
  EXPECT_EQ(m(1, 0), 1.5);
  EXPECT_EQ(m(0, 1), -1.5);
  EXPECT_EQ(m(2, 1), -4);
  EXPECT_EQ(m(1, 2), 4);
  EXPECT_EQ(m(0, 0), 0);
}

TEST_F(MtxTest, PatternEntriesAreOnes) {
  const auto m = read_int("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  EXPECT_EQ(m(0, 0), 1);
  EXPECT_EQ(m(1, 0), 1);
  EXPECT_EQ(m(0, 1), 1);
  EXPECT_EQ(m(1, 1), 0);
}

TEST_F(MtxTest, ArrayIsColumnMajor) {
  const Matrix<double> m =
      read_real("%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(m(0, 0), 1);
  EXPECT_EQ(m(1, 0), 2);
  EXPECT_EQ(m(0, 1), 3);
  EXPECT_EQ(m(1, 2), 6);
}

TEST_F(MtxTest, SymmetricArrayStoresLowerTriangle) {
  // Columns of the lower triangle: (1 2 3), (4 5), (6).
  const auto m = read_int("%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  const std::int64_t want[3][3] = {{1, 2, 3}, {2, 4, 5}, {3, 5, 6}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), want[i][j]) << i << "," << j;
}

TEST_F(MtxTest, SkewArrayStoresStrictLowerTriangle) {
  const Matrix<double> m =
      read_real("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  const double want[3][3] = {{0, -1, -2}, {1, 0, -3}, {2, 3, 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(m(i, j), want[i][j]) << i << "," << j;
}

TEST_F(MtxTest, RejectsIndexOutOfRange) {
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n",
             "line 3: row index '3' is outside 1..2");
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1.0\n",
             "column index '0' is outside 1..2");
}

TEST_F(MtxTest, RejectsFewerEntriesThanPromised) {
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 2\n",
             "found 2 entries, but the size line (line 2) promises 3");
}

TEST_F(MtxTest, RejectsMoreEntriesThanPromised) {
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n",
             "line 4: more entries than");
}

TEST_F(MtxTest, RejectsOverflowingSize) {
  const std::string p = write_file(
      "big.mtx", "%%MatrixMarket matrix coordinate real general\n4294967296 4294967296 1\n1 1 1\n");
  expect_input_error([&] { read_mtx(p); }, p, "overflow");
  // A sparse reader needs no dense storage, so a huge but honest coordinate file is fine.
  EXPECT_EQ(read_mtx_entries(p).size(), 1u);
  expect_bad("%%MatrixMarket matrix array real general\n4294967296 4294967296\n1\n", "overflow");
  expect_bad("%%MatrixMarket matrix coordinate real general\n99999999999999999999 2 1\n",
             "does not fit");
  const std::string empty =
      write_file("empty.mtx", "%%MatrixMarket matrix array real general\n100000000000 0\n");
  // No elements: an empty matrix stores nothing, however many rows it claims.
  const AnyMatrix m = read_mtx(empty);
  EXPECT_EQ(rows_of(m), 100000000000);
  EXPECT_EQ(cols_of(m), 0);
}

TEST_F(MtxTest, RejectsAbsurdEntryCount) {
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 99999999999999999999\n",
             "entry count '99999999999999999999' does not fit");
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 1000000000000\n1 1 1\n",
             "exceeds the 4 positions");
  expect_bad("%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n", "exceeds the 6 positions");
  expect_bad("%%MatrixMarket matrix coordinate real general\n2 2 -1\n",
             "is not a non-negative integer");
}

TEST_F(MtxTest, RejectsShortArray) {
  expect_bad("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n",
             "found 5 values, but a 2x3 array needs 6");
  expect_bad("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n", "needs 6");
  expect_bad("%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n",
             "line 5: more values than the 2");
  // Refused from the file size alone, before the 4 x 10^16 matrix is allocated.
  expect_bad("%%MatrixMarket matrix array real general\n4 10000000000000000\n1\n",
             "line 2: 40000000000000000 values cannot fit in the rest of a");
}

TEST_F(MtxTest, RejectsComplexAndHermitian) {
  expect_bad("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
             "complex matrices are not supported");
  expect_bad("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
             "hermitian matrices are not supported");
}

TEST_F(MtxTest, RejectsBadBanner) {
  expect_bad("1 1 1\n1 1 1\n", "line 1: not a Matrix Market file");
  expect_bad("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", "found 3");
  expect_bad("%%MatrixMarket vector coordinate real general\n", "unsupported object 'vector'");
  expect_bad("%%MatrixMarket matrix dense real general\n", "unknown format 'dense'");
  expect_bad("%%MatrixMarket matrix array pattern general\n1 1\n",
             "pattern matrix must use the coordinate format");
  expect_bad("", "the file is empty");
  expect_bad("%%MatrixMarket matrix array real general\n% only comments\n",
             "ends before the size line");
}

TEST_F(MtxTest, RejectsNonNumericValue) {
  expect_bad("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 abc\n",
             "line 3: value 'abc' is not a number");
  expect_bad("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
             "value '1.5' is not an integer");
  expect_bad("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 9223372036854775808\n",
             "does not fit");
  expect_bad("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e999\n",
             "out of the range of a double");
  expect_bad("%%MatrixMarket matrix coordinate real general\n1 1 1\nx 1 1\n",
             "row index 'x' is not an integer");
  expect_bad("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1\n",
             "an entry needs 3 fields");
}

TEST_F(MtxTest, RejectsSymmetricEntryAboveDiagonal) {
  expect_bad("%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 3 1\n",
             "line 3: entry (1, 3) lies above the diagonal");
  expect_bad("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n",
             "entry (2, 2) is on the diagonal");
  expect_bad("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "must be square");
}

TEST_F(MtxTest, RejectsOverflowingSums) {
  const std::string p = write_file(
      "sum.mtx",
      "%%MatrixMarket matrix coordinate integer general\n2 1 2\n1 1 9223372036854775807\n1 1 1\n");
  expect_input_error([&] { read_mtx(p); }, p, "line 4: the sum of the entries at (1, 1) overflows");
  expect_bad(
      "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -9223372036854775808\n",
      "does not fit");
}

}  // namespace
}  // namespace gemmkit::test

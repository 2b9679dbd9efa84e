// CSV/text reading and writing: round trips, separators and comments, dtype inference, and
// one test per class of malformed file.
#include "host/io_test_support.hpp"

namespace gemmkit::test {
namespace {

class CsvTest : public ScratchDirTest {
 protected:
  template <class T>
  void round_trip(std::int64_t rows, std::int64_t cols, std::int64_t ld = -1,
                  const char* name = "m.csv") {
    SCOPED_TRACE(std::string(dtype_name(dtype_of<T>)) + " " + std::to_string(rows) + "x" +
                 std::to_string(cols) + " ld " + std::to_string(ld));
    const Matrix<T> original = make_matrix<T>(rows, cols, ld);
    const std::string p = path(name);
    write_csv(p, original);
    const AnyMatrix back = read_csv(p);
    ASSERT_EQ(rows_of(back), rows);
    ASSERT_EQ(cols_of(back), cols);
    // f64 and i64 as the text says, f32 and i32 as their "# dtype:" header says.
    ASSERT_TRUE(std::holds_alternative<Matrix<T>>(back));
    const auto& m = std::get<Matrix<T>>(back);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        if constexpr (std::is_floating_point_v<T>)
          ASSERT_TRUE(same_value(m(i, j), original(i, j))) << m(i, j) << " " << original(i, j);
        else
          ASSERT_EQ(m(i, j), original(i, j));
      }
  }

  template <class T>
  void round_trip_shapes() {
    round_trip<T>(1, 1);
    round_trip<T>(1, 9);
    round_trip<T>(9, 1);
    round_trip<T>(5, 4, 7);
    round_trip<T>(4, 5, -1, "m.txt");
  }

  AnyMatrix read_text(const std::string& text) { return read_csv(write_file("t.csv", text)); }

  void expect_bad(const std::string& text, const std::string& part) {
    const std::string p = write_file("bad.csv", text);
    expect_input_error([&] { read_csv(p); }, p, part);
  }
};

TEST_F(CsvTest, RoundTripF64) { round_trip_shapes<double>(); }
TEST_F(CsvTest, RoundTripF32) { round_trip_shapes<float>(); }
TEST_F(CsvTest, RoundTripI32) { round_trip_shapes<std::int32_t>(); }
TEST_F(CsvTest, RoundTripI64) { round_trip_shapes<std::int64_t>(); }

TEST_F(CsvTest, WholeFloatsStayFloats) {
  // Written with a '.', so the file reads back as f64, not i64, and -0.0 keeps its sign.
  const std::string p = path("w.csv");
  write_csv(p, make_matrix<double>(2, 2, -1, {1.0, -0.0, 1e21, 0.5}));
  EXPECT_EQ(read_file(p), "1.0,-0.0\n1e+21,0.5\n");
  const AnyMatrix back = read_csv(p);
  ASSERT_TRUE(std::holds_alternative<Matrix<double>>(back));
  EXPECT_TRUE(std::signbit(std::get<Matrix<double>>(back)(0, 1)));
}

TEST_F(CsvTest, WritesIntegersPlainly) {
  const std::string p = path("w.csv");
  write_csv(p, make_matrix<std::int32_t>(2, 3, 4, {1, -2, 3, 4, 5, 2147483647}));
  EXPECT_EQ(read_file(p), "# dtype: i32\n1,-2,3\n4,5,2147483647\n");
}

TEST_F(CsvTest, RefusesToWriteEmptyMatrix) {
  const std::string p = path("e.csv");
  expect_error([&] { write_csv(p, Matrix<double>(0, 3)); }, ErrorCategory::usage,
               "empty 0x3 matrix");
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_F(CsvTest, SeparatorsCommentsAndBlankLines) {
  const AnyMatrix m = read_text(
      "# a header comment\n"
      "\n"
      "1, 2,3\n"
      "  4\t5   6   # trailing comment\r\n"
      "7 ,8 , 9\n"
      "   \n");
  ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(m));
  const auto& ints = std::get<Matrix<std::int64_t>>(m);
  ASSERT_EQ(ints.rows(), 3);
  ASSERT_EQ(ints.cols(), 3);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(ints(k / 3, k % 3), k + 1);
}

TEST_F(CsvTest, AnyRealValueMakesTheFileF64) {
  const AnyMatrix m = read_text("1,2\n3,4.5\n");
  ASSERT_TRUE(std::holds_alternative<Matrix<double>>(m));
  EXPECT_EQ(std::get<Matrix<double>>(m)(0, 0), 1.0);
  EXPECT_EQ(std::get<Matrix<double>>(m)(1, 1), 4.5);
  // In a file of reals an integer literal past int64 is read as the nearest double.
  const AnyMatrix big = read_text("1.0 99999999999999999999\n");
  ASSERT_TRUE(std::holds_alternative<Matrix<double>>(big));
  EXPECT_EQ(std::get<Matrix<double>>(big)(0, 1), 1e20);
  const AnyMatrix extremes = read_text("9223372036854775807 -9223372036854775808 +5\n");
  ASSERT_TRUE(std::holds_alternative<Matrix<std::int64_t>>(extremes));
  EXPECT_EQ(std::get<Matrix<std::int64_t>>(extremes)(0, 0),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(std::get<Matrix<std::int64_t>>(extremes)(0, 2), 5);
}

TEST_F(CsvTest, AcceptsInfinityAndNan) {
  const AnyMatrix m = read_text("nan, INF, -inf, Infinity, NaN, 1e-300\n");
  const auto& d = std::get<Matrix<double>>(m);
  EXPECT_TRUE(std::isnan(d(0, 0)));
  EXPECT_EQ(d(0, 1), std::numeric_limits<double>::infinity());
  EXPECT_EQ(d(0, 2), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(d(0, 3), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d(0, 4)));
  EXPECT_EQ(d(0, 5), 1e-300);
}

TEST_F(CsvTest, RejectsRaggedRows) {
  expect_bad("1,2,3\n# comment\n4,5\n",
             "line 3: ragged rows: this row has 2 values, but line 1 has 3");
}

TEST_F(CsvTest, RejectsNonNumericToken) {
  expect_bad("1,2\n3, abc\n", "line 2, column 4: 'abc' is not a number");
  expect_bad("1,2\n0x10,3\n", "'0x10' is not a number");
  expect_bad("1e999\n", "out of the range of a double");
  expect_bad("1,,2\n", "line 1, column 3: empty value");
  expect_bad("1,2,\n", "empty value");
  expect_bad(",1\n", "empty value");
}

TEST_F(CsvTest, RejectsEmptyFile) {
  expect_bad("", "no data");
  expect_bad("# nothing but comments\n\n   \n", "no data");
}

}  // namespace
}  // namespace gemmkit::test

// Exercise matrices (generate.hpp, gemmkit gen --kind): entries against formulas computed
// here independently, the identities the exercises rely on, and where each dtype stops.
#include <gtest/gtest.h>

#include <cmath>

#include "gemmkit/generate.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/verify.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

// binom(n, k) by the multiplicative formula in long double (exact for the small n used).
long double binom(std::int64_t n, std::int64_t k) {
  if (k < 0 || k > n) return 0;
  long double r = 1;
  for (std::int64_t q = 1; q <= k; ++q) r = r * static_cast<long double>(n - k + q) / static_cast<long double>(q);
  return std::round(r);
}

template <class T>
Matrix<T> make(MatrixKind kind, std::int64_t rows, std::int64_t cols, DType dtype = dtype_of<T>) {
  return std::get<Matrix<T>>(generate_matrix(kind, rows, cols, dtype));
}

// The exact product of two int64 matrices, in 128-bit sums narrowed after a range check.
Matrix<std::int64_t> product(const Matrix<std::int64_t>& a, const Matrix<std::int64_t>& b) {
  Matrix<std::int64_t> c(a.rows(), b.cols());
  for (std::int64_t i = 0; i < a.rows(); ++i)
    for (std::int64_t j = 0; j < b.cols(); ++j) {
      int128_t s = 0;
      for (std::int64_t q = 0; q < a.cols(); ++q) s += static_cast<int128_t>(a(i, q)) * b(q, j);
      EXPECT_TRUE(s >= INT64_MIN && s <= INT64_MAX);
      c(i, j) = static_cast<std::int64_t>(s);
    }
  return c;
}

TEST(Generate, PascalEntriesAreBinomials) {
  const auto l = make<std::int64_t>(MatrixKind::pascal, 30, 25);
  const auto u = make<std::int64_t>(MatrixKind::pascal_upper, 25, 30);
  const auto inv = make<std::int64_t>(MatrixKind::pascal_inverse, 30, 30);
  const auto s = make<std::int64_t>(MatrixKind::pascal_symmetric, 17, 20);
  for (std::int64_t i = 0; i < 30; ++i)
    for (std::int64_t j = 0; j < 25; ++j) {
      ASSERT_EQ(static_cast<long double>(l(i, j)), binom(i, j)) << i << ", " << j;
      ASSERT_EQ(static_cast<long double>(u(j, i)), binom(i, j)) << i << ", " << j;
      ASSERT_EQ(static_cast<long double>(inv(i, j)), ((i - j) % 2 ? -1 : 1) * binom(i, j));
    }
  for (std::int64_t i = 0; i < 17; ++i)
    for (std::int64_t j = 0; j < 20; ++j) ASSERT_EQ(static_cast<long double>(s(i, j)), binom(i + j, i));
}

TEST(Generate, PascalIdentitiesHoldExactlyUpToTheI64Limit) {
  // L L^-1 = I at the largest n whose entries fit i64; L L^T = S where S fits (n = 34).
  const auto l = make<std::int64_t>(MatrixKind::pascal, 67, 67);
  const auto inv = make<std::int64_t>(MatrixKind::pascal_inverse, 67, 67);
  const auto id = product(l, inv);
  for (std::int64_t i = 0; i < 67; ++i)
    for (std::int64_t j = 0; j < 67; ++j) ASSERT_EQ(id(i, j), i == j) << i << ", " << j;
  const auto l34 = make<std::int64_t>(MatrixKind::pascal, 34, 34);
  const auto s = make<std::int64_t>(MatrixKind::pascal_symmetric, 34, 34);
  const auto llt = product(l34, make<std::int64_t>(MatrixKind::pascal_upper, 34, 34));
  for (std::int64_t i = 0; i < 34; ++i)
    for (std::int64_t j = 0; j < 34; ++j) ASSERT_EQ(llt(i, j), s(i, j));
}

// The largest n accepted and the first refused, per dtype: the first entry each cannot hold
// exactly (binom(34, 17) > 2^31 - 1; binom(57, 25) is odd and > 2^53; binom(67, 30) > 2^63 - 1;
// binom(14, 6) = 3003 needs 12 significant bits; bf16's 8 bits stop at binom(12, 4) = 495).
TEST(Generate, EachDtypeTakesPascalUpToItsLimitAndRefusesBeyond) {
  struct Case {
    DType dtype;
    MatrixKind kind;
    std::int64_t largest;
    const char* entry;
  };
  const Case cases[] = {
      {DType::i32, MatrixKind::pascal, 34, "entry (34, 16) is 2203961430"},
      {DType::i64, MatrixKind::pascal, 67, "entry (67, 30) is 9989690752182277136"},
      {DType::i64, MatrixKind::pascal_inverse, 67, "is -9989690752182277136"},
      {DType::f64, MatrixKind::pascal, 57, "entry (57, 25) is 9929472283517787"},
      {DType::f32, MatrixKind::pascal, 28, "entry (28, 12) is 30421755"},
      {DType::f16, MatrixKind::pascal, 14, "entry (14, 6) is 3003"},
      {DType::tf32, MatrixKind::pascal, 14, "entry (14, 6) is 3003"},
      {DType::bf16, MatrixKind::pascal, 12, "entry (12, 4) is 495"},
      {DType::i32, MatrixKind::pascal_symmetric, 17, "pascal-symmetric"},
      {DType::i64, MatrixKind::pascal_symmetric, 34, "pascal-symmetric"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " " + std::string(matrix_kind_info(c.kind).name));
    EXPECT_NO_THROW(generate_matrix(c.kind, c.largest, c.largest, c.dtype));
    try {
      generate_matrix(c.kind, c.largest + 1, c.largest + 1, c.dtype);
      ADD_FAILURE() << "n = " << c.largest + 1 << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);  // bad input, exit 2 (issue 39)
      const std::string what = e.what(), size = std::to_string(c.largest);
      EXPECT_NE(what.find(c.entry), std::string::npos) << what;
      EXPECT_NE(what.find("is " + size + " x " + size), std::string::npos) << what;
    }
  }
}

TEST(Generate, ExactF32PascalIsTheI64OneConverted) {
  const auto l32 = make<float>(MatrixKind::pascal, 28, 28);
  const auto l64 = make<std::int64_t>(MatrixKind::pascal, 28, 28);
  for (std::int64_t i = 0; i < 28; ++i)
    for (std::int64_t j = 0; j < 28; ++j) ASSERT_EQ(static_cast<std::int64_t>(l32(i, j)), l64(i, j));
}

TEST(Generate, SinCosIdentityOnesIndex) {
  const auto s = make<double>(MatrixKind::sin_rows, 16, 5);
  const auto c = make<float>(MatrixKind::cos_cols, 4, 16);
  for (std::int64_t i = 0; i < 16; ++i) {
    for (std::int64_t j = 0; j < 5; ++j) ASSERT_EQ(s(i, j), std::sin(double(i)));
    for (std::int64_t r = 0; r < 4; ++r) ASSERT_EQ(c(r, i), static_cast<float>(std::cos(double(i))));
  }
  const auto id = make<std::int32_t>(MatrixKind::identity, 3, 4);
  const auto ones = make<Half>(MatrixKind::ones, 2, 2);
  const auto idx = make<std::int32_t>(MatrixKind::index, 3, 4);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(id(i, j), i == j ? 1 : 0);
      EXPECT_EQ(idx(i, j), i * 4 + j);
    }
  EXPECT_EQ(static_cast<double>(ones(1, 1)), 1.0);
  // 45^2 - 1 = 2024 fits f16's 11 bits; 46^2 - 1 = 2115 passes 2048 at entry 2049.
  EXPECT_NO_THROW(generate_matrix(MatrixKind::index, 45, 45, DType::f16));
  EXPECT_THROW(generate_matrix(MatrixKind::index, 46, 46, DType::f16), Error);
}

TEST(Generate, RefusesWhatItCannotMake) {
  EXPECT_THROW(generate_matrix(MatrixKind::sin_rows, 3, 3, DType::i32), Error);
  EXPECT_THROW(generate_matrix(MatrixKind::random, 3, 3, DType::f32), Error);
  EXPECT_THROW(generate_matrix(MatrixKind::pascal, 0, 3, DType::f32), Error);
  EXPECT_EQ(parse_matrix_kind("pascal-symmetric"), MatrixKind::pascal_symmetric);
  EXPECT_FALSE(parse_matrix_kind("pascals"));
  for (const MatrixKindInfo& k : matrix_kinds()) EXPECT_EQ(parse_matrix_kind(k.name), k.kind);
}

class GenKindCli : public test::CliTest {};

TEST_F(GenKindCli, WritesExactlyOrNothing) {
  const test::CliResult ok = run("gen 5 5 --kind pascal --dtype i64 -o " + path("l.csv"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(read_file(path("l.csv")), "1,0,0,0,0\n1,1,0,0,0\n1,2,1,0,0\n1,3,3,1,0\n1,4,6,4,1\n");
  const test::CliResult big = run("gen 68 68 --kind pascal --dtype i64 -o " + path("big.npy"));
  expect_error(big, 2, "the largest square pascal exact in i64 is 67 x 67");  // bad input (issue 39)
  EXPECT_FALSE(std::filesystem::exists(path("big.npy")));
  expect_error(run("gen 3 3 --kind pascal --seed 4 -o " + path("s.npy")), 2, "--seed applies to --kind random only");
  expect_error(run("gen 3 3 --kind pascals -o " + path("s.npy")), 2, "unknown --kind 'pascals'");
  expect_error(run("gen 3 3 --kind sin --dtype i32 -o " + path("s.npy")), 2, "choose a floating dtype");
}

}  // namespace
}  // namespace gemmkit

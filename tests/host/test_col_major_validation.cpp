// Leading-dimension errors of a column-major problem name the caller's own argument: the
// row-major form the library runs swaps A and B, and its lda is the caller's ldb.
#include <gtest/gtest.h>

#include <string>

#include "gemmkit/gemm.hpp"

using namespace gemmkit;

namespace {

// A column-major 3x3x4 product: A is 3x4 (lda >= 3), B 4x3 (ldb >= 4), C 3x3 (ldc >= 3).
GemmProblem col_major_problem() {
  static double x[16];
  GemmProblem p;
  p.dtype = DType::f64;
  p.layout = Layout::col_major;
  p.m = 3;
  p.n = 3;
  p.k = 4;
  p.a = x;
  p.lda = 3;
  p.b = x;
  p.ldb = 4;
  p.c = x;
  p.ldc = 3;
  return p;
}

std::string message_of(const GemmProblem& p) {
  try {
    validate(p);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(ColMajorValidation, LeadingDimensionErrorsNameTheCallersArgument) {
  EXPECT_NO_THROW(validate(col_major_problem()));
  GemmProblem p = col_major_problem();
  p.lda = 2;
  EXPECT_NE(message_of(p).find("lda 2 < stored height of A 3"), std::string::npos) << message_of(p);
  p = col_major_problem();
  p.ldb = 3;
  EXPECT_NE(message_of(p).find("ldb 3 < stored height of B 4"), std::string::npos) << message_of(p);
  p = col_major_problem();
  p.trans_b = true;  // B stored 3x4: ldb >= 3 now
  p.ldb = 3;
  EXPECT_NO_THROW(validate(p));
  p.ldb = 2;
  EXPECT_NE(message_of(p).find("ldb 2 < stored height of B 3"), std::string::npos) << message_of(p);
  p = col_major_problem();
  p.ldc = 2;
  EXPECT_NE(message_of(p).find("ldc 2 < height of C 3"), std::string::npos) << message_of(p);
  // Row-major keeps its words.
  p = col_major_problem();
  p.layout = Layout::row_major;
  p.lda = 3;  // A 3x4 row-major needs lda >= 4
  EXPECT_NE(message_of(p).find("lda 3 < stored width of A 4"), std::string::npos) << message_of(p);
}

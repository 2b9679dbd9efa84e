// Transpose on the CPU backend: the reference entry against the definition on every dtype
// size, with padded leading dimensions and empty sides; validation; the registry and the
// catalogue; explain's refusals without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemmkit/catalogue.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/transpose.hpp"

using namespace gemmkit;

namespace {

// A rows x cols matrix of `dtype` with leading dimension ld, random bytes in every element
// (padding included, so a kernel that writes padding or reads the wrong element shows).
std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

void expect_usage_error(const TransposeProblem& p, const std::string& part) {
  try {
    Context ctx(Backend::cpu);
    transpose(ctx, p, nullptr);
    ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(TransposeCpu, EveryDtypeSizeAndPaddedLeadingDimensions) {
  Context ctx(Backend::cpu);
  struct Shape { std::int64_t rows, cols, lda_pad, ldb_pad; };
  for (DType dtype : {DType::i8, DType::f16, DType::f32, DType::f64, DType::i64}) {
    const std::size_t size = dtype_size(dtype);
    for (const Shape s : {Shape{1, 1, 0, 0}, Shape{1, 37, 0, 3}, Shape{37, 1, 5, 0}, Shape{33, 65, 2, 7},
                          Shape{64, 64, 0, 0}, Shape{5, 0, 0, 0}, Shape{0, 5, 0, 0}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
      const std::int64_t lda = s.cols + s.lda_pad, ldb = s.rows + s.ldb_pad;
      const auto a = random_bytes(std::size_t(std::max<std::int64_t>(s.rows * lda, 1)) * size, 7 + s.rows);
      auto b = random_bytes(std::size_t(std::max<std::int64_t>(s.cols * ldb, 1)) * size, 11 + s.cols);
      const auto before = b;
      const TransposeProblem p{dtype, s.rows, s.cols, a.data(), lda, b.data(), ldb};
      EXPECT_EQ(transpose(ctx, p, nullptr).name, "cpu_reference");
      EXPECT_EQ(transpose_workspace_bytes(ctx, p), 0u);
      for (std::int64_t j = 0; j < s.cols; ++j)
        for (std::int64_t i = 0; i < ldb; ++i) {
          const unsigned char* got = b.data() + std::size_t(j * ldb + i) * size;
          const unsigned char* want = i < s.rows ? a.data() + std::size_t(i * lda + j) * size
                                                 : before.data() + std::size_t(j * ldb + i) * size;  // padding kept
          ASSERT_EQ(std::memcmp(got, want, size), 0) << "B(" << j << ", " << i << ")";
        }
    }
  }
}

TEST(TransposeCpu, ValidationNamesWhatIsWrong) {
  std::vector<float> a(12), b(12);
  const TransposeProblem ok{DType::f32, 3, 4, a.data(), 4, b.data(), 3};
  TransposeProblem p = ok;
  p.rows = -1;
  expect_usage_error(p, "negative size");
  p = ok, p.lda = 3;
  expect_usage_error(p, "lda 3 is less than A's 4 columns");
  p = ok, p.ldb = 2;
  expect_usage_error(p, "ldb 2 is less than B's 3 columns");
  p = ok, p.a = nullptr;
  expect_usage_error(p, "null data pointer");
  p = ok, p.b = a.data() + 2;  // B's span starts inside A's
  expect_usage_error(p, "overlap");
  p = ok, p.rows = std::int64_t(1) << 40;
  expect_usage_error(p, "2^40");
  p = ok, p.lda = std::int64_t(1) << 62;  // (rows - 1) * lda overflows int64: refused, not wrapped
  expect_usage_error(p, "span more than 2^62 bytes");
  // Empty sides need no operands at all.
  Context ctx(Backend::cpu);
  EXPECT_NO_THROW(transpose(ctx, TransposeProblem{DType::f32, 0, 4, nullptr, 0, nullptr, 0}, nullptr));
}

TEST(TransposeRegistry, RungsInOrderAndInTheCatalogue) {
  const auto& entries = transpose_registry().entries();
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.front().name, "cpu_reference");
  std::vector<std::string> cuda;
  for (const auto& e : entries)
    if (e.backend == Backend::cuda) cuda.push_back(e.name);
  // The CUDA part registers its rungs only in a build that compiles it.
  if (cuda_compiled())
    EXPECT_EQ(cuda, (std::vector<std::string>{"transpose_naive", "transpose_shared_tile", "transpose_padded_tile"}));
  else
    EXPECT_TRUE(cuda.empty());
  EXPECT_EQ(catalogue("transpose").size(), entries.size());
  EXPECT_EQ(find_operation("transpose").shape_sizes, 2);
}

TEST(TransposeRegistry, ExplainRefusesTheCpuEntryAndUnknownNames) {
  ExplainRequest r;
  r.kernel = "cpu_reference", r.m = 100, r.n = 70;
  try {
    explain_operation("transpose", r);
    ADD_FAILURE() << "explained a CPU kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
  r.kernel = "transpose_diagonal";
  try {
    explain_operation("transpose", r);
    ADD_FAILURE() << "explained an unknown kernel";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown transpose kernel 'transpose_diagonal'"), std::string::npos) << e.what();
  }
}

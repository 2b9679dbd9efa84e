// GEMM plans on the CPU context (host pointers): made once, run on several operand sets with
// the results of gemm(); plans that cannot run say why; operands of another problem, or that
// the plan's kernel cannot take, are refused before anything runs. Integer-valued data keeps
// every product exact, so results are compared for equality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/plan.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {
namespace {

template <class T>
std::vector<T> integers(std::size_t count, std::uint64_t seed) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = T(std::int64_t((i * 2654435761u + seed * 40503u) % 19) - 9);
  return v;
}

// A row-major f64 problem m x n x k with padded leading dimensions, pointers unset.
GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::f64) {
  GemmProblem p;
  p.dtype = dtype;
  p.m = m, p.n = n, p.k = k;
  p.lda = k + 3, p.ldb = n + 1, p.ldc = n + 2;
  return p;
}

template <class T>
struct Operands {
  std::vector<T> a, b, c;
  Operands(const GemmProblem& p, std::uint64_t seed)
      : a(integers<T>(std::size_t(p.a_span()), seed)), b(integers<T>(std::size_t(p.b_span()), seed + 1)),
        c(integers<T>(std::size_t(p.c_span()), seed + 2)) {}
  GemmProblem on(GemmProblem p) {
    p.a = a.data(), p.b = b.data(), p.c = c.data();
    return p;
  }
};

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(GemmPlan, MadeOnceRunsEveryOperandSetAsGemmDoes) {
  Context ctx(Backend::cpu);
  GemmProblem p = shape(37, 29, 53);
  p.alpha = 2, p.beta = -1;
  const GemmPlan plan(ctx, p);  // planned before any operand exists
  ASSERT_TRUE(plan.can_run()) << plan.why_not();
  EXPECT_TRUE(plan.why_not().empty());
  EXPECT_EQ(plan.workspace_bytes(), 0u);
  for (std::uint64_t seed : {1, 2, 3}) {
    Operands<double> by_plan(p, seed), by_gemm(p, seed);
    GemmProblem run = by_plan.on(p);
    run.alpha = double(seed), run.beta = seed == 2 ? 0.0 : 1.0;  // alpha and beta may change
    plan.run(run);
    GemmProblem direct = by_gemm.on(p);
    direct.alpha = run.alpha, direct.beta = run.beta;
    const KernelEntry& ran = gemm(ctx, direct);
    EXPECT_EQ(ran.name, plan.kernel().name);
    EXPECT_EQ(by_plan.c, by_gemm.c) << "seed " << seed;
    EXPECT_NE(by_plan.c, Operands<double>(p, seed).c) << "the run wrote nothing";
  }
}

TEST(GemmPlan, ColumnMajorBatchedAndNamedKernel) {
  Context ctx(Backend::cpu);
  GemmProblem p = shape(9, 11, 7, DType::f32);
  p.layout = Layout::col_major;
  p.trans_a = true;
  p.lda = 7 + 2, p.ldb = 7 + 1, p.ldc = 9 + 4;  // col-major: A^T stored 7 x 9
  p.batch = 3;
  p.stride_a = 9 * p.lda, p.stride_b = 11 * p.ldb, p.stride_c = 11 * p.ldc + 5;
  const GemmPlan plan(ctx, p, {.kernel = "cpu_naive"});
  ASSERT_TRUE(plan.can_run()) << plan.why_not();
  EXPECT_EQ(plan.kernel().name, "cpu_naive");
  Operands<float> by_plan(p, 7), by_gemm(p, 7);
  plan.run(by_plan.on(p));
  gemm(ctx, by_gemm.on(p), nullptr, {.kernel = "cpu_blocked"});
  for (std::size_t i = 0; i < by_plan.c.size(); ++i)
    ASSERT_EQ(by_plan.c[i], by_gemm.c[i]) << "element " << i << " of " << by_plan.c.size();
}

TEST(GemmPlan, APlanThatCannotRunSaysWhyAndRunsNothing) {
  Context ctx(Backend::cpu);
  const GemmProblem p = shape(8, 8, 8, DType::i32);
  // OpenBLAS takes floating point only: the plan is made, and cannot run.
  const GemmPlan plan(ctx, p, {.kernel = "cpu_openblas"});
  EXPECT_FALSE(plan.can_run());
  EXPECT_NE(plan.why_not().find("cpu_openblas"), std::string::npos) << plan.why_not();
  Operands<std::int32_t> ops(p, 1);
  const std::vector<std::int32_t> before = ops.c;
  EXPECT_EQ(usage_error_of([&] { plan.run(ops.on(p)); }), plan.why_not());
  EXPECT_EQ(usage_error_of([&] { plan.kernel(); }), plan.why_not());
  EXPECT_EQ(ops.c, before);
  // The same reason as gemm() gives for the call.
  EXPECT_EQ(usage_error_of([&] { gemm(ctx, ops.on(p), nullptr, {.kernel = "cpu_openblas"}); }), plan.why_not());
}

TEST(GemmPlan, BadInputIsAnErrorAtPlanning) {
  Context ctx(Backend::cpu);
  GemmProblem p = shape(4, 4, 4);
  EXPECT_NE(usage_error_of([&] { (void)GemmPlan(ctx, p, {.kernel = "no_such_kernel"}); }).find("no_such_kernel"),
            std::string::npos);
  EXPECT_NE(usage_error_of([&] { (void)GemmPlan(ctx, p, {.kernel = ""}); }).find("''"), std::string::npos);
  EXPECT_NE(usage_error_of([&] { (void)GemmPlan(ctx, p, {.backend = Backend::cuda}); }).find("backend"),
            std::string::npos);
  p.ldc = 2;  // narrower than C
  EXPECT_NE(usage_error_of([&] { (void)GemmPlan(ctx, p); }).find("ldc 2"), std::string::npos);
}

TEST(GemmPlan, OperandsOfAnotherProblemAreRefusedNamingTheField) {
  Context ctx(Backend::cpu);
  const GemmProblem p = shape(6, 5, 4);
  const GemmPlan plan(ctx, p);
  struct Change {
    const char* field;
    void (*apply)(GemmProblem&);
  };
  const Change changes[] = {
      {"dtype f32", [](GemmProblem& q) { q.dtype = DType::f32; }},
      {"M 7", [](GemmProblem& q) { q.m = 7; }},
      {"K 3", [](GemmProblem& q) { q.k = 3; }},
      {"lda 8", [](GemmProblem& q) { q.lda = 8; }},
      {"transposed B yes", [](GemmProblem& q) { q.trans_b = true, q.ldb = 4; }},
      {"layout col", [](GemmProblem& q) { q.layout = Layout::col_major, q.lda = 6, q.ldb = 4, q.ldc = 6; }},
  };
  for (const Change& change : changes) {
    GemmProblem other = p;
    change.apply(other);
    Operands<double> ops(other, 3);
    const std::vector<double> before = ops.c;
    const std::string message = usage_error_of([&] { plan.run(ops.on(other)); });
    EXPECT_NE(message.find(change.field), std::string::npos) << message;
    EXPECT_NE(message.find("the plan's"), std::string::npos) << message;
    EXPECT_EQ(ops.c, before) << change.field;
  }
  // Null operands are bad input at run time, as for gemm().
  EXPECT_NE(usage_error_of([&] { plan.run(p); }).find("null"), std::string::npos);
}

TEST(GemmPlan, IntegerResultsFollowTheIntegerRule) {
  Context ctx(Backend::cpu);
  GemmProblem p = shape(3, 3, 2, DType::i32);
  const GemmPlan plan(ctx, p);
  ASSERT_TRUE(plan.can_run()) << plan.why_not();
  std::vector<std::int32_t> a(std::size_t(p.a_span()), 1 << 16), b(std::size_t(p.b_span()), 1 << 16),
      c(std::size_t(p.c_span()), 0);
  p.a = a.data(), p.b = b.data(), p.c = c.data();
  try {
    plan.run(p);  // 2 * 2^32 does not fit int32
    FAIL() << "an overflowing i32 product ran silently";
  } catch (const OverflowError&) {
  }
  std::fill(a.begin(), a.end(), 3);
  plan.run(p);
  EXPECT_EQ(c[0], 2 * 3 * (1 << 16));
}

}  // namespace
}  // namespace gemmkit

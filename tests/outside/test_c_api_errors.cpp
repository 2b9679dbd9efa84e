// The C API's error plumbing from C++: every exception a kernel throws becomes a status (none
// escapes), and gk_last_error() is per thread. The C program tests/c_api covers the rest.
#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "gemmkit.h"
#include "gemmkit/registry.hpp"

using namespace gemmkit;

namespace {

float marker_a[4] = {1, 2, 3, 4}, marker_b[4] = {5, 6, 7, 8};

// Kernels that throw what a kernel could throw, registered once per process. They take only
// this test's f32 operands, so that no test looping over every CPU kernel runs them.
void register_throwing_kernels() {
  static const bool done = [] {
    auto entry = [](const std::string& name, void (*run)(const GemmProblem&, const KernelLaunch&)) {
      KernelEntry e;
      e.name = name;
      e.summary = "throws (a test of the C API's error statuses)";
      e.dtypes = {DType::f32};
      e.precondition = [](const GemmProblem& p) -> std::optional<std::string> {
        if (p.a == marker_a) return std::nullopt;
        return "only the C API error test's operands";
      };
      e.run = run;
      return e;
    };
    register_kernel(entry("test_capi_throws_numeric", [](const GemmProblem&, const KernelLaunch&) {
      fail(ErrorCategory::numeric, "an overflow, say");
    }));
    register_kernel(entry("test_capi_throws_bad_alloc", [](const GemmProblem&, const KernelLaunch&) {
      throw std::bad_alloc();
    }));
    register_kernel(entry("test_capi_throws_runtime_error", [](const GemmProblem&, const KernelLaunch&) {
      throw std::runtime_error("a stray standard exception");
    }));
    register_kernel(entry("test_capi_throws_int", [](const GemmProblem&, const KernelLaunch&) { throw 42; }));
    return true;
  }();
  (void)done;
}

// A 2x2x2 f32 product of the marker operands with the named kernel.
gk_status run_kernel(gk_context ctx, const char* kernel) {
  float c[4] = {};
  return gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, 1.0, GK_F32, marker_a, 2, 0,
                    marker_b, 2, 0, 0.0, GK_F32, c, 2, 0, 1, kernel, nullptr, 0, nullptr, nullptr);
}

struct CpuContext {
  gk_context ctx = nullptr;
  CpuContext() { EXPECT_EQ(gk_context_create(GK_BACKEND_CPU, -1, &ctx), GK_SUCCESS) << gk_last_error(); }
  ~CpuContext() { gk_context_destroy(ctx); }
};

}  // namespace

TEST(CApiErrors, EveryExceptionBecomesAStatus) {
  register_throwing_kernels();
  CpuContext context;
  const struct {
    const char* kernel;
    gk_status status;
    const char* message;
  } cases[] = {
      {"test_capi_throws_numeric", GK_ERROR_NUMERIC, "gk_gemm_ex: an overflow, say"},
      {"test_capi_throws_bad_alloc", GK_ERROR_OUT_OF_MEMORY, "gk_gemm_ex: out of host memory"},
      {"test_capi_throws_runtime_error", GK_ERROR_INTERNAL, "gk_gemm_ex: a stray standard exception"},
      {"test_capi_throws_int", GK_ERROR_INTERNAL, "gk_gemm_ex: unknown exception"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(run_kernel(context.ctx, c.kernel), c.status) << c.kernel;
    EXPECT_STREQ(gk_last_error(), c.message) << c.kernel;
  }
  EXPECT_EQ(run_kernel(context.ctx, "cpu_naive"), GK_SUCCESS);
  EXPECT_STREQ(gk_last_error(), "gk_gemm_ex: unknown exception");  // kept after a success
}

TEST(CApiErrors, LastErrorIsPerThread) {
  CpuContext context;
  std::string seen_by_other;
  gk_status other_status = GK_SUCCESS;
  EXPECT_EQ(run_kernel(context.ctx, "no_such_kernel_here"), GK_ERROR_USAGE);
  const std::string mine = gk_last_error();
  EXPECT_NE(mine.find("no_such_kernel_here"), std::string::npos) << mine;
  std::thread other([&] {
    seen_by_other = gk_last_error();  // nothing failed on this thread yet
    other_status = gk_context_backend(nullptr, nullptr);
    seen_by_other.append("|").append(gk_last_error());
  });
  other.join();
  EXPECT_EQ(other_status, GK_ERROR_USAGE);
  EXPECT_EQ(seen_by_other, "|gk_context_backend: ctx is NULL");
  EXPECT_EQ(gk_last_error(), mine);  // the other thread's failure did not touch this one
}

namespace {

std::int64_t wrap_a[2] = {std::int64_t{1} << 62, std::int64_t{1} << 62}, wrap_b[2] = {3, 1}, fits_b[2] = {1, -1};

// An outside i64 kernel that wraps, as plain machine arithmetic does (for this test's operands).
void register_wrapping_kernel() {
  static const bool done = [] {
    KernelEntry e;
    e.name = "test_capi_wraps_i64";
    e.summary = "i64 dot products modulo 2^64 (a test of the integer rule)";
    e.dtypes = {DType::i64};
    e.precondition = [](const GemmProblem& p) -> std::optional<std::string> {
      if (p.a == wrap_a || p.a == wrap_b) return std::nullopt;
      return "only the integer rule test's operands";
    };
    e.run = [](const GemmProblem& p, const KernelLaunch&) {
      const auto* a = static_cast<const std::uint64_t*>(p.a);
      const auto* b = static_cast<const std::uint64_t*>(p.b);
      auto* c = static_cast<std::uint64_t*>(p.c);
      for (std::int64_t i = 0; i < p.m; ++i)
        for (std::int64_t j = 0; j < p.n; ++j) {
          std::uint64_t sum = 0;
          for (std::int64_t l = 0; l < p.k; ++l) sum += a[i * p.lda + l] * b[l * p.ldb + j];
          c[i * p.ldc + j] = sum;
        }
    };
    register_kernel(std::move(e));
    return true;
  }();
  (void)done;
}

}  // namespace

// The library's integer rule holds for a kernel registered from outside: its wrapped result
// (2^62 * 3 + 2^62 * 1 = 2^64, 0 modulo 2^64) is a numeric error naming the entry.
TEST(CApiErrors, AnOutsideKernelsWrappedIntegersAreANumericError) {
  register_wrapping_kernel();
  CpuContext context;
  std::int64_t c[1] = {5};
  EXPECT_EQ(gk_gemm_ex(context.ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, 1.0, GK_I64, wrap_a, 2, 0, wrap_b, 1,
                       0, 0.0, GK_I64, c, 1, 0, 1, "test_capi_wraps_i64", nullptr, 0, nullptr, nullptr),
            GK_ERROR_NUMERIC);
  EXPECT_STREQ(gk_last_error(), "gk_gemm_ex: numeric overflow: the exact result at (0, 0) is 18446744073709551616, "
                                "which does not fit i64");
  // Column-major, the same storage: C^T = B^T A^T, a 1 x 1 product whose A is wrap_b.
  EXPECT_EQ(gk_gemm_ex(context.ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, 1.0, GK_I64, wrap_b, 1, 0, wrap_a, 2,
                       0, 0.0, GK_I64, c, 1, 0, 1, "test_capi_wraps_i64", nullptr, 0, nullptr, nullptr),
            GK_ERROR_NUMERIC);
  // Where the exact result fits (2^62 - 2^62, though the bound cannot tell), the kernel's stands.
  EXPECT_EQ(gk_gemm_ex(context.ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, 1.0, GK_I64, wrap_a, 2, 0, fits_b, 1,
                       0, 0.0, GK_I64, c, 1, 0, 1, "test_capi_wraps_i64", nullptr, 0, nullptr, nullptr),
            GK_SUCCESS)
      << gk_last_error();
  EXPECT_EQ(c[0], 0);
}

// The C API's error plumbing from C++: every exception a kernel throws becomes a status (none
// escapes), and gk_last_error() is per thread. The C program tests/c_api covers the rest.
#include <gtest/gtest.h>

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

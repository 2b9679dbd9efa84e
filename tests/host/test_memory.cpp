// Memory estimates and the refusal that names the figures (gemmkit/memory.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "gemmkit/error.hpp"
#include "gemmkit/memory.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {
namespace {

TEST(Memory, MatrixBytesAndItsOverflow) {
  EXPECT_EQ(matrix_bytes(3, 5, DType::f64), 120u);
  EXPECT_EQ(matrix_bytes(3, 5, DType::f16), 30u);
  try {
    matrix_bytes(std::int64_t{1} << 40, std::int64_t{1} << 30, DType::f64);
    FAIL() << "expected an input error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::input);
    EXPECT_NE(std::string(e.what()).find("1099511627776x1073741824 f64"), std::string::npos) << e.what();
  }
}

TEST(Memory, GemmEstimateCountsTheDeviceCopiesAndTheCheck) {
  GemmProblem p;
  p.dtype = DType::f32, p.m = 100, p.n = 300, p.k = 200;
  p.lda = 200, p.ldb = 300, p.ldc = 301;
  const GemmMemory none = estimate_gemm_memory(p, VerifyMode::none);
  // The spans the device copies take: the last row of each only as wide as its matrix.
  EXPECT_EQ(none.device, 4u * ((99 * 200 + 200) + (199 * 300 + 300) + (99 * 301 + 300)));
  p.batch = 3, p.stride_a = 20000, p.stride_b = 60000, p.stride_c = 30100;
  EXPECT_EQ(estimate_gemm_memory(p, VerifyMode::none).device,
            4u * ((2 * 20000 + 99 * 200 + 200) + (2 * 60000 + 199 * 300 + 300) + (2 * 30100 + 99 * 301 + 300)));
  p.batch = 1;
  EXPECT_EQ(none.host, 0u);  // floats with --verify none: nothing is checked
  EXPECT_GT(estimate_gemm_memory(p, VerifyMode::full).host, 0u);
  p.dtype = DType::i64;  // integers are screened for overflow even with none
  EXPECT_GT(estimate_gemm_memory(p, VerifyMode::none).host, 0u);
}

// Issue 39: a 0 x 0 result with K = 10^9 was refused as needing 89 GiB for its check.
TEST(Memory, AnEmptyResultNeedsNothingWhateverK) {
  for (const std::int64_t k : {std::int64_t{1000000000}, INT64_MAX})
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 7}, {7, 0}}) {
      GemmProblem p;
      p.dtype = DType::i64, p.m = m, p.n = n, p.k = k;
      p.lda = std::max<std::int64_t>(1, k), p.ldb = std::max<std::int64_t>(1, n), p.ldc = std::max<std::int64_t>(1, n);
      for (const VerifyMode mode : {VerifyMode::none, VerifyMode::automatic, VerifyMode::full}) {
        const GemmMemory need = estimate_gemm_memory(p, mode);
        EXPECT_EQ(need.host, 0u) << m << "x" << n << "x" << k;
        EXPECT_EQ(need.device, 0u) << m << "x" << n << "x" << k;
      }
    }
}

TEST(Memory, TooMuchIsRefusedWithTheFigures) {
  const HostMemory host = host_memory();
  ASSERT_FALSE(host.limited_by.empty());  // Linux has MemAvailable at least
  EXPECT_NO_THROW(require_host_memory(1024, "a small thing"));
  try {
    require_host_memory(host.available + (std::uint64_t{1} << 40), "a big thing");
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::out_of_memory);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("a big thing needs ", 0), 0u) << what;
    EXPECT_NE(what.find(" GiB of host memory, "), std::string::npos) << what;
    EXPECT_NE(what.find("GiB available (limit from " + host.limited_by + ")"), std::string::npos) << what;
  }
  // Without a hard limit, MemAvailable alone does not refuse a small request, whatever it
  // reads (a sandbox's can read 0).
  if (host.limited_by == "MemAvailable")
    EXPECT_NO_THROW(require_host_memory(kMemAvailableFloor, "a small thing"));
  // The address space alone: unlimited here unless the test runs under ulimit -v.
  const HostMemory space = address_space();
  EXPECT_TRUE(space.limited_by.empty() || space.limited_by == "ulimit -v") << space.limited_by;
  if (space.limited_by.empty()) EXPECT_NO_THROW(require_address_space(std::uint64_t{1} << 50, "a map"));
  // No device in the CPU build: nothing to refuse.
  if (!device_memory()) {
    EXPECT_NO_THROW(require_device_memory(UINT64_MAX, "anything"));
  }
}

}  // namespace
}  // namespace gemmkit

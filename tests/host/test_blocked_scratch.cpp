// cpu_blocked keeps its packing buffers between calls, one set per calling thread: calls
// from two threads at once, and a small call after a larger one (the buffer then holds
// the larger call's packed values past the small one's), still compute their own products.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "gemmkit/registry.hpp"
#include "test_support.hpp"

namespace gemmkit {
namespace {

using test::ProblemSpec;
using test::TestProblem;

// Runs cpu_blocked on each spec in turn, `rounds` times, checking every result (gtest's
// assertions may be used from any thread).
void run_and_check(const std::vector<ProblemSpec>& specs, int rounds) {
  const KernelEntry& blocked = gemm_registry().get("cpu_blocked");
  for (int r = 0; r < rounds; ++r)
    for (const ProblemSpec& spec : specs) {
      TestProblem t(spec);
      blocked.run(t.problem(), test::cpu_launch());
      EXPECT_TRUE(t.matches_reference()) << "round " << r;
    }
}

ProblemSpec spec(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed) {
  ProblemSpec s;
  s.dtype = dtype, s.m = m, s.n = n, s.k = k, s.seed = seed;
  s.beta = is_integer(dtype) ? 2.0 : 0.5;
  return s;
}

TEST(CpuBlockedScratch, SmallerCallsAfterLargerOnesAndTwoCallingThreadsAtOnce) {
  // k > 512: several panels of op(B) per call, each packed over the previous one.
  const std::vector<ProblemSpec> first = {spec(DType::f32, 200, 150, 1100, 1),
                                          spec(DType::f32, 7, 5, 3, 2),
                                          spec(DType::f64, 97, 61, 600, 3)};
  const std::vector<ProblemSpec> second = {spec(DType::i64, 130, 90, 260, 4),
                                           spec(DType::f32, 64, 300, 513, 5),
                                           spec(DType::i32, 11, 13, 17, 6)};
  run_and_check(first, 1);  // on this thread: larger, then smaller
  std::thread a([&] { run_and_check(first, 3); });
  std::thread b([&] { run_and_check(second, 3); });
  a.join();
  b.join();
}

}  // namespace
}  // namespace gemmkit

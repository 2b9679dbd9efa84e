// Strided batches on the CPU: every CPU entry that runs a batch itself (batched = true), on
// every case of batched_test_support.hpp and every dtype it declares, through the device
// API on the CPU context; the library's fallback for an entry that does not; and how the
// threads are shared between the matrices.
#include <gtest/gtest.h>
#include <omp.h>

#include <string>
#include <vector>

#include "batched_test_support.hpp"
#include "ops/gemm/cpu/cpu_kernels.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {
namespace {

using test::BatchCase;
using test::BatchData;

std::vector<std::string> batched_cpu_entries() {
  std::vector<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu))
    if (e->batched) names.push_back(e->name);
  return names;
}

// Runs every case on entry e for each of `dtypes`, through the device API on the CPU
// context (which runs a batch matrix by matrix when the entry is not batched).
void run_cases(const KernelEntry& e, const std::vector<DType>& dtypes) {
  Context ctx(Backend::cpu);
  GemmOptions options;
  options.kernel = e.name;
  std::uint64_t seed = 0x5eed;
  for (DType dtype : dtypes)
    for (const BatchCase& bc : test::batch_cases()) {
      if (dtype == DType::i8) continue;  // C in int32, which BatchData does not hold: test_integer_rule.cpp
      BatchData data(bc, dtype, ++seed);
      ASSERT_FALSE(e.rejects(as_row_major(data.problem))) << e.name;
      gemm(ctx, data.problem, nullptr, options);
      EXPECT_TRUE(data.check(e.accuracy)) << e.name;
    }
}

TEST(CpuBatched, OpenBlasWidenedAndBlockedRunBatchesThemselves) {
  for (const char* name : {"cpu_openblas", "cpu_widened", "cpu_blocked"})
    EXPECT_TRUE(gemm_registry().get(name).batched) << name;
}

class CpuBatchedKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuBatchedKernel, EveryMatrixMatchesTheReference) {
  const KernelEntry& e = gemm_registry().get(GetParam());
  run_cases(e, e.dtypes);
}

INSTANTIATE_TEST_SUITE_P(Cpu, CpuBatchedKernel, ::testing::ValuesIn(batched_cpu_entries()),
                         [](const auto& param_info) { return param_info.param; });

// BatchData::check fails on each planted fault of a real batch (BatchData::faults): in the
// first and the last matrix (row-major, and column-major for i32), and a write outside
// every matrix; every dtype of cpu_blocked and cpu_widened.
TEST(CpuBatched, CatchesPlantedFaults) {
  Context ctx(Backend::cpu);
  std::vector<BatchCase> cases = {test::batch_cases()[1], test::batch_cases()[3]};
  for (BatchCase& bc : cases) bc.integers = true;
  for (const char* name : {"cpu_blocked", "cpu_widened"}) {
    const KernelEntry& e = gemm_registry().get(name);
    for (DType dtype : e.dtypes)
      for (const BatchCase& bc : cases) {
        if (dtype == DType::i8) continue;  // C in int32, which BatchData does not hold: test_integer_rule.cpp
        if (&bc != &cases[0] && dtype != DType::i32) continue;  // column-major once: each check costs
        SCOPED_TRACE(std::string(name) + " " + bc.describe(dtype));
        BatchData data(bc, dtype, 99);
        GemmOptions options;
        options.kernel = name;
        gemm(ctx, data.problem, nullptr, options);
        const auto faults = data.faults();
        EXPECT_EQ(test::expect_faults_caught(test::output_bytes(data.c), [&] { return data.check(e.accuracy); }, faults),
                  int(faults.size()));
      }
  }
}

// cpu_naive runs one product per call: the library runs the batch matrix by matrix.
TEST(CpuBatched, AnEntryWithoutBatchesRunsThemMatrixByMatrix) {
  const KernelEntry& e = gemm_registry().get("cpu_naive");
  ASSERT_FALSE(e.batched);
  run_cases(e, {DType::f64, DType::i32});
}

// Sets the OpenMP thread count for one test.
class OmpThreads {
 public:
  explicit OmpThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

GemmProblem batch_of(std::int64_t batch, std::int64_t size) {
  GemmProblem p;
  p.m = p.n = p.k = size;
  p.batch = batch;
  return p;
}

TEST(CpuBatched, SmallMatricesRunSideBySideLargeOnesWhenTheRoundsAreFull) {
  const OmpThreads two(2);
  EXPECT_FALSE(cpu::batch_side_by_side(batch_of(1, 16)));
  EXPECT_TRUE(cpu::batch_side_by_side(batch_of(3, 16)));    // below 128^3: always
  EXPECT_TRUE(cpu::batch_side_by_side(batch_of(7, 512)));   // 4 rounds of 2, 7/8 full
  EXPECT_TRUE(cpu::batch_side_by_side(batch_of(2, 512)));
  const OmpThreads eight(8);
  EXPECT_FALSE(cpu::batch_side_by_side(batch_of(3, 512)));  // one round, 3/8 full
  EXPECT_TRUE(cpu::batch_side_by_side(batch_of(7, 512)));   // 7/8
  EXPECT_TRUE(cpu::batch_side_by_side(batch_of(3, 100)));
  const OmpThreads one(1);
  EXPECT_FALSE(cpu::batch_side_by_side(batch_of(7, 16)));
}

// The path where each matrix gets every thread in turn (batch_side_by_side false).
TEST(CpuBatched, MatricesOneAfterAnotherMatchTheReference) {
  const OmpThreads eight(8);
  const BatchCase bc{.m = 131, .n = 140, .k = 129, .batch = 3, .tb = true, .gap = 1};
  for (const char* name : {"cpu_openblas", "cpu_blocked"}) {
    BatchData data(bc, DType::f64, 7);
    ASSERT_FALSE(cpu::batch_side_by_side(data.problem));
    Context ctx(Backend::cpu);
    GemmOptions options;
    options.kernel = name;
    gemm(ctx, data.problem, nullptr, options);
    EXPECT_TRUE(data.check(std::nullopt)) << name;
  }
}

}  // namespace
}  // namespace gemmkit

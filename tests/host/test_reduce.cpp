// Reduction: the CPU reference against exact or independent computations, the stated error
// bound, the dispatch rules, and the command line (good runs and each class of bad input).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmkit/device.hpp"
#include "gemmkit/reduce.hpp"
#include "host/cli_test_support.hpp"
#include "reduce_test_support.hpp"

namespace gemmkit {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ReduceReference, EmptyGivesTheIdentities) {
  const float* none = nullptr;
  EXPECT_EQ(reduce_cpu(none, 0, ReduceOp::sum), 0.0f);
  EXPECT_EQ(reduce_cpu(none, 0, ReduceOp::norm2), 0.0f);
  EXPECT_EQ(reduce_cpu(none, 0, ReduceOp::min), kInf);
  EXPECT_EQ(reduce_cpu(none, 0, ReduceOp::max), -kInf);
}

TEST(ReduceReference, LengthOne) {
  const double x[] = {-2.5};
  EXPECT_EQ(reduce_cpu(x, 1, ReduceOp::sum), -2.5);
  EXPECT_EQ(reduce_cpu(x, 1, ReduceOp::min), -2.5);
  EXPECT_EQ(reduce_cpu(x, 1, ReduceOp::max), -2.5);
  EXPECT_EQ(reduce_cpu(x, 1, ReduceOp::norm2), 2.5);
}

// Integers below 2^24 are exact in f32, and their sums in long double are exact: the
// reference must give exactly the integer sum computed in int64.
TEST(ReduceReference, IntegerSumsAreExact) {
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<int> dist(-(1 << 20), 1 << 20);
  std::vector<float> x(100003);
  std::int64_t exact = 0, squares = 0;
  for (auto& v : x) {
    const int k = dist(gen);
    v = static_cast<float>(k);
    exact += k;
    squares += std::int64_t(k) * k;
  }
  EXPECT_EQ(reduce_reference_wide(x.data(), x.size(), ReduceOp::sum), static_cast<long double>(exact));
  EXPECT_EQ(reduce_reference_wide(x.data(), x.size(), ReduceOp::norm2),
            std::sqrt(static_cast<long double>(squares)));
}

// Cancellation a plain long double sum loses: 1 + 2^70 - 2^70 needs 71 bits. The
// compensated reference keeps the 1 (and the 3 after it).
TEST(ReduceReference, CompensationKeepsWhatCancellationLoses) {
  const double x[] = {1.0, std::ldexp(1.0, 70), -std::ldexp(1.0, 70), 3.0};
  EXPECT_EQ(reduce_cpu(x, 4, ReduceOp::sum), 4.0);
  const float y[] = {1.0f, 1e30f, 1.0f, -1e30f};
  EXPECT_EQ(reduce_cpu(y, 4, ReduceOp::sum), 2.0f);
}

TEST(ReduceReference, MinMaxNaNAndInfinities) {
  const float plain[] = {3.0f, -kInf, 7.0f, kInf, -1.0f};
  EXPECT_EQ(reduce_cpu(plain, 5, ReduceOp::min), -kInf);
  EXPECT_EQ(reduce_cpu(plain, 5, ReduceOp::max), kInf);
  EXPECT_TRUE(std::isnan(reduce_cpu(plain, 5, ReduceOp::sum)));  // Inf + -Inf
  const float with_nan[] = {3.0f, kNaN, -kInf};
  EXPECT_TRUE(std::isnan(reduce_cpu(with_nan, 3, ReduceOp::min)));
  EXPECT_TRUE(std::isnan(reduce_cpu(with_nan, 3, ReduceOp::max)));
  EXPECT_TRUE(std::isnan(reduce_cpu(with_nan, 3, ReduceOp::sum)));
  EXPECT_TRUE(std::isnan(reduce_cpu(with_nan, 3, ReduceOp::norm2)));
  const float nan_last[] = {1.0f, 2.0f, kNaN};
  EXPECT_TRUE(std::isnan(reduce_cpu(nan_last, 3, ReduceOp::min)));
  const float inf_sum[] = {1.0f, kInf, 2.0f};
  EXPECT_EQ(reduce_cpu(inf_sum, 3, ReduceOp::sum), kInf);
  EXPECT_EQ(reduce_cpu(inf_sum, 3, ReduceOp::norm2), kInf);
}

// f32 values whose squares overflow f32: the reference, like the GPU, works wider.
TEST(ReduceReference, Norm2OfLargeF32DoesNotOverflow) {
  const float x[] = {3e30f, 4e30f};
  EXPECT_FLOAT_EQ(reduce_cpu(x, 2, ReduceOp::norm2), 5e30f);
  const float tiny[] = {3e-30f, 4e-30f};
  EXPECT_FLOAT_EQ(reduce_cpu(tiny, 2, ReduceOp::norm2), 5e-30f);
}

// The stated bound against a plain f32 recursive sum, the worst order: gamma_{n-1} holds.
TEST(ReduceErrorBound, HeightAndBound) {
  EXPECT_EQ(reduce_sum_error_height(0), 0);
  EXPECT_EQ(reduce_sum_error_height(1), 0);
  EXPECT_EQ(reduce_sum_error_height(100), 99);
  EXPECT_EQ(reduce_sum_error_height(std::size_t(1) << 28), 16384 + 1024);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(1000);
  float naive = 0;
  double sum_abs = 0;
  for (auto& v : x) {
    v = dist(gen);
    naive += v;
    sum_abs += std::fabs(v);
  }
  const long double exact = reduce_reference_wide(x.data(), x.size(), ReduceOp::sum);
  EXPECT_LE(std::fabs(naive - exact), reduce_sum_error_bound(x.size(), sum_abs, DType::f32));
  EXPECT_THROW(reduce_sum_error_bound(10, 1.0, DType::i32), Error);
}

// The check the GPU suite applies to every kernel (reduce_test_support.hpp) passes the CPU
// entry's results and fails each planted fault of them, on integer-valued data (sums exact).
template <class T>
void expect_reduce_faults_caught(std::size_t n, std::uint64_t seed) {
  const std::vector<T> x = test::integer_values<T>(n, seed);
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max, ReduceOp::norm2}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " " + std::string(reduce_op_name(op)));
    T got = reduce(x.data(), n, op, choose_reduce(Backend::cpu, "auto"));
    const auto faults = test::reduce_faults(x.data(), n, op, got);
    EXPECT_EQ(test::expect_faults_caught({&got, sizeof got},
                                         [&] { return test::reduce_result_matches(x.data(), n, op, got); }, faults),
              int(faults.size()));
  }
}

TEST(ReduceReference, CatchesPlantedFaults) {
  for (std::size_t n : {2, 33, 4097, 1048581}) {
    expect_reduce_faults_caught<float>(n, n);
    expect_reduce_faults_caught<double>(n, n + 1);
  }
}

TEST(ReduceKernels, ListAndNames) {
  const auto& k = reduce_registry().entries();
  if (!cuda_compiled()) {  // the CUDA part registers its rungs only where it is compiled
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(k.front().name, "cpu_reference");
    return;
  }
  ASSERT_GE(k.size(), 9u);
  EXPECT_EQ(k.front().name, "cpu_reference");
  EXPECT_EQ(k.front().backend, Backend::cpu);
  EXPECT_EQ(k[1].name, "reduce0_fold");
  EXPECT_EQ(k.back().name, "cub");
  EXPECT_EQ(k.back().role, KernelRole::reference);
  ASSERT_NE(reduce_registry().find(kReduceAutoKernel), nullptr);
  // The auto kernel of the GPU is the CUDA entry with the highest priority.
  const int auto_priority = reduce_registry().find(kReduceAutoKernel)->auto_priority;
  for (const auto& e : k) {
    if (e.backend == Backend::cuda && e.name != kReduceAutoKernel) {
      EXPECT_LT(e.auto_priority, auto_priority) << e.name;
    }
  }
  EXPECT_EQ(reduce_registry().find("nope"), nullptr);
  for (const char* op : {"sum", "min", "max", "norm2"})
    EXPECT_EQ(reduce_op_name(*parse_reduce_op(op)), op);
  EXPECT_FALSE(parse_reduce_op("mean"));
}

TEST(ReduceDispatch, Choices) {
  EXPECT_EQ(choose_reduce(Backend::cpu, "auto").kernel, "cpu_reference");
  EXPECT_EQ(choose_reduce(std::nullopt, "cpu_reference").backend, Backend::cpu);
  EXPECT_THROW(choose_reduce(Backend::cpu, "warp_shuffle"), Error);
  EXPECT_THROW(choose_reduce(std::nullopt, "no_such_kernel"), Error);
  if (!reduce_cuda_available()) {
    EXPECT_EQ(choose_reduce(std::nullopt, "auto").backend, Backend::cpu);
    EXPECT_THROW(choose_reduce(Backend::cuda, "auto"), Error);
  }
}

class ReduceCli : public test::CliTest {};

TEST_F(ReduceCli, SumMinMaxNorm2OfACsv) {
  const std::string x = write_file("x.csv", "1,2,3\n-4,5.5,6\n");
  auto r = run("reduce " + x + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("sum = 13.5\n", 0), 0u) << r.out;  // file is f64: %.17g
  EXPECT_NE(r.out.find("cpu_reference"), std::string::npos);
  r = run("reduce " + x + " --backend cpu --op min");
  EXPECT_EQ(r.out.rfind("min = -4\n", 0), 0u) << r.out;
  r = run("reduce " + x + " --backend cpu --op max --dtype f32");
  EXPECT_EQ(r.out.rfind("max = 6\n", 0), 0u) << r.out;
  r = run("reduce " + x + " --backend cpu --op norm2");
  EXPECT_EQ(r.out.rfind("norm2 = 9.8107084351742913\n", 0), 0u) << r.out;  // sqrt(96.25)
}

TEST_F(ReduceCli, JsonAndOutputFile) {
  const std::string x = write_file("x.csv", "0.1,0.2\n0.3,0.4\n");
  const auto r = run("reduce " + x + " --backend cpu --dtype f32 --json " + path("r.json") + " -o " +
                     path("s.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("sum = 1\n", 0), 0u) << r.out;
  const auto j = nlohmann::json::parse(read_file(path("r.json")));
  EXPECT_EQ(j["op"], "sum");
  EXPECT_EQ(j["dtype"], "f32");
  EXPECT_EQ(j["n"], 4);
  EXPECT_TRUE(j.contains("meta"));
  EXPECT_FALSE(read_file(path("s.csv")).empty());
}

TEST_F(ReduceCli, ListNamesEveryKernel) {
  const auto r = run("reduce --list");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& k : reduce_registry().entries()) EXPECT_NE(r.out.find(k.name), std::string::npos) << k.name;
}

TEST_F(ReduceCli, BadInputsExitTwoWithOneLine) {
  const std::string x = write_file("x.csv", "1,2\n3,4\n");
  expect_error(run("reduce " + x + " --op mean"), 2, "--op 'mean'");
  expect_error(run("reduce " + x + " --dtype i32"), 2, "--dtype");
  expect_error(run("reduce " + x + " --backend gpu"), 2, "backend 'gpu'");
  expect_error(run("reduce " + x + " --kernel nope"), 2, "unknown kernel 'nope'");
  expect_error(run("reduce " + x + " --backend cpu --kernel warp_shuffle"), 2, "warp_shuffle");
  expect_error(run("reduce " + path("missing.csv")), 2, "missing.csv");
  const std::string ragged = write_file("ragged.csv", "1,2\n3\n");
  expect_error(run("reduce " + ragged), 2, "ragged.csv");
  expect_error(run("reduce"), 2, "input file");
  expect_error(run("reduce --bench " + x), 2, "no input file");
}

TEST_F(ReduceCli, FailureLeavesOutputFilesAlone) {
  const std::string existing = write_file("keep.csv", "42\n");
  const std::string ragged = write_file("ragged.csv", "1,2\n3\n");
  expect_error(run("reduce " + ragged + " --backend cpu -o " + existing + " --json " + path("r.json")), 2,
               "ragged.csv");
  EXPECT_EQ(read_file(existing), "42\n");
  EXPECT_FALSE(std::filesystem::exists(path("r.json")));
  expect_error(run("reduce " + ragged + " -o " + path("new.csv")), 2, "ragged.csv");
  EXPECT_FALSE(std::filesystem::exists(path("new.csv")));
}

TEST_F(ReduceCli, BenchWithoutADeviceSaysSo) {
  if (cuda_device_available()) GTEST_SKIP() << "a device is present";
  expect_error(run("reduce --bench --n 1000"), 1, no_device_message());
}

}  // namespace
}  // namespace gemmkit

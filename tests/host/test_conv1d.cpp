// conv1d's CPU reference against an independent computation (an explicitly zero-padded copy
// of x, slid under the mask), its edge cases, the error bound, and which rung takes which mask.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "conv1d_test_support.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

using namespace gemmkit;

namespace {

// y[i] = sum_j mask[j] * padded[i + j], padded = w/2 zeros, x, (w - 1 - w/2) zeros: the
// definition written out the other way, summed in long double.
template <class T>
std::vector<long double> padded_exact(const std::vector<T>& x, const std::vector<T>& mask) {
  const std::size_t w = mask.size(), left = w / 2, right = w - 1 - left;
  std::vector<long double> padded(left, 0.0L);
  for (T v : x) padded.push_back(v);
  padded.insert(padded.end(), right, 0.0L);
  std::vector<long double> y(x.size(), 0.0L);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < w; ++j) y[i] += (long double)mask[j] * padded[i + j];
  return y;
}

template <class T>
std::vector<T> reference(const std::vector<T>& x, const std::vector<T>& mask) {
  std::vector<T> y(x.size(), T(-12345));
  conv1d_reference(x.data(), std::int64_t(x.size()), mask.data(), std::int64_t(mask.size()), y.data());
  return y;
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);  // mixed signs
  std::vector<T> v(n);
  for (auto& e : v) e = T(dist(rng));
  return v;
}

template <class F>
void expect_usage_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Conv1dReference, HandWorkedOddAndEvenWidths) {
  // w = 3: y[i] = x[i-1] - x[i+1].
  EXPECT_EQ(reference<float>({1, 2, 3, 4, 5}, {1, 0, -1}), (std::vector<float>{-2, -2, -2, -2, 4}));
  // w = 4 (even): w/2 = 2 taps back, one forward: y[i] = x[i-2] + 10 x[i-1] + 100 x[i] + 1000 x[i+1].
  EXPECT_EQ(reference<double>({1, 2, 3}, {1, 10, 100, 1000}), (std::vector<double>{2100, 3210, 321}));
  // w = 2: y[i] = x[i-1] + 10 x[i].
  EXPECT_EQ(reference<double>({1, 2, 3}, {1, 10}), (std::vector<double>{10, 21, 32}));
}

TEST(Conv1dReference, WidthOneScales) {
  EXPECT_EQ(reference<float>({1, -2, 3.5f}, {-2}), (std::vector<float>{-2, 4, -7}));
}

TEST(Conv1dReference, EmptyAndSingleInputs) {
  EXPECT_TRUE(reference<float>({}, {1, 2, 3}).empty());
  // n = 1: only the centre tap meets the input.
  EXPECT_EQ(reference<double>({3}, {5, 7, 11, 13, 17, 19, 23}), (std::vector<double>{39}));
}

TEST(Conv1dReference, MaskWiderThanInput) {
  const auto x = random_values<double>(5, 1);
  const auto mask = random_values<double>(13, 2);
  const auto y = reference(x, mask);
  const auto exact = padded_exact(x, mask);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], double(exact[i])) << i;
}

TEST(Conv1dReference, IntegerDataIsExactForEveryWidth) {
  // Small integers: every partial sum is exact in f32, so the result is exact.
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> dist(-9, 9);
  for (int w = 1; w <= 12; ++w)
    for (std::size_t n : {1u, 2u, 5u, 11u, 64u}) {
      std::vector<float> x(n), mask(static_cast<std::size_t>(w));
      for (auto& v : x) v = float(dist(rng));
      for (auto& v : mask) v = float(dist(rng));
      const auto y = reference(x, mask);
      const auto exact = padded_exact(x, mask);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], float(exact[i])) << "w " << w << " n " << n << " i " << i;
    }
}

TEST(Conv1dReference, RandomDataRoundsOnceFromTheExactSum) {
  for (unsigned seed = 0; seed < 4; ++seed) {
    const auto x = random_values<float>(1000, seed);
    const auto mask = random_values<float>(7 + 2 * seed, 100 + seed);
    const auto y = reference(x, mask);
    const auto exact = padded_exact(x, mask);
    for (std::size_t i = 0; i < x.size(); ++i)
      // Rounded once: within half an ulp of the exact sum (an ulp allows for the long double
      // sums' own last-bit differences).
      ASSERT_LE(std::fabs(double(y[i]) - double(exact[i])),
                std::numeric_limits<float>::epsilon() * std::fabs(double(exact[i])))
          << i;
  }
}

TEST(Conv1dReference, NanAndInfinityPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto y = reference<float>({1, std::nanf(""), 1, 1, 1, inf, 1}, {1, 1, 1});
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]) && std::isnan(y[2]));
  EXPECT_EQ(y[3], 3.0f);
  EXPECT_TRUE(std::isinf(y[4]) && std::isinf(y[5]) && std::isinf(y[6]));
}

// The check the GPU suite applies to every rung (conv1d_test_support.hpp) passes the CPU
// entry's output and fails each planted fault of it, on integer data.
TEST(Conv1dReference, CatchesPlantedFaults) {
  for (const std::int64_t n : {5, 2049, 10007})
    for (const std::int64_t w : {2, 7}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " w=" + std::to_string(w));
      const auto x = test::nonzero_integers<float>(std::size_t(n), std::uint64_t(n));
      const auto mask = test::nonzero_integers<float>(std::size_t(w), std::uint64_t(w));
      std::vector<float> y(std::size_t(n), NAN);
      Conv1dOptions cpu;
      cpu.backend = Backend::cpu;
      conv1d(x.data(), n, mask.data(), w, y.data(), cpu);
      const auto faults = test::conv1d_faults(x, mask, y);
      EXPECT_EQ(test::expect_faults_caught(test::output_bytes(y), [&] { return test::conv1d_result_matches(x, mask, y); },
                                           faults),
                int(faults.size()));
    }
}

TEST(Conv1dErrorBound, HoldsForPlainFloatSumsAndIsTight) {
  // A left-to-right f32 sum (no FMA) is one of the orders a kernel may use: within the bound.
  const auto x = random_values<float>(4000, 7);
  for (int w : {1, 2, 7, 31, 255}) {
    const auto mask = random_values<float>(std::size_t(w), 8);
    const auto exact = padded_exact(x, mask);
    double worst = 0;
    for (std::int64_t i = 0; i < 4000; ++i) {
      float sum = 0;
      for (int j = 0; j < w; ++j) {
        const std::int64_t at = i + j - w / 2;
        if (at >= 0 && at < 4000) sum = sum + float(mask[j] * x[std::size_t(at)]);
      }
      const double bound = conv1d_error_bound(x.data(), 4000, mask.data(), w, i);
      const double err = std::fabs(double(sum) - double(exact[std::size_t(i)]));
      ASSERT_LE(err, bound) << "w " << w << " i " << i;
      if (bound > 0) worst = std::max(worst, err / bound);
    }
    EXPECT_GT(w == 1 ? 1.0 : worst, 0.0);  // not vacuous: f32 sums do round
  }
  // S = 0 (all products zero) allows no error at all.
  const std::vector<float> zeros(10, 0.0f), mask{1, 2, 3};
  EXPECT_EQ(conv1d_error_bound(zeros.data(), 10, mask.data(), 3, 4), 0.0);
}

TEST(Conv1dKernels, LadderInRungOrder) {
  std::vector<const Conv1dKernel*> k;
  for (const auto& e : conv1d_registry().entries())
    if (e.backend == Backend::cuda) k.push_back(&e);
  if (!cuda_compiled()) {  // the CUDA part registers its rungs only where it is compiled
    EXPECT_TRUE(k.empty());
    const auto why = conv1d_kernel_rejection("tiled", DType::f32, 7);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("built without the CUDA backend"), std::string::npos) << *why;
    return;
  }
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[0]->name, "basic");
  EXPECT_EQ(k[1]->name, "constant_mask");
  EXPECT_EQ(k[2]->name, "tiled");
  EXPECT_EQ(k[3]->name, "streaming");
  for (std::size_t i = 0; i < k.size(); ++i) EXPECT_EQ(k[i]->rung, int(i) + 1);
}

TEST(Conv1dKernels, ConstantMemoryCapNamesWidthAndCap) {
  if (!cuda_compiled()) GTEST_SKIP() << "the rungs are registered only in a build with the CUDA backend";
  for (DType d : {DType::f32, DType::f64}) {
    EXPECT_FALSE(conv1d_kernel_rejection("constant_mask", d, kConv1dConstantMaskTaps));
    EXPECT_FALSE(conv1d_kernel_rejection("tiled", d, kConv1dConstantMaskTaps));
    for (const char* k : {"constant_mask", "tiled"}) {
      const auto why = conv1d_kernel_rejection(k, d, kConv1dConstantMaskTaps + 1);
      ASSERT_TRUE(why) << k;
      EXPECT_NE(why->find(std::to_string(kConv1dConstantMaskTaps + 1)), std::string::npos) << *why;
      EXPECT_NE(why->find(std::to_string(kConv1dConstantMaskTaps)), std::string::npos) << *why;
      EXPECT_NE(why->find("constant memory"), std::string::npos) << *why;
    }
    EXPECT_FALSE(conv1d_kernel_rejection("basic", d, 1 << 20));
  }
}

TEST(Conv1dKernels, AutoServesEveryWidth) {
  EXPECT_EQ(conv1d_auto_kernel(DType::f32, 7), "streaming");
  EXPECT_EQ(conv1d_auto_kernel(DType::f64, 7), "streaming");
  EXPECT_EQ(conv1d_auto_kernel(DType::f32, 1), "streaming");
  // Wider than constant memory holds: still streaming while the halo fits shared memory...
  EXPECT_EQ(conv1d_auto_kernel(DType::f32, 5000), "streaming");
  // ...and the global-memory basic rung beyond.
  EXPECT_EQ(conv1d_auto_kernel(DType::f32, 20000), "basic");
  EXPECT_EQ(conv1d_auto_kernel(DType::f64, 6000), "basic");
  const auto why = conv1d_kernel_rejection("streaming", DType::f32, 20000);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find(cuda_compiled() ? "20000" : "built without the CUDA backend"), std::string::npos) << *why;
}

TEST(Conv1dKernels, UnknownNamesAndDtypes) {
  const auto why = conv1d_kernel_rejection("fastest", DType::f32, 7);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("unknown conv1d kernel 'fastest'"), std::string::npos) << *why;
  EXPECT_TRUE(conv1d_kernel_rejection("basic", DType::f16, 7));
}

TEST(Conv1dDispatch, CpuBackendAndRefusals) {
  const std::vector<double> x{1, 2, 3}, mask{1, 0, -1};
  std::vector<double> y(3);
  Conv1dOptions cpu;
  cpu.backend = Backend::cpu;
  const Conv1dRun ran = conv1d(x.data(), 3, mask.data(), 3, y.data(), cpu);
  EXPECT_EQ(ran.backend, Backend::cpu);
  EXPECT_EQ(ran.kernel, "cpu_reference");
  EXPECT_EQ(y, (std::vector<double>{-2, -2, 2}));

  expect_usage_error([&] { conv1d(x.data(), 3, mask.data(), 0, y.data(), cpu); }, "mask is empty");
  Conv1dOptions named = cpu;
  named.kernel = "tiled";
  expect_usage_error([&] { conv1d(x.data(), 3, mask.data(), 3, y.data(), named); }, "CUDA kernel");
  // A constant-memory rung refuses a wide mask before any device work (so also here).
  std::vector<double> wide(5000, 1.0);
  Conv1dOptions constant;
  constant.kernel = "constant_mask";
  expect_usage_error([&] { conv1d(x.data(), 3, wide.data(), 5000, y.data(), constant); },
                     cuda_compiled() ? "5000" : "built without the CUDA backend");
}

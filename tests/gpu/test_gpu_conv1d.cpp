// Every conv1d rung against the CPU reference, output by output within the stated bound
// ((w + 1) eps sum|mask x|), on seeded random data of mixed signs: lengths 0, 1, around the
// block (256), the streaming tile (2048 f32 / 1024 f64) and the streaming grid (SMs x resident
// blocks x tile, where blocks loop over tiles), masks of width 1, even widths, masks wider
// than the input, and the widest masks each rung takes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gemmkit/conv1d.hpp"
#include "gemmkit/device.hpp"
#include "conv1d_test_support.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) e = T(dist(rng));
  return v;
}

// Runs `kernel` on the device and compares every output with the reference within the bound.
template <class T>
void expect_matches_reference(const std::string& kernel, std::int64_t n, std::int64_t width,
                              std::uint64_t seed) {
  SCOPED_TRACE(kernel + " n=" + std::to_string(n) + " w=" + std::to_string(width));
  const auto x = random_values<T>(std::size_t(n), seed);
  const auto mask = random_values<T>(std::size_t(width), seed + 1000);
  const auto size = static_cast<std::size_t>(n);
  std::vector<T> y(size, T(NAN));
  Conv1dOptions options;
  options.backend = Backend::cuda;
  options.kernel = kernel;
  const Conv1dRun ran = conv1d(x.data(), n, mask.data(), width, y.data(), options);
  EXPECT_EQ(ran.backend, Backend::cuda);
  if (kernel != "auto") {
    EXPECT_EQ(ran.kernel, kernel);
  }
  EXPECT_TRUE(test::conv1d_result_matches(x, mask, y));
}

// The number of outputs the streaming rung's whole grid covers in one pass.
std::int64_t streaming_grid_outputs(DType dtype) {
  const auto q = query_devices();
  const std::int64_t sms = q.devices.empty() ? 132 : q.devices.front().sm_count;
  return sms * 8 * (dtype == DType::f32 ? 2048 : 1024);  // 8 resident blocks of 256 threads
}

template <class T>
void sweep(const std::string& kernel) {
  const std::int64_t tile = sizeof(T) == 4 ? 2048 : 1024;
  const std::vector<std::int64_t> lengths = {0, 1, 2, 3, 5, 255, 256, 257, 511, 513,
                                             tile - 1, tile, tile + 1, 2 * tile + 3,
                                             3 * tile - 5, 10007, 65536, 100003};
  const std::vector<std::int64_t> widths = {1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 64, 257};
  std::uint64_t seed = 1;
  for (std::int64_t n : lengths)
    for (std::int64_t w : widths) expect_matches_reference<T>(kernel, n, w, seed++);
  // Masks wider than the input.
  for (std::int64_t n : {1, 2, 7, 100}) expect_matches_reference<T>(kernel, n, 2 * n + 9, seed++);
  // Large: blocks that loop over tiles more than once, and around one grid's worth.
  const std::int64_t grid = streaming_grid_outputs(dtype_of<T>);
  for (std::int64_t n : {grid - 1, grid + 1, 3 * grid + 12345})
    expect_matches_reference<T>(kernel, n, 7, seed++);
}

class Conv1dRung : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Conv1dRung, MatchesReferenceF32) {
  SKIP_WITHOUT_DEVICE();
  sweep<float>(GetParam());
}

TEST_P(Conv1dRung, MatchesReferenceF64) {
  SKIP_WITHOUT_DEVICE();
  sweep<double>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Conv1d, Conv1dRung,
                         ::testing::Values("basic", "constant_mask", "tiled", "streaming", "auto"),
                         [](const auto& param_info) { return param_info.param; });

TEST(Conv1dGpu, WidestMasksEachRungTakes) {
  SKIP_WITHOUT_DEVICE();
  const std::int64_t cap = kConv1dConstantMaskTaps;
  for (const char* k : {"constant_mask", "tiled"}) {
    expect_matches_reference<float>(k, 5000, cap, 11);
    expect_matches_reference<double>(k, 5000, cap, 12);
    expect_matches_reference<float>(k, 3, cap, 13);
  }
  // Streaming's halo limit, found from the host check, and just inside it.
  for (DType d : {DType::f32, DType::f64}) {
    std::int64_t w = 1;
    while (!conv1d_kernel_rejection("streaming", d, w + 1)) ++w;
    if (d == DType::f32) expect_matches_reference<float>("streaming", 30000, w, 14);
    else expect_matches_reference<double>("streaming", 30000, w, 15);
  }
  // Beyond it, auto serves the mask from global memory (basic).
  expect_matches_reference<float>("auto", 3000, 20001, 16);
  expect_matches_reference<float>("basic", 3000, 20001, 17);
}

// The check above fails on each planted fault of every rung's real output (integer data).
TEST(Conv1dGpu, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  for (const auto& k : conv1d_registry().entries()) {
    if (k.backend != Backend::cuda) continue;
    for (const std::int64_t n : {5, 2049, 10007})
      for (const std::int64_t w : {2, 7}) {
        SCOPED_TRACE(k.name + " n=" + std::to_string(n) + " w=" + std::to_string(w));
        const auto x = test::nonzero_integers<float>(std::size_t(n), std::uint64_t(n));
        const auto mask = test::nonzero_integers<float>(std::size_t(w), std::uint64_t(w));
        std::vector<float> y(std::size_t(n), NAN);
        Conv1dOptions options;
        options.kernel = std::string(k.name);
        conv1d(x.data(), n, mask.data(), w, y.data(), options);
        const auto faults = test::conv1d_faults(x, mask, y);
        EXPECT_EQ(test::expect_faults_caught(test::output_bytes(y), [&] { return test::conv1d_result_matches(x, mask, y); },
                                             faults),
                  int(faults.size()));
      }
  }
}

TEST(Conv1dGpu, ConstantRungsRefuseWiderMasks) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> x(10, 1.0f), mask(std::size_t(kConv1dConstantMaskTaps + 1), 1.0f), y(10);
  Conv1dOptions options;
  options.kernel = "tiled";
  try {
    conv1d(x.data(), 10, mask.data(), std::int64_t(mask.size()), y.data(), options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find(std::to_string(kConv1dConstantMaskTaps + 1)), std::string::npos)
        << e.what();
  }
}

TEST(Conv1dGpu, NanInTheInputReachesTheOutputsThatSeeIt) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> x(5000, 1.0f), mask{1, 1, 1, 1, 1};
  x[2500] = NAN;
  for (const auto& k : conv1d_registry().entries()) {
    if (k.backend != Backend::cuda) continue;
    std::vector<float> y(5000);
    Conv1dOptions options;
    options.kernel = std::string(k.name);
    conv1d(x.data(), 5000, mask.data(), 5, y.data(), options);
    for (int i = 2490; i < 2510; ++i)
      EXPECT_EQ(std::isnan(y[std::size_t(i)]), i >= 2498 && i <= 2502) << k.name << " " << i;
    EXPECT_EQ(y[0], 3.0f) << k.name;
    EXPECT_EQ(y[4999], 3.0f) << k.name;
  }
}

TEST(Conv1dGpu, EmptyInputLaunchesNothing) {
  SKIP_WITHOUT_DEVICE();
  const float mask[3] = {1, 2, 3};
  for (const auto& k : conv1d_registry().entries()) {
    if (k.backend != Backend::cuda) continue;
    Conv1dOptions options;
    options.kernel = std::string(k.name);
    EXPECT_NO_THROW(conv1d<float>(nullptr, 0, mask, 3, nullptr, options)) << k.name;
  }
}

// The check of a conv1d result against the CPU reference, output by output within the stated
// bound ((w + 1) eps sum|mask x|), shared by the GPU suite (every rung) and the host suite (the
// CPU entry, and the planted faults that show the check can fail); the planted faults.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "gemmkit/conv1d.hpp"

namespace gemmkit::test {

template <class T>
::testing::AssertionResult conv1d_result_matches(const std::vector<T>& x, const std::vector<T>& mask,
                                                 const std::vector<T>& y) {
  const auto n = std::int64_t(x.size()), width = std::int64_t(mask.size());
  std::vector<T> ref(x.size());
  conv1d_reference(x.data(), n, mask.data(), width, ref.data());
  for (std::int64_t i = 0; i < n; ++i) {
    const double err = std::fabs(double(y[std::size_t(i)]) - double(ref[std::size_t(i)]));
    const double bound = conv1d_error_bound(x.data(), n, mask.data(), width, i);
    if (!(err <= bound))
      return ::testing::AssertionFailure() << "output " << i << ": " << y[std::size_t(i)] << " vs reference "
                                           << ref[std::size_t(i)] << " (bound " << bound << ")";
  }
  return ::testing::AssertionSuccess();
}

// Nonzero integers in [-9, 9]: every product exact and at least 1 in magnitude.
template <class T>
std::vector<T> nonzero_integers(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& e : v) e = T(std::int64_t(rng() % 9) + 1) * (rng() % 2 ? T(1) : T(-1));
  return v;
}

// The faults of y = mask * x (n >= 2, width >= 2): the last output's last tap in range
// dropped (the right halo off by one), y[0]'s centre tap counted twice, a middle output's
// centre tap with the wrong sign, the last output computed as the one before it.
template <class T>
std::vector<PlantedFault> conv1d_faults(const std::vector<T>& x, const std::vector<T>& mask, std::vector<T>& y) {
  const auto n = std::int64_t(x.size()), w = std::int64_t(mask.size()), left = w / 2;
  // Tap j of output i: mask[j] x[i + j - w/2] (zero outside x).
  const auto tap = [&x, &mask, n, left](std::int64_t i, std::int64_t j) {
    const std::int64_t at = i + j - left;
    return at >= 0 && at < n ? mask[std::size_t(j)] * x[std::size_t(at)] : T(0);
  };
  std::int64_t last_tap = w - 1;
  while (last_tap > 0 && tap(n - 1, last_tap) == T(0)) --last_tap;
  return {
      {"the last in-range tap of y[" + std::to_string(n - 1) + "] dropped",
       [&y, tap, n, last_tap] { y[std::size_t(n - 1)] -= tap(n - 1, last_tap); }},
      {"the centre tap of y[0] counted twice", [&y, tap, left] { y[0] += tap(0, left); }},
      {"the centre tap of y[" + std::to_string(n / 2) + "] with the wrong sign",
       [&y, tap, n, left] { y[std::size_t(n / 2)] -= 2 * tap(n / 2, left); }},
      {"the last output computed as the one before it", [&y, n] { y[std::size_t(n - 1)] = y[std::size_t(n - 2)]; }},
  };
}

}  // namespace gemmkit::test

// The check of a reduction's result against the long double reference, shared by the GPU
// suite (every kernel) and the host suite (the CPU entry, and the planted faults that show
// the check can fail); integer-valued test data; the planted faults of a reduction.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "gemmkit/reduce.hpp"

namespace gemmkit::test {

// Whether every partial sum of x, in any order, is an integer that T holds exactly: then every
// summation order gives the exact sum, and the check of a sum is exact.
template <class T>
bool sums_are_exact(const T* x, std::size_t n) {
  long double sum_abs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::trunc(x[i]) != x[i]) return false;
    sum_abs += std::fabs(static_cast<long double>(x[i]));
  }
  return sum_abs <= std::ldexp(1.0L, std::numeric_limits<T>::digits);
}

// The accepted distance between a kernel's result and the long double reference `ref`.
template <class T>
double reduce_tolerance(const T* x, std::size_t n, ReduceOp op, long double ref) {
  if (op == ReduceOp::min || op == ReduceOp::max) return 0;
  if (op == ReduceOp::sum && sums_are_exact(x, n)) return 0;  // one value skipped or doubled shows
  constexpr DType dtype = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  double sum_abs = 0;
  for (std::size_t i = 0; i < n; ++i)
    sum_abs += op == ReduceOp::sum ? std::fabs(double(x[i])) : double(x[i]) * double(x[i]);
  const double u = std::is_same_v<T, float> ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  if (op == ReduceOp::sum)  // the stated bound, plus the reference's own (long double) error
    return reduce_sum_error_bound(n, sum_abs, dtype) + sum_abs * std::ldexp(1.0, -60);
  // norm2: squares summed in double; sqrt halves the relative error; then one rounding to T.
  const double rel_sq = reduce_sum_error_bound(n, sum_abs, DType::f64) / std::max(sum_abs, 1e-300);
  return (rel_sq / 2 + 2 * u) * double(ref) + std::numeric_limits<T>::denorm_min();
}

// `got`, a kernel's `op` of x[0, n), against the reference: min and max exactly, sum and
// norm2 within reduce_tolerance.
template <class T>
::testing::AssertionResult reduce_result_matches(const T* x, std::size_t n, ReduceOp op, T got) {
  const long double ref = reduce_reference_wide(x, n, op);
  const double tol = reduce_tolerance(x, n, op, ref);
  if (op == ReduceOp::min || op == ReduceOp::max ? got == static_cast<T>(ref)
                                                 : std::fabs(static_cast<long double>(got) - ref) <= tol)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "n=" << n << " " << reduce_op_name(op) << ": got " << got << ", reference "
                                       << static_cast<double>(ref) << ", tolerance " << tol;
}

// n integers of mixed signs, as large as they can be (up to 2^20) while sums_are_exact holds.
template <class T>
std::vector<T> integer_values(std::size_t n, std::uint64_t seed) {
  const double room = std::ldexp(1.0, std::numeric_limits<T>::digits) / double(std::max<std::size_t>(n, 1));
  const std::int64_t limit = std::max<std::int64_t>(1, std::int64_t(std::min(room, std::ldexp(1.0, 20))));
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int64_t> value(-limit, limit);
  std::vector<T> x(n);
  for (auto& v : x) v = static_cast<T>(value(gen));
  return x;
}

// The faults of a kernel's result `got` of `op` over x[0, n) (n >= 2, integer-valued, not
// all zero): for sum, a value skipped (the last nonzero one, as a tail off by one, and the
// largest), one counted twice, one with the wrong sign; for norm2, the largest skipped or
// counted twice (the check is relative, and a sign does not change a square); for min and
// max, the extreme value skipped (counting one twice, or a sign, changes neither).
template <class T>
std::vector<PlantedFault> reduce_faults(const T* x, std::size_t n, ReduceOp op, T& got) {
  std::size_t first = 0, last = n - 1, largest = 0;
  while (first + 1 < n && x[first] == 0) ++first;
  while (last > 0 && x[last] == 0) --last;
  for (std::size_t i = 1; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(x[largest])) largest = i;
  const auto name = [](std::size_t i) { return "x[" + std::to_string(i) + "]"; };
  if (op == ReduceOp::min || op == ReduceOp::max) {
    return {{"the extreme value skipped", [x, n, op, &got] {
               const T extreme = static_cast<T>(reduce_reference_wide(x, n, op));
               std::vector<T> rest;
               for (std::size_t i = 0; i < n; ++i)
                 if (x[i] != extreme) rest.push_back(x[i]);
               got = static_cast<T>(reduce_reference_wide(rest.data(), rest.size(), op));
             }}};
  }
  // Each fault adds `times` x[i] to the sum (norm2: `times` x[i]^2 to the sum of squares).
  const auto change = [x, n, op, &got](std::size_t i, int times) {
    return [x, n, op, &got, i, times] {
      const long double xi = x[i];
      if (op == ReduceOp::sum) {
        got = static_cast<T>(static_cast<long double>(got) + times * xi);
      } else {
        const long double norm = reduce_reference_wide(x, n, ReduceOp::norm2);
        got = static_cast<T>(std::sqrt(std::max(norm * norm + times * xi * xi, 0.0L)));
      }
    };
  };
  if (op == ReduceOp::norm2)  // relative: only a large value's square shows past the rounding
    return {{name(largest) + " skipped", change(largest, -1)}, {name(largest) + " counted twice", change(largest, 1)}};
  return {
      {name(last) + " skipped (the tail off by one)", change(last, -1)},
      {name(largest) + " skipped", change(largest, -1)},
      {name(first) + " counted twice", change(first, 1)},
      {name(largest) + " with the wrong sign", change(largest, -2)},
  };
}

}  // namespace gemmkit::test

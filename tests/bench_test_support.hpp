// Shared by the benchmark engine's tests (tests/host/test_bench.cpp and
// tests/outside/test_bench_outside.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gemmkit/bench.hpp"

namespace gemmkit::test {

// Two small shapes, two timed runs each, no warm-up: seconds on any machine.
inline BenchOptions small_bench_options(std::vector<std::string> kernels) {
  BenchOptions o;
  o.kernels = std::move(kernels);
  o.shapes = {{24, 20, 16}, {8, 8, 8}};
  o.warmup = 0;
  o.reps = 2;
  return o;
}

// The report's row of `kernel` at the shape with M = m.
inline const BenchRow& bench_row(const BenchReport& r, const std::string& kernel, std::int64_t m) {
  const auto it = std::find_if(r.rows.begin(), r.rows.end(), [&](const BenchRow& row) {
    return row.kernel == kernel && row.gemm->shape.m == m;
  });
  if (it == r.rows.end()) throw std::runtime_error("no row " + kernel);
  return *it;
}

}  // namespace gemmkit::test

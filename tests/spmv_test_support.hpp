// The check of y = A x against the long double CPU reference, row by row within
// |y_i - ref_i| <= (len_i + 1) eps sum_j |a_ij x_j|, shared by the GPU suite (every kernel) and
// the host suite (the CPU reference, and the planted faults that show the check can fail);
// integer-valued test matrices; the planted faults of a product.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit::test {

template <class T>
::testing::AssertionResult spmv_result_matches(const CsrMatrix<T>& a, const std::vector<T>& x,
                                               const std::vector<T>& y) {
  const std::vector<T> ref = spmv_reference(a, x);
  if (y.size() != ref.size())
    return ::testing::AssertionFailure() << y.size() << " outputs, expected " << ref.size();
  const std::vector<long double> sums = spmv_abs_row_sums(a, x);
  const long double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const long double bound = (a.row_length(r) + 1) * eps * sums[std::size_t(r)];
    const long double diff = std::fabs(static_cast<long double>(y[std::size_t(r)]) - ref[std::size_t(r)]);
    if (!(diff <= bound))
      return ::testing::AssertionFailure() << "row " << r << " of " << a.rows << " (length " << a.row_length(r)
                                           << "): " << double(y[std::size_t(r)]) << " vs "
                                           << double(ref[std::size_t(r)]) << ", bound " << double(bound);
  }
  return ::testing::AssertionSuccess();
}

// rows x cols, row lengths 0..max_length (distinct sorted columns), entries and x nonzero
// integers in [-9, 9]: products exact, and every term at least 1 in magnitude.
template <class T>
CsrMatrix<T> integer_csr(std::int64_t rows, std::int64_t cols, std::int64_t max_length, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto nonzero = [&] { return T(std::int64_t(rng() % 9) + 1) * (rng() % 2 ? T(1) : T(-1)); };
  CsrMatrix<T> a;
  a.rows = rows, a.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c)
      if (std::int64_t(rng() % std::uint64_t(cols)) < max_length / 2) {
        a.col_indices.push_back(std::int32_t(c));
        a.values.push_back(nonzero());
      }
    a.row_offsets.push_back(std::int64_t(a.col_indices.size()));
  }
  validate_csr(a, "integer test matrix");
  return a;
}
template <class T>
std::vector<T> integer_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = T(std::int64_t(rng() % 9) + 1) * (rng() % 2 ? T(1) : T(-1));
  return x;
}

// The faults of y = A x (A with at least two nonempty rows): the last entry of the last
// nonempty row dropped (its row end off by one), the first entry of the first nonempty row
// counted twice, one entry with the wrong sign, and the first entry of the last nonempty row
// summed into the row before it (a row boundary off by one).
template <class T>
std::vector<PlantedFault> spmv_faults(const CsrMatrix<T>& a, const std::vector<T>& x, std::vector<T>& y) {
  std::int64_t first = 0, last = a.rows - 1;
  while (first < a.rows && a.row_length(first) == 0) ++first;
  while (last >= 0 && a.row_length(last) == 0) --last;
  const auto term = [&a, &x](std::int64_t at) { return a.values[std::size_t(at)] * x[std::size_t(a.col_indices[std::size_t(at)])]; };
  const std::int64_t last_begin = a.row_offsets[std::size_t(last)], last_end = a.row_offsets[std::size_t(last + 1)];
  const std::int64_t first_begin = a.row_offsets[std::size_t(first)];
  const auto row = [](std::int64_t r) { return "row " + std::to_string(r); };
  return {
      {"the last entry of " + row(last) + " dropped", [&y, term, last, last_end] { y[std::size_t(last)] -= term(last_end - 1); }},
      {"the first entry of " + row(first) + " counted twice", [&y, term, first, first_begin] { y[std::size_t(first)] += term(first_begin); }},
      {"the first entry of " + row(last) + " with the wrong sign",
       [&y, term, last, last_begin] { y[std::size_t(last)] -= 2 * term(last_begin); }},
      {"the first entry of " + row(last) + " summed into the row before it", [&y, term, last, last_begin] {
         y[std::size_t(last)] -= term(last_begin);
         y[std::size_t(last - 1)] += term(last_begin);
       }},
  };
}

}  // namespace gemmkit::test

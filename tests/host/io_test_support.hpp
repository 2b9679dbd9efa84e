// Shared by the file-format tests: a per-test scratch folder, raw file access, error
// expectations and matrix comparisons.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "gemmkit/io.hpp"

namespace gemmkit::test {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "gemmkit_io_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string write_file(const std::string& name, const std::string& bytes) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  static std::string read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // Names in the scratch folder: shows leftover temporary files.
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      names.insert(entry.path().filename().string());
    return names;
  }

  std::string dir_;
};

// `f` must throw a gemmkit::Error of `category` whose one-line message contains `part`.
template <class F>
void expect_error(F&& f, ErrorCategory category, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one mentioning \"" << part << "\"";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.category(), category) << message;
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: " << message << "\nexpected: " << part;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message spans lines: " << message;
  }
}

// Input errors must also name the file.
template <class F>
void expect_input_error(F&& f, const std::string& path, const std::string& part) {
  expect_error(f, ErrorCategory::input, part);
  expect_error(f, ErrorCategory::input, path);
}

// Bit-for-bit equality, so that -0.0 and NaN payloads count.
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Values that trip up formats: extremes, signed zero, subnormals, inexact decimals.
template <class T>
std::vector<T> awkward_values() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return {T(0.1),
            T(-0.0),
            T(1) / T(3),
            T(-2.5),
            L::denorm_min(),
            L::min(),
            L::max(),
            L::lowest(),
            L::infinity(),
            -L::infinity(),
            L::quiet_NaN(),
            T(1e-30),
            T(16777216),
            T(3),
            T(-1e10),
            std::is_same_v<T, double> ? T(1e-300) : T(1e-38),
            T(123456789012345678.0)};
  } else {
    return {T(0), T(1), T(-1), L::max(), L::min(), T(42), T(-123456), T(L::max() - 1)};
  }
}

// A rows x cols matrix with leading dimension ld (-1: cols), filled from `values`
// cyclically; the padding past the width holds a marker no writer may copy.
template <class T>
Matrix<T> make_matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld = -1,
                      const std::vector<T>& values = awkward_values<T>()) {
  Matrix<T> m(rows, cols, ld);
  if (m.size() == 0) return m;  // an empty matrix stores nothing, padding included
  std::size_t k = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < m.ld(); ++j)
      m(i, j) = j < cols ? values[k++ % values.size()] : T(77);
  return m;
}

// Values equal as numbers, zeros with the same sign, NaN matching NaN.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

}  // namespace gemmkit::test

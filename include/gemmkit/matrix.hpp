// Row-major matrices with a leading dimension (the distance between rows, in elements).
// Matrix<T> owns its storage; MatrixView<T> borrows it. AnyMatrix holds a matrix of any
// host dtype, as read from a file.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit {

template <class T>
class MatrixView {
 public:
  MatrixView() = default;
  MatrixView(T* data, std::int64_t rows, std::int64_t cols, std::int64_t ld)
      : data_(data), rows_(rows), cols_(cols), ld_(ld) {
    if (rows < 0 || cols < 0 || ld < cols || ld < 1)
      fail(ErrorCategory::usage, "matrix view " + std::to_string(rows) + "x" +
                                     std::to_string(cols) + ": leading dimension " +
                                     std::to_string(ld) + " is smaller than the width");
  }
  // A const view of a mutable one.
  operator MatrixView<const T>() const { return {data_, rows_, cols_, ld_}; }

  T* data() const { return data_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t ld() const { return ld_; }
  std::int64_t size() const { return rows_ * cols_; }
  T& operator()(std::int64_t i, std::int64_t j) const { return data_[i * ld_ + j]; }

 private:
  T* data_ = nullptr;
  std::int64_t rows_ = 0, cols_ = 0, ld_ = 1;
};

template <class T>
class Matrix {
 public:
  using value_type = T;
  Matrix() = default;
  // Zero-filled rows x cols matrix; ld defaults to cols.
  Matrix(std::int64_t rows, std::int64_t cols, std::int64_t ld = -1);

  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t ld() const { return ld_; }
  std::int64_t size() const { return rows_ * cols_; }
  DType dtype() const { return dtype_of<T>; }
  T& operator()(std::int64_t i, std::int64_t j) { return storage_[i * ld_ + j]; }
  const T& operator()(std::int64_t i, std::int64_t j) const { return storage_[i * ld_ + j]; }

  MatrixView<T> view() { return {data(), rows_, cols_, ld_}; }
  MatrixView<const T> view() const { return {data(), rows_, cols_, ld_}; }

 private:
  std::vector<T> storage_;
  std::int64_t rows_ = 0, cols_ = 0, ld_ = 1;
};

// A matrix of any host dtype (f64, f32, i32, i64, f16, bf16).
using AnyMatrix = std::variant<Matrix<double>, Matrix<float>, Matrix<std::int32_t>,
                               Matrix<std::int64_t>, Matrix<Half>, Matrix<BFloat16>>;

DType dtype_of_any(const AnyMatrix& m);
std::int64_t rows_of(const AnyMatrix& m);
std::int64_t cols_of(const AnyMatrix& m);

// What a conversion from an integer dtype to a floating-point one rounded: how many entries
// changed value, and the first of them (0-based position, the value before and after); and
// what a conversion to a floating-point dtype overflowed: finite values past its range (f64
// to f32 beyond 3.4e38, to f16 beyond 65504) that became infinite, and the first of them.
struct ConversionReport {
  std::int64_t rounded = 0;
  std::int64_t row = -1, col = -1;
  std::string from, to;
  std::int64_t overflowed = 0;
  std::int64_t overflow_row = -1, overflow_col = -1;
  std::string overflow_from;
};

// Element-wise conversion to another dtype (tf32 converts to f32 storage). Converting to an
// integer type fails with a numeric error "row R, column C: VALUE ..." (1-based, the value as
// its dtype writes it) for the first entry that is not an integer or does not fit;
// converting to a floating-point type rounds to nearest (past its range to infinity), and
// `report`, if given, counts the integers that rounded to another finite value and the finite
// values that became infinite.
AnyMatrix convert(const AnyMatrix& m, DType to, ConversionReport* report = nullptr);
template <class To, class From>
Matrix<To> convert_matrix(MatrixView<const From> from);

// The dtype both operands are converted to when they differ: the wider float (f16 with bf16
// gives f32), the wider integer, and f64 when floats meet integers.
DType common_dtype(DType a, DType b);

// Overflow-checked element count rows*cols; throws an input error naming `what` if it overflows.
std::int64_t checked_element_count(std::int64_t rows, std::int64_t cols, const std::string& what);

}  // namespace gemmkit

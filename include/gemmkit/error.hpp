// Typed errors. The library throws gemmkit::Error; only the command line turns one
// into a message and an exit status.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gemmkit {

enum class ErrorCategory {
  usage,          // the caller asked for something that cannot be done (bad option, shape mismatch)
  input,          // a file or value is malformed, unreadable or unsupported
  device,         // CUDA, cuBLAS or driver failure
  out_of_memory,  // host or device allocation failed
  numeric,        // a result is not representable (integer overflow) or failed verification
  internal,       // a bug in gemmkit
  output,         // writing a result failed (full disk, file-size limit, closed pipe)
};

std::string_view category_name(ErrorCategory category);

class Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message)
      : std::runtime_error(message), category_(category) {}
  ErrorCategory category() const noexcept { return category_; }

 private:
  ErrorCategory category_;
};

// A result that does not fit its output type, never wrapped (the exact integer GEMM reports
// one such entry of C): where it lies, its exact value in decimal, and the type it missed.
class OverflowError : public Error {
 public:
  OverflowError(std::int64_t row, std::int64_t col, std::string value, std::string dtype);
  std::int64_t row() const noexcept { return row_; }
  std::int64_t col() const noexcept { return col_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& dtype() const noexcept { return dtype_; }
  // The same entry named in the transposed matrix, at (col, row).
  OverflowError transposed() const { return OverflowError(col_, row_, value_, dtype_); }

 private:
  std::int64_t row_, col_;
  std::string value_, dtype_;
};

// Exit status contract of the command line: 2 for usage and input errors, 1 otherwise.
int exit_status(ErrorCategory category);

[[noreturn]] inline void fail(ErrorCategory category, const std::string& message) {
  throw Error(category, message);
}

}  // namespace gemmkit

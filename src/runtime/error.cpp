#include "gemmkit/error.hpp"

#include <utility>

namespace gemmkit {

std::string_view category_name(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::usage: return "usage";
    case ErrorCategory::input: return "input";
    case ErrorCategory::device: return "device";
    case ErrorCategory::out_of_memory: return "out of memory";
    case ErrorCategory::numeric: return "numeric";
    case ErrorCategory::internal: return "internal";
    case ErrorCategory::output: return "output";
  }
  return "unknown";
}

OverflowError::OverflowError(std::int64_t row, std::int64_t col, std::string value, std::string dtype)
    : Error(ErrorCategory::numeric, "numeric overflow: the exact result at (" + std::to_string(row) + ", " +
                                        std::to_string(col) + ") is " + value + ", which does not fit " + dtype),
      row_(row),
      col_(col),
      value_(std::move(value)),
      dtype_(std::move(dtype)) {}

int exit_status(ErrorCategory category) {
  return category == ErrorCategory::usage || category == ErrorCategory::input ? 2 : 1;
}

}  // namespace gemmkit

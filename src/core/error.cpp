#include "gemmkit/error.hpp"

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

int exit_status(ErrorCategory category) {
  return category == ErrorCategory::usage || category == ErrorCategory::input ? 2 : 1;
}

}  // namespace gemmkit

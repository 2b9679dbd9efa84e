// Internal: the host matrix type behind a dtype, for code that makes an AnyMatrix.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "gemmkit/matrix.hpp"

namespace gemmkit::detail {

// Returns make(std::type_identity<T>{}) for the host storage type T of `dtype` (tf32 is
// stored as float); i8, which no host matrix holds, is a usage error.
template <class Make>
AnyMatrix make_host_matrix(DType dtype, Make&& make) {
  switch (dtype) {
    case DType::f64: return make(std::type_identity<double>{});
    case DType::f32:
    case DType::tf32: return make(std::type_identity<float>{});
    case DType::f16: return make(std::type_identity<Half>{});
    case DType::bf16: return make(std::type_identity<BFloat16>{});
    case DType::i32: return make(std::type_identity<std::int32_t>{});
    case DType::i64: return make(std::type_identity<std::int64_t>{});
    case DType::i8: break;
  }
  fail(ErrorCategory::usage, "dtype " + std::string(dtype_name(dtype)) +
                                 " has no host matrix type (use f64, f32, f16, bf16, i32 or i64)");
}

}  // namespace gemmkit::detail

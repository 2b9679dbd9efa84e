// Internal: the host storage type behind a dtype, the one switch from DType to a C++ type
// (visit_storage), and the host matrix made from it.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "gemmkit/matrix.hpp"

namespace gemmkit::detail {

// Returns f(std::type_identity<T>{}) for the storage type T of `dtype`: tf32 is stored as
// float, f16 and bf16 as Half and BFloat16.
template <class F>
decltype(auto) visit_storage(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return f(std::type_identity<double>{});
    case DType::f32:
    case DType::tf32: return f(std::type_identity<float>{});
    case DType::f16: return f(std::type_identity<Half>{});
    case DType::bf16: return f(std::type_identity<BFloat16>{});
    case DType::i8: return f(std::type_identity<std::int8_t>{});
    case DType::i32: return f(std::type_identity<std::int32_t>{});
    case DType::i64: return f(std::type_identity<std::int64_t>{});
  }
  fail(ErrorCategory::internal, "unknown dtype " + std::to_string(int(dtype)));
}

// Returns make(std::type_identity<T>{}) for the host storage type T of `dtype`; i8, which
// no host matrix holds, is a usage error.
template <class Make>
AnyMatrix make_host_matrix(DType dtype, Make&& make) {
  return visit_storage(dtype, [&]<class T>(std::type_identity<T> type) -> AnyMatrix {
    if constexpr (std::is_same_v<T, std::int8_t>)
      fail(ErrorCategory::usage, "dtype " + std::string(dtype_name(dtype)) +
                                     " has no host matrix type (use f64, f32, f16, bf16, i32 or i64)");
    else
      return make(type);
  });
}

}  // namespace gemmkit::detail

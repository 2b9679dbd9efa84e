// Element types known to gemmkit. Each has a host storage type except tf32 (stored as f32;
// the tensor cores read 19 of its bits) and i8, which no host matrix holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gemmkit/half.hpp"

namespace gemmkit {

enum class DType { f64, f32, tf32, f16, bf16, i8, i32, i64 };

std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);  // "f32", "float32", "i64", ...
std::size_t dtype_size(DType dtype);                      // bytes per stored element
bool is_integer(DType dtype);
const std::vector<DType>& all_dtypes();

// The C++ element type behind a DType that has a host storage type.
template <class T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct DTypeOf<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::bf16; };
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace gemmkit

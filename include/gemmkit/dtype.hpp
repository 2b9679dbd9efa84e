// Element types known to gemmkit. Storage types for f16/bf16 arrive with the tensor-core
// backend; until then files holding them are widened to f32 on load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

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
template <class T> inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace gemmkit

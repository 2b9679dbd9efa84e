#include "gemmkit/dtype.hpp"

#include <array>
#include <string>

namespace gemmkit {
namespace {

struct DTypeRecord {
  DType dtype;
  std::string_view name;
  std::string_view alias;  // numpy-style long name
  std::size_t size;
  bool integer;
};

// tf32 is stored as f32; the tensor cores read only 19 of its bits.
constexpr std::array<DTypeRecord, 8> kRecords{{
    {DType::f64, "f64", "float64", 8, false},
    {DType::f32, "f32", "float32", 4, false},
    {DType::tf32, "tf32", "tensorfloat32", 4, false},
    {DType::f16, "f16", "float16", 2, false},
    {DType::bf16, "bf16", "bfloat16", 2, false},
    {DType::i8, "i8", "int8", 1, true},
    {DType::i32, "i32", "int32", 4, true},
    {DType::i64, "i64", "int64", 8, true},
}};

const DTypeRecord& record(DType dtype) {
  for (const auto& r : kRecords)
    if (r.dtype == dtype) return r;
  return kRecords[0];  // unreachable: every enumerator has a record
}

}  // namespace

std::string_view dtype_name(DType dtype) { return record(dtype).name; }
std::size_t dtype_size(DType dtype) { return record(dtype).size; }
bool is_integer(DType dtype) { return record(dtype).integer; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& r : kRecords)
    if (name == r.name || name == r.alias) return r.dtype;
  if (name == "float" || name == "single") return DType::f32;
  if (name == "double") return DType::f64;
  return std::nullopt;
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (const auto& r : kRecords) v.push_back(r.dtype);
    return v;
  }();
  return all;
}

}  // namespace gemmkit

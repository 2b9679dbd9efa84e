// The 16-bit float formats as raw bits: f16 (IEEE binary16) and bf16 (the top half of an
// f32). Conversions from float round to nearest, ties to even, as the GPU's cvt.rn does.
// (Host matrix types for these dtypes are still to come; until then the benchmark and the
// GPU tests keep them as raw bytes.)
#pragma once

#include <cstdint>

namespace gemmkit {

std::uint16_t to_half_bits(float x);      // overflow gives +-inf; NaN stays NaN
std::uint16_t to_bfloat16_bits(float x);  // NaN stays NaN
float half_bits_to_float(std::uint16_t bits);
float bfloat16_bits_to_float(std::uint16_t bits);

}  // namespace gemmkit

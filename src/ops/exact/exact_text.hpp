// Internal: the decimal text of an exact GEMM's result, for the message that names an entry
// that does not fit C's dtype (src/ops/exact/cuda/exact_gemm.cu).
#pragma once

#include <cstdint>
#include <string>

namespace gemmkit::detail {

// alpha X + beta c0 in decimal, X given as `limbs` 64-bit two's-complement words (least
// significant first; limbs == 0: X = 0).
std::string exact_value_text(const std::uint64_t* x, int limbs, std::int64_t alpha, std::int64_t beta,
                             std::int64_t c0);

}  // namespace gemmkit::detail

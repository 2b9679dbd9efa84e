// Seeded random matrices. The generator and the conversions are our own, so the same seed
// gives the same matrix on every platform and compiler.
#pragma once

#include <cstdint>
#include <string>

#include "gemmkit/matrix.hpp"

namespace gemmkit {

struct Distribution {
  enum class Kind { uniform, normal, ints } kind = Kind::uniform;
  double lo = -1.0, hi = 1.0;  // uniform: [lo, hi); ints: every integer in [lo, hi]
  // "uniform" ([-1, 1)), "uniform:LO:HI", "normal" (mean 0, deviation 1), "ints:LO:HI".
  static Distribution parse(std::string_view text);
  std::string to_string() const;
};

AnyMatrix random_matrix(std::int64_t rows, std::int64_t cols, DType dtype,
                        const Distribution& distribution, std::uint64_t seed);
template <class T>
void fill_random(MatrixView<T> m, const Distribution& distribution, std::uint64_t seed);

}  // namespace gemmkit

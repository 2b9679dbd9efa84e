// Deterministic matrices for exercises and tests: Pascal matrices (binomial coefficients),
// the sine and cosine matrices of the classic first GPU matrix-multiply program, identity,
// ones and a matrix of linear indices. Exact kinds are written exactly or not at all: an
// entry its dtype would round or overflow is an error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/matrix.hpp"

namespace gemmkit {

enum class MatrixKind {
  random,            // seeded random entries (random.hpp); not made by generate_matrix
  pascal,            // lower triangular: entry (i, j) = binom(i, j), 0 above the diagonal
  pascal_inverse,    // the inverse of `pascal`: (-1)^(i-j) binom(i, j)
  pascal_upper,      // the transpose of `pascal`: binom(j, i)
  pascal_symmetric,  // binom(i + j, i) = pascal times pascal_upper
  sin_rows,          // entry (i, j) = sin(i): every row constant
  cos_cols,          // entry (i, j) = cos(j): every column constant
  identity,          // 1 on the diagonal, 0 elsewhere
  ones,              // every entry 1
  index,             // entry (i, j) = i * cols + j, its position in row-major memory
};

struct MatrixKindInfo {
  MatrixKind kind;
  std::string_view name;     // as --kind spells it
  std::string_view formula;  // entry (i, j), 0-based
  bool exact;                // integer entries, refused where the dtype cannot hold one
};

const std::vector<MatrixKindInfo>& matrix_kinds();
const MatrixKindInfo& matrix_kind_info(MatrixKind kind);
std::optional<MatrixKind> parse_matrix_kind(std::string_view name);

// A rows x cols matrix of `kind` (not random) in `dtype` (f64, f32, tf32 as f32, f16, bf16,
// i32, i64). Exact kinds fail with a usage error (a request the dtype cannot hold is bad
// input) naming the first entry the dtype cannot hold exactly, and the largest square size
// that fits; sin_rows and cos_cols are rounded
// once from double and refuse integer dtypes.
AnyMatrix generate_matrix(MatrixKind kind, std::int64_t rows, std::int64_t cols, DType dtype);

}  // namespace gemmkit

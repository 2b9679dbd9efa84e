// Internal: the modular GEMM's checks, with or without its pointers (a workspace query
// sizes by the shapes alone; see gemmkit/modular.hpp).
#pragma once

#include "gemmkit/modular.hpp"

namespace gemmkit::detail {

// validate(p) when `pointers`; otherwise every check but those of the pointers (null
// operands, no output), an output counting as asked for when its leading dimension is set.
void validate_modular(const ModularGemmProblem& p, bool pointers);

// The longest K whose int32 sums of products of residues cannot overflow for p's moduli:
// a longer K runs in chunks of at most this many (modular_gemm.cu).
std::int64_t modular_k_limit(const ModularGemmProblem& p);

}  // namespace gemmkit::detail

// What the host half of the CRT rebuild (crt.cpp) calls of its CUDA part (cuda/crt.cu),
// through GEMMKIT_CUDA_PART: a build without CUDA compiles neither.
#pragma once

#include "arith/crt_math.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::crt_detail {

// Queues the rebuild of a validated problem on `stream` of ctx's device, with `words` of
// work width (work_words(k)).
void cuda_rebuild(Context& ctx, const CrtConstants& k, int words, const CrtProblem& problem,
                  Stream stream);

}  // namespace gemmkit::crt_detail

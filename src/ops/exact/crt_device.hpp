// The seam between the host code of the CRT rebuild (src/ops/exact/crt.cpp) and its device side:
// src/ops/exact/cuda/crt.cu in a CUDA build, src/cuda_absent/crt_absent.cpp without nvcc.
#pragma once

#include "arith/crt_math.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::crt_detail {

// Queues the rebuild of a validated problem on `stream` of ctx's device, with `words` of
// work width (work_words(k)).
void cuda_rebuild(Context& ctx, const CrtConstants& k, int words, const CrtProblem& problem,
                  Stream stream);

}  // namespace gemmkit::crt_detail

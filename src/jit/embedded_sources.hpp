// Internal: the kernel headers compiled on first use, as text (generated into the build by
// cmake/embed_sources.cmake from the list in src/CMakeLists.txt), and the stand-ins for the
// standard headers they include (src/jit/shims/). NVRTC gets them all as the program's
// headers, by the names the sources include them by.
#pragma once

#include <cstddef>

namespace gemmkit::jit {

struct EmbeddedSource {
  const char* name;  // as included: "ops/gemm/cuda/hopper/hopper.cuh", "cstdint"
  const char* text;
};

extern const EmbeddedSource kEmbeddedSources[];
extern const std::size_t kEmbeddedSourceCount;

}  // namespace gemmkit::jit

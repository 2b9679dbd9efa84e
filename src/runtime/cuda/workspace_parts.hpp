// Internal: the size of one part of a workspace laid out in parts (the CUDA kernels that take
// scratch for several things at once).
#pragma once

#include <cstddef>

#include "gemmkit/context.hpp"

namespace gemmkit {

// bytes rounded up to a whole number of kWorkspaceAlignment, so that the next part starts on
// the boundary too.
inline constexpr std::size_t workspace_aligned(std::size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

}  // namespace gemmkit

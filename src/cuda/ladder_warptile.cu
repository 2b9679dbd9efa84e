#include "cuda/ladder.hpp"

namespace gemmkit::cuda {

void register_warptile_kernels(Registry&) {}

}  // namespace gemmkit::cuda

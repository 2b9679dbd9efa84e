#include "cuda/ladder.hpp"

namespace gemmkit::cuda {

void register_seed_kernels(Registry&) {}

}  // namespace gemmkit::cuda

#include "cuda/ladder.hpp"

namespace gemmkit::cuda {

void register_simt_kernels(Registry&) {}

}  // namespace gemmkit::cuda

// Every CUDA kernel compiled into this build, references first.
#include "ops/gemm/cuda/ladder.hpp"

namespace gemmkit::detail {

void register_cuda_kernels(Registry<GemmProblem>& registry) {
  cuda::register_cublas_kernels(registry);
  cuda::register_seed_kernels(registry);
  cuda::register_simt_kernels(registry);
  cuda::register_warptile_kernels(registry);
  cuda::register_stream_k_kernels(registry);
  cuda::register_tensor_kernels(registry);
  cuda::register_hopper_kernels(registry);
  cuda::register_skinny_kernels(registry);
  cuda::register_composed_kernels(registry);
  cuda::register_i8_kernels(registry);
  cuda::register_exact_kernels(registry);
  cuda::register_ozaki_kernels(registry);
}

}  // namespace gemmkit::detail

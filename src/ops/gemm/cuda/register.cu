// Every CUDA GEMM part compiled into this build, references first, in ladder order. A part is
// a file that defines `void cuda::register_<part>_kernels(Registry<GemmProblem>&)`: a track
// of rungs that share their launcher helpers (<track>/ladder_<track>.cu), or a rung's own stem
// (<track>/NN_name.cu beside its kernel, NN_name.cuh). A new part is its file and one line here.
#include <vector>

#include "gemmkit/registry.hpp"
#include "runtime/cuda/jit_kernels.hpp"

#define GEMMKIT_CUDA_GEMM_PARTS(PART)                                                          \
  PART(cublas)    /* cublas.cu: the references */                                              \
  PART(seed)      /* seeds/ladder_seeds.cu: rungs 1-6 */                                       \
  PART(simt)      /* simt/ladder_simt.cu: rungs 7-11 */                                        \
  PART(warptile)  /* simt/ladder_warptile.cu: rungs 12-14 */                                   \
  PART(stream_k)  /* simt/15_stream_k.cu: rung 15, a stem of its own */                         \
  PART(tensor)    /* tensor/ladder_tensor.cu: rungs 16-17 */                                   \
  PART(hopper)    /* hopper/ladder_hopper.cu: rungs 18-19, 21 */                               \
  PART(skinny)    /* tensor/20_skinny.cu: rung 20, a stem of its own */                        \
  PART(composed)  /* ladder_composed.cu: rungs 22-23 */                                        \
  PART(i8)        /* hopper/24_wgmma_i8.cu: rung 24 (int8), a stem of its own */               \
  PART(exact)     /* ops/exact/cuda/exact_gemm.cu: exact i32/i64 by residues */                \
  PART(ozaki)     /* ops/ozaki/cuda/ozaki_gemm.cu: f64/f32 emulated on int8 tensor cores */

// The parts whose kernels are compiled on first use (runtime/cuda/jit_kernels.hpp): each
// defines `std::vector<const JitKernel*> cuda::<part>_jit_kernels()`, every kernel it can launch.
#define GEMMKIT_CUDA_JIT_PARTS(PART)                                                      \
  PART(simt)     /* simt/ladder_simt.cu: rungs 7, 10, 11 */                                \
  PART(stream_k) /* simt/15_stream_k.cu: rung 15 */                                        \
  PART(tensor)   /* tensor/ladder_tensor.cu: rungs 16-17 */                                \
  PART(hopper)   /* hopper/ladder_hopper.cu: rungs 18, 19, 21 */                           \
  PART(skinny)   /* tensor/20_skinny.cu: rung 20 */                                        \
  PART(i8)       /* hopper/24_wgmma_i8.cu: rung 24 (int8, and the modular products) */

namespace gemmkit {
namespace cuda {
#define GEMMKIT_DECLARE_PART(part) void register_##part##_kernels(Registry<GemmProblem>& registry);
GEMMKIT_CUDA_GEMM_PARTS(GEMMKIT_DECLARE_PART)
#undef GEMMKIT_DECLARE_PART
#define GEMMKIT_DECLARE_JIT_PART(part) std::vector<const JitKernel*> part##_jit_kernels();
GEMMKIT_CUDA_JIT_PARTS(GEMMKIT_DECLARE_JIT_PART)
#undef GEMMKIT_DECLARE_JIT_PART

std::vector<const JitKernel*> all_jit_kernels() {
  std::vector<const JitKernel*> out;
#define GEMMKIT_ADD_JIT_PART(part)                   \
  for (const JitKernel* k : part##_jit_kernels()) out.push_back(k);
  GEMMKIT_CUDA_JIT_PARTS(GEMMKIT_ADD_JIT_PART)
#undef GEMMKIT_ADD_JIT_PART
  return out;
}
}  // namespace cuda

void detail::register_cuda_kernels(Registry<GemmProblem>& registry) {
#define GEMMKIT_ADD_PART(part) cuda::register_##part##_kernels(registry);
  GEMMKIT_CUDA_GEMM_PARTS(GEMMKIT_ADD_PART)
#undef GEMMKIT_ADD_PART
}

}  // namespace gemmkit

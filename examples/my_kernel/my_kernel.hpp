// The kernels this example adds to gemmkit: each is a gemmkit::KernelEntry, the same record
// gemmkit's own kernels are registered with (see gemmkit/registry.hpp).
#pragma once

#include <gemmkit/registry.hpp>

// A plain CPU kernel: three loops, the rows of C shared among OpenMP threads.
gemmkit::KernelEntry my_cpu_kernel();

#ifdef MY_KERNEL_CUDA
// A CUDA kernel: 16 x 16 tiles of A and B staged in shared memory (cuda_kernel.cu).
gemmkit::KernelEntry my_cuda_kernel();
#endif

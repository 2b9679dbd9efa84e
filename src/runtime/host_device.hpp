// GEMMKIT_HOST_DEVICE: marks a function that host code and CUDA device code both call.
#pragma once

#if defined(__CUDACC__)
#define GEMMKIT_HOST_DEVICE __host__ __device__
#else
#define GEMMKIT_HOST_DEVICE
#endif

// Host time of one launch of the same kernel four ways (diagnostic, not part of the tree):
// the runtime with a stub (ahead of time), the runtime with a cudaKernel_t (what the JIT
// path does), the driver with the CUfunction of that kernel, the driver with the CUkernel.
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
struct Args { void* a; void* b; void* c; long long m, n, k, lda, ldb, ldc; float alpha, beta; int flags; };
struct Sk { int dp, sk; float* p; unsigned* f; unsigned launch; int splits; };
struct Batch { int count; bool sa, sb; long long stride; };
extern "C" __global__ void probe(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
                                 const __grid_constant__ CUtensorMap mc, const Args g, const Sk sk, const Batch b) {
  if (g.flags == 12345 && threadIdx.x == 0) *(int*)g.c = sk.dp + b.count;
}
#define CK(x) do { auto e = (x); if (e) { std::printf("%s failed: %d line %d\n", #x, int(e), __LINE__); return 1; } } while (0)
using GetFn = CUresult (*)(CUfunction*, CUkernel);
using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
int main(int argc, char** argv) {
  CK(cudaSetDevice(0)); CK(cudaFree(nullptr));
  std::ifstream in(argv[1], std::ios::binary); std::stringstream ss; ss << in.rdbuf(); const std::string cubin = ss.str();
  cudaLibrary_t lib; cudaKernel_t kern;
  CK(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CK(cudaLibraryGetKernel(&kern, lib, "probe"));
  void *p1 = nullptr, *p2 = nullptr; cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuKernelGetFunction", &p1, 12000, cudaEnableDefault, &q));
  CK(cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &p2, 12000, cudaEnableDefault, &q));
  CUfunction fn; CK(((GetFn)p1)(&fn, (CUkernel)kern));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUtensorMap ma{}, mb{}, mc{}; Args g{}; Sk sk{}; Batch b{1};
  void* ptrs[] = {&ma, &mb, &mc, &g, &sk, &b};
  cudaLaunchAttribute attr{}; attr.id = cudaLaunchAttributeClusterDimension; attr.val.clusterDim = {2, 1, 1};
  cudaLaunchConfig_t rc{}; rc.gridDim = dim3(2); rc.blockDim = dim3(128); rc.stream = s; rc.attrs = &attr; rc.numAttrs = 1;
  CUlaunchAttribute dattr{}; dattr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; dattr.value.clusterDim.x = 2; dattr.value.clusterDim.y = 1; dattr.value.clusterDim.z = 1;
  CUlaunchConfig dc{}; dc.gridDimX = 2; dc.gridDimY = 1; dc.gridDimZ = 1; dc.blockDimX = 128; dc.blockDimY = 1; dc.blockDimZ = 1; dc.hStream = (CUstream)s; dc.attrs = &dattr; dc.numAttrs = 1;
  auto path = [&](int w) -> int {
    switch (w) {
      case 0: return cudaLaunchKernelExC(&rc, (const void*)probe, ptrs);
      case 1: return cudaLaunchKernelExC(&rc, (const void*)kern, ptrs);
      case 2: return ((LaunchEx)p2)(&dc, fn, ptrs, nullptr);
      default: return ((LaunchEx)p2)(&dc, (CUfunction)kern, ptrs, nullptr);
    }
  };
  const char* names[] = {"runtime, stub (ahead of time)", "runtime, cudaKernel_t (JIT today)", "driver, CUfunction", "driver, CUkernel"};
  for (int w = 0; w < 4; ++w) for (int i = 0; i < 200; ++i) CK(path(w));
  CK(cudaStreamSynchronize(s));
  std::vector<double> t[4];
  for (int trial = 0; trial < 9; ++trial)
    for (int w = 0; w < 4; ++w) {
      const int n = 500;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) if (path(w)) return 1;
      auto t1 = std::chrono::steady_clock::now();
      t[w].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
      CK(cudaStreamSynchronize(s));
    }
  for (int w = 0; w < 4; ++w) { std::sort(t[w].begin(), t[w].end()); std::printf("%-36s host us/launch: median %.2f  min %.2f\n", names[w], t[w][4], t[w][0]); }
  CK(cudaGetLastError());
  return 0;
}

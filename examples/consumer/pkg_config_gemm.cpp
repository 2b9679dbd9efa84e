// The smallest user of gemmkit, built without CMake from gemmkit.pc:
//   c++ -std=c++20 pkg_config_gemm.cpp $(pkg-config --cflags --libs gemmkit)
// A 2x3 times 3x2 f64 product on the CPU context, checked entry by entry.
#include <cstdio>

#include <gemmkit/context.hpp>
#include <gemmkit/gemm.hpp>
#include <gemmkit/registry.hpp>
#include <gemmkit/version.hpp>

int main() {
  const double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  const double expected[4] = {58, 64, 139, 154};
  double c[4] = {};
  gemmkit::Context cpu(gemmkit::Backend::cpu);
  gemmkit::GemmProblem p;
  p.dtype = gemmkit::DType::f64;
  p.m = 2, p.n = 2, p.k = 3;
  p.a = a, p.lda = 3;
  p.b = b, p.ldb = 2;
  p.c = c, p.ldc = 2;
  const gemmkit::KernelEntry& kernel = gemmkit::gemm(cpu, p);
  for (int i = 0; i < 4; ++i)
    if (c[i] != expected[i]) {
      std::printf("MISMATCH: C[%d] = %g, expected %g (kernel %s)\n", i, c[i], expected[i], kernel.name.c_str());
      return 1;
    }
  std::printf("ok: gemmkit %s via pkg-config, kernel %s: C = [%g %g; %g %g]\n", GEMMKIT_VERSION,
              kernel.name.c_str(), c[0], c[1], c[2], c[3]);
  return 0;
}

// The exact integer GEMM against cuBLAS DGEMM of the same order, in one run (the
// target: exact i32 at 8192^3, |a|, |b| < 2^31, faster than DGEMM, which cannot even give
// the exact answer). Both on one stream, timed with CUDA events, after warm-up, in ABBA
// order, medians. The exact GEMM writes its result as limbs (the results need 76 bits); the
// call includes its one wait for the bound. Also, to show where the time goes: the
// modular_gemm of the same moduli alone, and crt_rebuild alone. A sample of entries is
// checked against a 128-bit CPU dot product.
//   gemmkit_exact_bench [N] [--dtype i32|i64] [--reps R] [--json FILE]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.hpp"
#include "bench_meta.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"

namespace {

__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

using gemmkit::bench::check;
using gemmkit::bench::time_ms;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}


}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 8192;
  int reps = 10;
  std::string dtype = "i32", json;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dtype" && i + 1 < argc) dtype = argv[++i];
    else if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--json" && i + 1 < argc) json = argv[++i];
    else n = std::atoll(arg.c_str());
  }
  if (!gemmkit::cuda_device_available()) {
    std::fprintf(stderr, "exact_bench: %s\n", gemmkit::no_device_message().c_str());
    return 77;
  }
  const bool i64 = dtype == "i64";
  const std::size_t es = i64 ? 8 : 4, count = std::size_t(n * n);
  // Full-range random operands: every |a|, |b| up to 2^31 (i32) or 2^63 (i64).
  std::vector<unsigned char> ha(count * es), hb(count * es);
  {
    std::mt19937_64 rng(19);
    for (std::size_t i = 0; i < ha.size(); i += 8) {
      const std::uint64_t x = rng(), y = rng();
      std::memcpy(&ha[i], &x, std::min<std::size_t>(8, ha.size() - i));
      std::memcpy(&hb[i], &y, std::min<std::size_t>(8, hb.size() - i));
    }
  }
  gemmkit::Context ctx(gemmkit::Backend::cuda);
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "stream");
  void *a, *b, *c, *words, *ws;
  gemmkit::GemmProblem p;
  p.dtype = i64 ? gemmkit::DType::i64 : gemmkit::DType::i32;
  p.m = p.n = p.k = n;
  p.lda = p.ldb = p.ldc = n;
  const int limbs = gemmkit::exact_output_limbs(p);
  const std::size_t ws_bytes = gemmkit::exact_integer_gemm_workspace_bytes(ctx, p);
  check(cudaMalloc(&a, count * es), "malloc A");
  check(cudaMalloc(&b, count * es), "malloc B");
  check(cudaMalloc(&c, count * es), "malloc C");
  check(cudaMalloc(&words, count * std::size_t(limbs) * 8), "malloc limbs");
  check(cudaMalloc(&ws, ws_bytes), "malloc workspace");
  check(cudaMemcpy(a, ha.data(), ha.size(), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(b, hb.data(), hb.size(), cudaMemcpyHostToDevice), "copy B");
  p.a = a, p.b = b, p.c = c;
  const gemmkit::ExactLimbsOut to{static_cast<std::uint64_t*>(words), n, limbs};
  gemmkit::ExactPlan plan;
  auto exact = [&] { plan = gemmkit::exact_integer_gemm(ctx, p, stream, gemmkit::Workspace{ws, ws_bytes}, &to); };

  // DGEMM of the same order on random doubles.
  double *da, *db, *dc;
  check(cudaMalloc(&da, count * 8), "malloc dA");
  check(cudaMalloc(&db, count * 8), "malloc dB");
  check(cudaMalloc(&dc, count * 8), "malloc dC");
  {
    std::vector<double> hd(count);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : hd) x = u(rng);
    check(cudaMemcpy(da, hd.data(), count * 8, cudaMemcpyHostToDevice), "copy dA");
    for (auto& x : hd) x = u(rng);
    check(cudaMemcpy(db, hd.data(), count * 8, cudaMemcpyHostToDevice), "copy dB");
  }
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  check(cublasSetStream(h, stream), "cublasSetStream");
  const double one = 1, zero = 0;
  auto dgemm = [&] {
    check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, da, int(n), db, int(n), &zero, dc,
                      int(n)),
          "cublasDgemm");
  };

  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  for (int w = 0; w < 2; ++w) {  // warm-up: kernels loaded, cuBLAS's choice made, clocks up
    exact();
    dgemm();
  }
  check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> t_exact, t_dgemm;
  for (int r = 0; r < reps; ++r) {
    if (r % 2 == 0) {
      t_exact.push_back(time_ms(stream, e0, e1, exact));
      t_dgemm.push_back(time_ms(stream, e0, e1, dgemm));
    } else {
      t_dgemm.push_back(time_ms(stream, e0, e1, dgemm));
      t_exact.push_back(time_ms(stream, e0, e1, exact));
    }
  }
  const gemmkit::ExactGemmReport report = gemmkit::exact_gemm_report(p, stream, gemmkit::Workspace{ws, ws_bytes});

  // The parts: modular_gemm of the plan's moduli on the planes as they are, and the CRT.
  std::vector<double> t_gemm, t_crt;
  if (plan.method == gemmkit::ExactPlan::Method::residues) {
    const std::int64_t kp = (n + 15) / 16 * 16, np = kp;
    gemmkit::ModularGemmProblem g;
    g.m = g.n = n, g.k = kp;
    g.moduli.assign(gemmkit::int8_moduli().begin(), gemmkit::int8_moduli().begin() + plan.moduli);
    // Planes: the workspace's own A, B, C regions are internal; fresh ones here.
    std::int8_t *pa, *pb, *pc;
    check(cudaMalloc(&pa, std::size_t(plan.moduli) * std::size_t(n * kp)), "malloc planes");
    check(cudaMalloc(&pb, std::size_t(plan.moduli) * std::size_t(n * kp)), "malloc planes");
    check(cudaMalloc(&pc, std::size_t(plan.moduli) * std::size_t(n * np)), "malloc planes");
    {
      // Residue-like random planes (the tensor cores' clocks depend on the data): one
      // random plane copied into every modulus's place.
      std::vector<std::int8_t> plane(std::size_t(n * kp));
      std::mt19937_64 rng(11);
      for (std::size_t i = 0; i < plane.size(); i += 8) {
        const std::uint64_t r = rng();
        for (std::size_t byte = 0; byte < 8 && i + byte < plane.size(); ++byte)
          plane[i + byte] = std::int8_t(int((r >> (8 * byte)) & 255) % 251 - 125);
      }
      for (int q = 0; q < plan.moduli; ++q) {
        check(cudaMemcpy(pa + std::size_t(q) * plane.size(), plane.data(), plane.size(), cudaMemcpyHostToDevice), "planes");
        check(cudaMemcpy(pb + std::size_t(q) * plane.size(), plane.data(), plane.size(), cudaMemcpyHostToDevice), "planes");
      }
    }
    g.a = pa, g.lda = kp, g.stride_a = n * kp;
    g.b = pb, g.ldb = kp, g.stride_b = n * kp;
    g.c = pc, g.ldc = np, g.stride_c = n * np;
    const std::size_t gb = gemmkit::modular_gemm_workspace_bytes(ctx, g);
    void* gws = nullptr;
    if (gb) check(cudaMalloc(&gws, gb), "malloc gemm workspace");
    auto mg = [&] { gemmkit::modular_gemm(ctx, g, stream, gemmkit::Workspace{gws, gb}); };
    mg();
    for (int r = 0; r < std::max(3, reps / 2); ++r) t_gemm.push_back(time_ms(stream, e0, e1, mg));
    gemmkit::CrtProblem crt;
    crt.rows = crt.cols = n;
    crt.moduli = g.moduli;
    crt.residues = pc, crt.ld = np, crt.plane_stride = n * np;
    crt.out = static_cast<std::uint64_t*>(words), crt.ld_out = n, crt.limbs = plan.limbs;
    auto cr = [&] { gemmkit::crt_rebuild(ctx, crt, stream); };
    cr();
    for (int r = 0; r < std::max(3, reps / 2); ++r) t_crt.push_back(time_ms(stream, e0, e1, cr));
    check(cudaStreamSynchronize(stream), "parts");
    // Run the exact GEMM once more so that `words` holds its result for the check below.
    exact();
    cudaFree(pa), cudaFree(pb), cudaFree(pc);
    if (gws) cudaFree(gws);
  }

  // A sample of entries against CPU dot products: 128-bit sums (i32), or 192-bit ones of
  // 128-bit products (i64).
  std::vector<std::uint64_t> got(count * std::size_t(limbs));
  check(cudaMemcpy(got.data(), words, got.size() * 8, cudaMemcpyDeviceToHost), "copy limbs");
  int checked = 0, wrong = 0;
  if (i64) {
    const auto* A = reinterpret_cast<const std::int64_t*>(ha.data());
    const auto* B = reinterpret_cast<const std::int64_t*>(hb.data());
    std::mt19937_64 rng(7);
    for (int s = 0; s < 64; ++s) {
      const std::int64_t i = std::int64_t(rng() % std::uint64_t(n)), j = std::int64_t(rng() % std::uint64_t(n));
      std::uint64_t acc[3] = {0, 0, 0};  // two's complement, least significant first
      for (std::int64_t l = 0; l < n; ++l) {
        const int128 prod = int128(A[i * n + l]) * int128(B[l * n + j]);  // |prod| < 2^126
        const std::uint64_t add[3] = {std::uint64_t(uint128(prod)), std::uint64_t(uint128(prod) >> 64),
                                      prod < 0 ? ~0ull : 0ull};
        uint128 carry = 0;
        for (int w = 0; w < 3; ++w) {
          const uint128 t = uint128(acc[w]) + add[w] + carry;
          acc[w] = std::uint64_t(t);
          carry = t >> 64;
        }
      }
      const std::uint64_t* x = &got[std::size_t((i * n + j) * limbs)];
      bool ok = true;
      for (int w = 0; w < limbs; ++w) ok = ok && x[w] == (w < 3 ? acc[w] : (std::int64_t(acc[2]) < 0 ? ~0ull : 0ull));
      wrong += !ok;
      ++checked;
    }
  } else {
    const auto* A = reinterpret_cast<const std::int32_t*>(ha.data());
    const auto* B = reinterpret_cast<const std::int32_t*>(hb.data());
    std::mt19937_64 rng(7);
    for (int s = 0; s < 256; ++s) {
      const std::int64_t i = std::int64_t(rng() % std::uint64_t(n)), j = std::int64_t(rng() % std::uint64_t(n));
      int128 acc = 0;
      for (std::int64_t l = 0; l < n; ++l) acc += int128(std::int64_t(A[i * n + l]) * std::int64_t(B[l * n + j]));
      const std::uint64_t* x = &got[std::size_t((i * n + j) * limbs)];
      const int128 g = int128(uint128(x[0]) | (uint128(x[1]) << 64));
      bool ok = g == acc;
      for (int w = 2; w < limbs; ++w) ok = ok && x[w] == (acc < 0 ? ~0ull : 0ull);
      wrong += !ok;
      ++checked;
    }
  }

  const double me = median(t_exact), md = median(t_dgemm);
  const double flops = 2.0 * double(n) * double(n) * double(n);
  std::printf("device: %s\n", gemmkit::query_devices().devices.empty() ? "?" : gemmkit::query_devices().devices[0].name.c_str());
  std::printf("exact %s GEMM %lldx%lldx%lld, full-range inputs: %s\n", dtype.c_str(), (long long)n, (long long)n,
              (long long)n, plan.describe().c_str());
  std::printf("  exact_integer_gemm (limbs out, %d words): median %.3f ms (%.1f TOPS-equivalent) over %d runs\n",
              limbs, me, flops / me / 1e9, reps);
  std::printf("  cuBLAS DGEMM same order:               median %.3f ms (%.1f TFLOP/s)\n", md, flops / md / 1e9);
  std::printf("  exact / DGEMM time: %.3f (%s)\n", me / md, me < md ? "exact is faster" : "DGEMM is faster");
  if (!t_gemm.empty())
    std::printf("  parts: modular_gemm of %d moduli %.3f ms, crt_rebuild %.3f ms, the rest (bound, conversion, "
                "epilogue, wait) %.3f ms\n",
                plan.moduli, median(t_gemm), median(t_crt), me - median(t_gemm) - median(t_crt));
  std::printf("  overflow report: %s; sampled entries checked against exact CPU sums: %d, wrong: %d\n",
              report.overflow() ? "OVERFLOW (unexpected with limbs out)" : "none", checked, wrong);
  if (!json.empty()) {
    if (FILE* f = std::fopen(json.c_str(), "w")) {
      std::fprintf(f,
                   "{%s, \"n\": %lld, \"dtype\": \"%s\", \"plan\": \"%s\", \"exact_ms\": %.4f, \"dgemm_ms\": %.4f, "
                   "\"modular_gemm_ms\": %.4f, \"crt_ms\": %.4f, \"checked\": %d, \"wrong\": %d}\n",
                   gemmkit::bench::meta_member(ctx).c_str(), (long long)n, dtype.c_str(), plan.describe().c_str(), me, md, t_gemm.empty() ? 0.0 : median(t_gemm),
                   t_crt.empty() ? 0.0 : median(t_crt), checked, wrong);
      std::fclose(f);
    }
  }
  cublasDestroy(h);
  return wrong == 0 ? 0 : 1;
}

// The Ozaki emulation (gemmkit/ozaki.hpp, cuda_ozaki_f64 / _f32) beside native cuBLAS
// (DGEMM, or pedantic SGEMM for --dtype f32) and cuBLAS's own emulation (FP64:
// CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH with the EAGER strategy; FP32:
// CUBLAS_FP32_EMULATED_BF16X9_MATH, which falls back to native SGEMM on Hopper), in one
// run, square n x n x n: time (CUDA events, 2 warm-up runs, then `reps` runs of every
// variant in turn, the median), TFLOP/s, speed over native, and the relative error per
// entry (max and median) against a double-double reference computed on the host for
// `samples` entries spread over C. The moduli and bits printed are the plan that ran.
//
// Inputs: u 2^e with u uniform in [1, 2), a random sign and e uniform in [-spread,
// spread] (--spread 0: uniform magnitudes in [1, 2)); --cancel makes the terms cancel in
// pairs to 20 bits.
//
//   gemmkit_ozaki_bench [--dtype f64|f32] [--sizes 4096,8192] [--moduli 0,14,16]
//                       [--spread E] [--cancel] [--reps R] [--samples S] [--json FILE]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_cuda.hpp"
#include "bench_meta.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/ozaki.hpp"

namespace {

using gemmkit::bench::check;

// x[i] = +-u 2^e from a hash of (i, seed).
template <class T>
__global__ void fill(T* x, std::size_t count, std::uint32_t seed, int spread) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = (std::uint64_t(i) + 0x9e3779b97f4a7c15ull * (seed + 1)) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    const double u = 1.0 + double(h >> 12) * 0x1p-52;
    const int e = spread == 0 ? 0 : int((h >> 3) % std::uint64_t(2 * spread + 1)) - spread;
    x[i] = T((h & 1 ? -1.0 : 1.0) * ldexp(u, e));
  }
}

// Terms that cancel in pairs to 20 bits: for odd p, A(i, p) = -A(i, p - 1) (1 +
// 2^-20) and B's row p equal to its row p - 1 (A, B n x n row-major).
template <class T>
__global__ void make_cancelling(T* a, T* b, long long n) {
  const std::size_t count = std::size_t(n) * std::size_t(n);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if ((i % std::size_t(n)) % 2 == 1) a[i] = T(-double(a[i - 1]) * (1 + 0x1p-20));
    if ((i / std::size_t(n)) % 2 == 1) b[i] = b[i - std::size_t(n)];
  }
}

std::vector<long long> parse_list(const std::string& text) {
  std::vector<long long> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(std::atoll(text.substr(at, comma - at).c_str()));
    at = comma + 1;
  }
  return out;
}

struct Row {
  std::string variant;
  long long n = 0;
  int moduli = 0, bits = 0;
  double ms = 0, tflops = 0, over_native = 0, max_error = 0, median_error = 0;
};

// Column-major C = B A (square n): row-major C = A B on the same memory.
cublasStatus_t native_gemm(cublasHandle_t h, int n, double one, const double* b, const double* a, double zero,
                           double* c) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
}
cublasStatus_t native_gemm(cublasHandle_t h, int n, float one, const float* b, const float* a, float zero, float* c) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
}

// One size: every variant's errors at the sampled entries, then its timings;
// rows appended.
template <class T>
void bench_size(gemmkit::Context& ctx, cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, cublasHandle_t native,
                cublasHandle_t emulated, long long n, const std::string& moduli_text, int spread, bool cancel,
                int samples, int reps, std::vector<Row>& rows) {
  using namespace gemmkit;
  const std::size_t count = std::size_t(n) * std::size_t(n);
  T *a, *b, *c;
  check(cudaMalloc(&a, count * sizeof(T)), "cudaMalloc A");
  check(cudaMalloc(&b, count * sizeof(T)), "cudaMalloc B");
  check(cudaMalloc(&c, count * sizeof(T)), "cudaMalloc C");
  fill<T><<<4096, 256, 0, stream>>>(a, count, 1, spread);
  fill<T><<<4096, 256, 0, stream>>>(b, count, 2, spread);
  if (cancel) make_cancelling<T><<<4096, 256, 0, stream>>>(a, b, n);
  check(cudaGetLastError(), "fill");
  std::vector<T> ha(count), hb(count);
  check(cudaMemcpyAsync(ha.data(), a, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "copy A");
  check(cudaMemcpyAsync(hb.data(), b, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "copy B");
  check(cudaStreamSynchronize(stream), "sync");
  const T one = 1, zero = 0;
  auto dgemm = [&](cublasHandle_t h) {
    return [&, h] { check(native_gemm(h, int(n), one, b, a, zero, c), "cuBLAS GEMM"); };
  };
  GemmProblem p;
  p.dtype = std::is_same_v<T, double> ? DType::f64 : DType::f32;
  p.m = p.n = p.k = n;
  p.a = a, p.lda = n, p.b = b, p.ldb = n, p.c = c, p.ldc = n;
  struct Variant {
    std::string name;
    int moduli = 0, bits = 0;
    std::function<void()> run;
  };
  constexpr bool f64 = std::is_same_v<T, double>;
  std::vector<Variant> variants{
      {f64 ? "cuBLAS DGEMM (native)" : "cuBLAS SGEMM (pedantic)", 0, f64 ? 53 : 24, dgemm(native)},
      {f64 ? "cuBLAS FP64 emulation" : "cuBLAS FP32 emul. BF16x9", 0, 0, dgemm(emulated)}};
  std::size_t ws_bytes = 0;
  for (long long q : parse_list(moduli_text)) ws_bytes = std::max(ws_bytes, ozaki_gemm_workspace_bytes(ctx, p, int(q)));
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc workspace");
  // Ours with each count of moduli (0: the default, which the data decides): the
  // plan that ran is recorded.
  for (long long q : parse_list(moduli_text)) {
    const std::size_t at = variants.size();
    variants.push_back({f64 ? "ours: cuda_ozaki_f64" : "ours: cuda_ozaki_f32", 0, 0, nullptr});
    variants[at].run = [&, q, at] {
      const OzakiPlan plan = ozaki_gemm(ctx, p, stream, Workspace{ws, ws_bytes}, int(q));
      variants[at].moduli = plan.moduli, variants[at].bits = plan.bits;
    };
  }
  // The reference entries: (i, j) spread over C by a stride coprime to n.
  std::vector<std::size_t> at;
  for (int s = 0; s < samples; ++s) at.push_back((std::size_t(s) * 2654435761u + 12345u) % count);
  std::vector<double> want(at.size());
  for (std::size_t s = 0; s < at.size(); ++s) {
    const std::size_t i = at[s] / std::size_t(n), j = at[s] % std::size_t(n);
    double hi = 0, lo = 0;
    for (long long t = 0; t < n; ++t) {
      const double x = double(ha[i * std::size_t(n) + std::size_t(t)]),
                   y = double(hb[std::size_t(t) * std::size_t(n) + j]);
      const double prod = x * y, perr = std::fma(x, y, -prod);
      const double sum = hi + prod, bb = sum - hi, serr = (hi - (sum - bb)) + (prod - bb);
      hi = sum;
      lo += serr + perr;
    }
    want[s] = hi + lo;
  }
  // Errors of each variant's C at the sampled entries.
  std::vector<std::pair<double, double>> errors;
  std::vector<T> hc(count);
  for (const Variant& v : variants) {
    check(cudaMemsetAsync(c, 0, count * sizeof(T), stream), "memset");
    v.run();
    check(cudaMemcpyAsync(hc.data(), c, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "copy C");
    check(cudaStreamSynchronize(stream), "sync");
    std::vector<double> e;
    for (std::size_t s = 0; s < at.size(); ++s)
      e.push_back(want[s] == 0 ? std::fabs(double(hc[at[s]]))
                               : std::fabs(double(hc[at[s]]) - want[s]) / std::fabs(want[s]));
    std::sort(e.begin(), e.end());
    errors.push_back({e.back(), e[e.size() / 2]});
  }
  auto timed = [&](const std::function<void()>& f) { return gemmkit::bench::time_ms(stream, start, stop, f); };
  for (int w = 0; w < 2; ++w)
    for (auto& v : variants) v.run();
  std::vector<std::vector<double>> times(variants.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < variants.size(); ++i) times[i].push_back(timed(variants[i].run));
  double native_ms = 0;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    std::sort(times[i].begin(), times[i].end());
    const double ms = times[i][times[i].size() / 2];
    if (i == 0) native_ms = ms;
    Row row{variants[i].name,
            n,
            variants[i].moduli,
            variants[i].bits,
            ms,
            2.0 * double(n) * n * n / (ms * 1e9),
            native_ms / ms,
            errors[i].first,
            errors[i].second};
    std::printf("%-26s %6lld %6d %4d %10.3f %9.1f %7.2fx %11.3e %11.3e\n", row.variant.c_str(), n, row.moduli, row.bits,
                row.ms, row.tflops, row.over_native, row.max_error, row.median_error);
    rows.push_back(row);
  }
  std::fflush(stdout);
  check(cudaFree(ws), "free");
  check(cudaFree(a), "free");
  check(cudaFree(b), "free");
  check(cudaFree(c), "free");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gemmkit;
  int reps = 5, spread = 0, samples = 512;
  bool cancel = false, f64 = true;
  std::string json_path, sizes_text = "4096,8192", moduli_text = "0";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--sizes" && i + 1 < argc)
      sizes_text = argv[++i];
    else if (arg == "--moduli" && i + 1 < argc)
      moduli_text = argv[++i];
    else if (arg == "--spread" && i + 1 < argc)
      spread = std::max(0, std::atoi(argv[++i]));
    else if (arg == "--samples" && i + 1 < argc)
      samples = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--cancel")
      cancel = true;
    else if (arg == "--dtype" && i + 1 < argc)
      f64 = std::string(argv[++i]) != "f32";
    else if (arg == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: gemmkit_ozaki_bench [--dtype f64|f32] [--sizes "
                   "N,...] [--moduli Q,...] [--spread E] [--cancel] [--reps R] "
                   "[--samples S] [--json FILE]\n");
      return 2;
    }
  }
  if (!cuda_device_available()) {
    std::fprintf(stderr, "ozaki_bench: %s\n", no_device_message().c_str());
    return 1;
  }
  try {
    Context ctx(Backend::cuda);
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "event");
    check(cudaEventCreate(&stop), "event");
    cublasHandle_t native, emulated;
    check(cublasCreate(&native), "cublasCreate");
    check(cublasCreate(&emulated), "cublasCreate");
    check(cublasSetStream(native, stream), "cublasSetStream");
    check(cublasSetStream(emulated, stream), "cublasSetStream");
    if (f64) {
      check(cublasSetMathMode(emulated, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH), "emulation math mode");
      check(cublasSetEmulationStrategy(emulated, CUBLAS_EMULATION_STRATEGY_EAGER), "emulation strategy");
    } else {
      check(cublasSetMathMode(native, CUBLAS_PEDANTIC_MATH), "pedantic math mode");
      check(cublasSetMathMode(emulated, CUBLAS_FP32_EMULATED_BF16X9_MATH), "emulation math mode");
    }
    std::printf(
        "%s, %s GEMM: native, cuBLAS emulation, Ozaki II on int8 "
        "(ours); inputs +-[1,2) 2^[-%d,%d]%s\n",
        ctx.device_info().name.c_str(), f64 ? "FP64" : "FP32", spread, spread,
        cancel ? ", terms cancelling in pairs to 20 bits" : "");
    std::printf("%-26s %6s %6s %4s %10s %9s %8s %11s %11s\n", "variant", "n", "moduli", "bits", "median ms", "TFLOP/s",
                "x native", "max error", "median err");
    std::vector<Row> rows;
    for (long long n : parse_list(sizes_text)) {
      if (f64)
        bench_size<double>(ctx, stream, start, stop, native, emulated, n, moduli_text, spread, cancel, samples, reps,
                           rows);
      else
        bench_size<float>(ctx, stream, start, stop, native, emulated, n, moduli_text, spread, cancel, samples, reps,
                          rows);
    }
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << "{" << bench::meta_member(ctx) << ", \"dtype\": \"" << (f64 ? "f64" : "f32")
          << "\", \"spread\": " << spread << ", \"reps\": " << reps << ", \"cancel\": " << (cancel ? "true" : "false")
          << ", \"samples\": " << samples << ", \"rows\": [\n";
      for (std::size_t i = 0; i < rows.size(); ++i)
        out << "  {\"variant\": \"" << rows[i].variant << "\", \"n\": " << rows[i].n
            << ", \"moduli\": " << rows[i].moduli << ", \"bits\": " << rows[i].bits << ", \"median_ms\": " << rows[i].ms
            << ", \"tflops\": " << rows[i].tflops << ", \"over_native\": " << rows[i].over_native
            << ", \"max_error\": " << rows[i].max_error << ", \"median_error\": " << rows[i].median_error << "}"
            << (i + 1 < rows.size() ? ",\n" : "\n");
      out << "]}\n";
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ozaki_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}

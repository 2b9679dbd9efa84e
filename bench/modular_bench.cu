// The modular int8 GEMM (gemmkit/modular.hpp) against a plain cuBLAS INT8 GEMM of the same
// order, in one run: the issue-19 target is the modular GEMM (product and reduction to
// residues) at >= 95% of the plain GEMM's speed. For each case, the plain cuBLAS GEMM
// (int8 in, int32 out, "TN": A row-major, B stored n x k), our own int8 GEMM (rung 24,
// cuda_wgmma_i8) where the device has it, and modular_gemm on both paths (fused: rung 24's
// kernel with the modular epilogue; cublas: cuBLAS + the reduction kernel), each writing C
// and C^T (what the walks engine reads) and C only. A batch of q moduli is timed as one
// call against q plain GEMMs back to back.
//
// Every variant's output is first checked against the cuBLAS path's (the plain GEMMs' int32
// C, the reduction kernel's residues), byte for byte, after its output buffers were filled
// with a pattern; a mismatch is reported on stderr and the run ends with exit 1.
//
// Timing: CUDA events around each run on one stream; 3 warm-up runs, then `reps` timed runs
// of every variant in turn (so that all see the same clocks), each after an L2 flush (a
// 256 MiB memset); the median. Inputs: residue-like random int8 in [-125, 125].
//
//   gemmkit_modular_bench [--reps R] [--cases 4096:1,8192:1,4096:50] [--json FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bench_cuda.hpp"
#include "bench_meta.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/modular.hpp"
#include "gemmkit/registry.hpp"

namespace {

using gemmkit::bench::check;

__global__ void fill_residues(std::int8_t* x, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = std::int8_t(int(h % 251) - 125);
  }
}

// Counts the positions where x and y differ (into *differ).
__global__ void count_differences(const unsigned char* x, const unsigned char* y, std::size_t bytes,
                                  unsigned long long* differ) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < bytes;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += x[i] != y[i];
  if (local) atomicAdd(differ, local);
}

// What a variant writes, and so what it is checked on.
enum class Writes { c32, c_and_ct, c };

struct Case {
  std::int64_t n = 4096, batch = 1;
};

struct Row {
  std::string variant;
  Case c;
  double median_ms = 0;
  double percent = 0;  // of the plain cuBLAS GEMMs' time
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gemmkit;
  int reps = 10;
  std::string json_path, cases_text = "4096:1,8192:1,4096:50";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (arg == "--cases" && i + 1 < argc) cases_text = argv[++i];
    else {
      std::fprintf(stderr, "usage: gemmkit_modular_bench [--reps R] [--cases N:Q,...] [--json FILE]\n");
      return 2;
    }
  }
  std::vector<Case> cases;
  for (std::size_t at = 0; at < cases_text.size();) {
    const std::size_t comma = std::min(cases_text.find(',', at), cases_text.size());
    const std::string item = cases_text.substr(at, comma - at);
    Case c;
    if (std::sscanf(item.c_str(), "%lld:%lld", reinterpret_cast<long long*>(&c.n),
                    reinterpret_cast<long long*>(&c.batch)) != 2 || c.n < 1 || c.batch < 1 ||
        c.batch > 53) {
      std::fprintf(stderr, "modular_bench: bad case '%s' (N:Q, 1 <= Q <= 53)\n", item.c_str());
      return 2;
    }
    cases.push_back(c);
    at = comma + 1;
  }
  if (!cuda_device_available()) {
    std::fprintf(stderr, "modular_bench: %s\n", no_device_message().c_str());
    return 1;
  }
  try {
    Context ctx(Backend::cuda);
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "event");
    check(cudaEventCreate(&stop), "event");
    void* flush = nullptr;
    const std::size_t flush_bytes = std::size_t(256) << 20;
    check(cudaMalloc(&flush, flush_bytes), "cudaMalloc");
    const bool fused = ctx.compute_capability() == 90;
    const bool own = gemm_registry().find("cuda_wgmma_i8") && ctx.compute_capability() >= 90;
    std::vector<Row> rows;
    bool failed = false;  // an output differed from the reference: exit 1 after the timings
    std::printf("%s, %s\n", ctx.device_info().name.c_str(), "modular int8 GEMM vs plain cuBLAS INT8");
    std::printf("%-34s %6s %5s %11s %9s %10s\n", "variant", "n", "batch", "median ms", "TOPS", "% cuBLAS");
    for (const Case& cs : cases) {
      const std::int64_t n = cs.n, q = cs.batch;
      const std::size_t mat = std::size_t(n * n);
      std::int8_t *a, *b, *c, *ct;
      int* c32;
      check(cudaMalloc(&a, mat * q), "cudaMalloc A");
      check(cudaMalloc(&b, mat * q), "cudaMalloc B");
      check(cudaMalloc(&c, mat * q), "cudaMalloc C");
      check(cudaMalloc(&ct, mat * q), "cudaMalloc C^T");
      check(cudaMalloc(&c32, mat * q * sizeof(int)), "cudaMalloc C (int32)");
      fill_residues<<<1024, 256, 0, stream>>>(a, mat * q, 1);
      fill_residues<<<1024, 256, 0, stream>>>(b, mat * q, 2);
      check(cudaGetLastError(), "fill");

      // The plain GEMMs: one per modulus, each on its own operands and output.
      auto plain = [&](const std::string& kernel) {
        return [&, kernel] {
          for (std::int64_t i = 0; i < q; ++i) {
            GemmProblem p;
            p.dtype = DType::i8, p.out_dtype = DType::i32;
            p.trans_b = true;
            p.m = p.n = p.k = n;
            p.a = a + i * mat, p.lda = n;
            p.b = b + i * mat, p.ldb = n;
            p.c = c32 + i * mat, p.ldc = n;
            gemm(ctx, p, stream, GemmOptions{.kernel = kernel});
          }
        };
      };
      auto modular = [&](const char* kernel, bool transposed) {
        return [&, kernel, transposed] {
          ModularGemmProblem p;
          p.m = p.n = p.k = n;
          p.moduli.assign(int8_moduli().begin(), int8_moduli().begin() + q);
          p.a = a, p.lda = n, p.stride_a = std::int64_t(mat);
          p.b = b, p.ldb = n, p.stride_b = std::int64_t(mat);
          p.c = c, p.ldc = n, p.stride_c = std::int64_t(mat);
          if (transposed) p.ct = ct, p.ldct = n, p.stride_ct = std::int64_t(mat);
          const std::size_t bytes = modular_gemm_workspace_bytes(ctx, p, kernel);
          modular_gemm(ctx, p, stream, bytes ? ctx.workspace(stream, bytes) : Workspace{}, kernel);
        };
      };
      struct Variant {
        std::string name;
        std::function<void()> run;
        Writes writes;
      };
      std::vector<Variant> variants;
      variants.push_back({"cuBLAS INT8 GEMM (int32 C)", plain("cuda_cublas_i8"), Writes::c32});
      if (own) variants.push_back({"ours: cuda_wgmma_i8 (int32 C)", plain("cuda_wgmma_i8"), Writes::c32});
      if (fused) {
        variants.push_back({"modular fused, C and C^T", modular("cuda_modular_fused", true), Writes::c_and_ct});
        variants.push_back({"modular fused, C only", modular("cuda_modular_fused", false), Writes::c});
      }
      variants.push_back({"modular cuBLAS+reduce, C and C^T", modular("cuda_modular_cublas", true), Writes::c_and_ct});
      variants.push_back({"modular cuBLAS+reduce, C only", modular("cuda_modular_cublas", false), Writes::c});

      // The references: cuBLAS's int32 products and the reduction kernel's residues.
      std::int8_t *ref_c, *ref_ct;
      int* ref_c32;
      unsigned long long* differ;
      check(cudaMalloc(&ref_c, mat * q), "cudaMalloc reference C");
      check(cudaMalloc(&ref_ct, mat * q), "cudaMalloc reference C^T");
      check(cudaMalloc(&ref_c32, mat * q * sizeof(int)), "cudaMalloc reference C (int32)");
      check(cudaMalloc(&differ, sizeof(unsigned long long)), "cudaMalloc");
      variants.front().run();
      check(cudaMemcpyAsync(ref_c32, c32, mat * q * sizeof(int), cudaMemcpyDeviceToDevice, stream), "copy");
      modular("cuda_modular_cublas", true)();
      check(cudaMemcpyAsync(ref_c, c, mat * q, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cudaMemcpyAsync(ref_ct, ct, mat * q, cudaMemcpyDeviceToDevice, stream), "copy");
      auto differences = [&](const void* x, const void* y, std::size_t bytes) {
        check(cudaMemsetAsync(differ, 0, sizeof(unsigned long long), stream), "memset");
        count_differences<<<1024, 256, 0, stream>>>(static_cast<const unsigned char*>(x),
                                                    static_cast<const unsigned char*>(y), bytes, differ);
        unsigned long long count = 0;
        check(cudaMemcpyAsync(&count, differ, sizeof count, cudaMemcpyDeviceToHost, stream), "copy");
        check(cudaStreamSynchronize(stream), "sync");
        return count;
      };
      for (const Variant& v : variants) {
        check(cudaMemsetAsync(c32, 0x5a, mat * q * sizeof(int), stream), "memset");
        check(cudaMemsetAsync(c, 0x5a, mat * q, stream), "memset");
        check(cudaMemsetAsync(ct, 0x5a, mat * q, stream), "memset");
        v.run();
        unsigned long long wrong = 0;
        if (v.writes == Writes::c32) wrong = differences(c32, ref_c32, mat * q * sizeof(int));
        else wrong = differences(c, ref_c, mat * q) + (v.writes == Writes::c_and_ct ? differences(ct, ref_ct, mat * q) : 0);
        if (wrong) {
          std::fprintf(stderr, "modular_bench: %s, n %lld, batch %lld: %llu bytes differ from the reference\n",
                       v.name.c_str(), static_cast<long long>(n), static_cast<long long>(q), wrong);
          failed = true;
        }
      }
      if (!failed)
        std::printf("# n %lld, batch %lld: every variant's output equals the reference's\n", static_cast<long long>(n),
                    static_cast<long long>(q));
      check(cudaFree(ref_c), "free");
      check(cudaFree(ref_ct), "free");
      check(cudaFree(ref_c32), "free");
      check(cudaFree(differ), "free");

      std::vector<std::vector<double>> times(variants.size());
      auto timed = [&](const std::function<void()>& body) {
        check(cudaMemsetAsync(flush, int(times.size()), flush_bytes, stream), "flush");
        return gemmkit::bench::time_ms(stream, start, stop, body);
      };
      for (auto& v : variants)
        for (int w = 0; w < 3; ++w) timed(v.run);
      for (int r = 0; r < reps; ++r)
        for (std::size_t i = 0; i < variants.size(); ++i) times[i].push_back(timed(variants[i].run));
      const double reference = median(times[0]);
      for (std::size_t i = 0; i < variants.size(); ++i) {
        Row row{variants[i].name, cs, median(times[i]), 100.0 * reference / median(times[i])};
        const double tops = 2.0 * double(n) * double(n) * double(n) * double(q) / (row.median_ms * 1e-3) / 1e12;
        std::printf("%-34s %6lld %5lld %11.3f %9.1f %9.1f%%\n", row.variant.c_str(), static_cast<long long>(n),
                    static_cast<long long>(q), row.median_ms, tops, row.percent);
        rows.push_back(row);
      }
      check(cudaFree(a), "free");
      check(cudaFree(b), "free");
      check(cudaFree(c), "free");
      check(cudaFree(ct), "free");
      check(cudaFree(c32), "free");
    }
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << "{" << bench::meta_member(ctx) << ",\n \"device\": \"" << ctx.device_info().name << "\", \"reps\": " << reps
          << ", \"rows\": [\n";
      for (std::size_t i = 0; i < rows.size(); ++i)
        out << "  {\"variant\": \"" << rows[i].variant << "\", \"n\": " << rows[i].c.n << ", \"batch\": " << rows[i].c.batch
            << ", \"median_ms\": " << rows[i].median_ms << ", \"percent_of_cublas\": " << rows[i].percent << "}"
            << (i + 1 < rows.size() ? ",\n" : "\n");
      out << "]}\n";
    }
    cudaFree(flush);
    cudaStreamDestroy(stream);
    if (failed) return 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "modular_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

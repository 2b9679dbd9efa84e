// Launchers and registry entries of the SIMT ladder, rungs 7-11: from a coalesced
// one-thread-per-element kernel to 2-D register blocking with 128-bit accesses and
// conflict-free shared memory. Kernels live in cuda/kernels/07..11_*.cuh.
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "cuda/kernels/07_coalesced.cuh"
#include "cuda/kernels/08_blocktile_1d.cuh"
#include "cuda/kernels/09_blocktile_2d.cuh"
#include "cuda/kernels/10_vectorized.cuh"
#include "cuda/kernels/11_bank_conflict_free.cuh"
#include "cuda/ladder.hpp"
#include "cuda/launch.hpp"

namespace gemmkit::cuda {
namespace {

namespace k = kernels::simt;

// Calls f(std::bool_constant<value>{}): turns a run-time flag into a template argument.
template <class F>
void with_bool(bool value, F&& f) {
  if (value) f(std::true_type{});
  else f(std::false_type{});
}

// Runs f.template operator()<T>() for the problem's dtype, f32 or f64.
template <class F>
void with_float_dtype(const GemmProblem& p, const char* name, F&& f) {
  switch (p.dtype) {
    case DType::f32: f(float{}); break;
    case DType::f64: f(double{}); break;
    default: fail(ErrorCategory::internal, std::string(name) + ": unsupported dtype");
  }
}

// The float4 path of an operand needs every row start 16-byte aligned: an aligned base
// pointer and a leading dimension that is a multiple of 4 floats.
bool vec4_ok(const void* ptr, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 4 == 0;
}

// ---- rung 7 ----------------------------------------------------------------------------
constexpr int coalesced_tile = k::coalesced_tile;

std::optional<std::string> coalesced_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, coalesced_tile), ceil_div(p.m, coalesced_tile));
}

template <class T>
void run_coalesced(const GemmProblem& p, const KernelLaunch& l) {
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  const dim3 grid(unsigned(ceil_div(p.n, coalesced_tile)), unsigned(ceil_div(p.m, coalesced_tile)));
  const dim3 block(coalesced_tile * coalesced_tile);
  with_transposes(p, [&](auto ta, auto tb) {
    k::coalesced_kernel<decltype(ta)::value, decltype(tb)::value, T><<<grid, block, 0, l.stream>>>(g);
    check_launch("cuda_coalesced");
  });
}

// ---- rung 8 ----------------------------------------------------------------------------
namespace bt1 {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
}

std::optional<std::string> blocktile_1d_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, bt1::BN), ceil_div(p.m, bt1::BM));
}

template <class T>
void run_blocktile_1d(const GemmProblem& p, const KernelLaunch& l) {
  using namespace bt1;
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  const dim3 grid(unsigned(ceil_div(p.n, BN)), unsigned(ceil_div(p.m, BM)));
  const dim3 block(BM * BN / TM);
  with_transposes(p, [&](auto ta, auto tb) {
    k::blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value, T, BM, BN, BK, TM>
        <<<grid, block, 0, l.stream>>>(g);
    check_launch("cuda_blocktile_1d");
  });
}

// ---- rungs 9-11: (128, 128) block tiles, 256 threads of (8, 8) -------------------------
namespace bt2 {
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int threads = (BM / TM) * (BN / TN);
}

std::optional<std::string> blocktile_2d_fits(const GemmProblem& p) {
  return fits_grid(p, ceil_div(p.n, bt2::BN), ceil_div(p.m, bt2::BM));
}

dim3 blocktile_2d_grid(const GemmProblem& p) {
  return dim3(unsigned(ceil_div(p.n, bt2::BN)), unsigned(ceil_div(p.m, bt2::BM)));
}

template <class T>
void run_blocktile_2d(const GemmProblem& p, const KernelLaunch& l) {
  using namespace bt2;
  if (p.m == 0 || p.n == 0) return;
  const auto g = gemm_args<T>(p);
  with_transposes(p, [&](auto ta, auto tb) {
    k::blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value, T, BM, BN, BK, TM, TN>
        <<<blocktile_2d_grid(p), threads, 0, l.stream>>>(g);
    check_launch("cuda_blocktile_2d");
  });
}

// Rungs 10 and 11 share their configuration and differ only in the kernel. Each operand
// takes the float4 path only where vec4_ok holds; otherwise the scalar instantiation runs.
template <template <bool, bool, bool, bool, bool> class Kernel>
void run_vec4_family(const GemmProblem& p, const KernelLaunch& l, const char* name) {
  if (p.m == 0 || p.n == 0) return;
  if (p.dtype != DType::f32) fail(ErrorCategory::internal, std::string(name) + ": f32 only");
  const auto g = gemm_args<float>(p);
  const dim3 grid = blocktile_2d_grid(p);
  with_transposes(p, [&](auto ta, auto tb) {
    with_bool(vec4_ok(p.a, p.lda), [&](auto va) {
      with_bool(vec4_ok(p.b, p.ldb), [&](auto vb) {
        with_bool(vec4_ok(p.c, p.ldc), [&](auto vc) {
          Kernel<decltype(ta)::value, decltype(tb)::value, decltype(va)::value,
                 decltype(vb)::value, decltype(vc)::value>::launch(l.stream, grid, bt2::threads, g);
          check_launch(name);
        });
      });
    });
  });
}

// Kernel templates cannot be template template arguments; these wrappers can.
template <bool TA, bool TB, bool VA, bool VB, bool VC>
struct VectorizedLaunch {
  static void launch(cudaStream_t stream, dim3 grid, int threads, const kernels::GemmArgs<float>& g) {
    k::vectorized_kernel<TA, TB, VA, VB, VC><<<grid, threads, 0, stream>>>(g);
  }
};

template <bool TA, bool TB, bool VA, bool VB, bool VC>
struct BankConflictFreeLaunch {
  static void launch(cudaStream_t stream, dim3 grid, int threads, const kernels::GemmArgs<float>& g) {
    k::bank_conflict_free_kernel<TA, TB, VA, VB, VC><<<grid, threads, 0, stream>>>(g);
  }
};

}  // namespace

void register_simt_kernels(Registry& registry) {
  registry.add({.name = "cuda_coalesced",
                .backend = Backend::cuda,
                .rung = 7,
                .role = KernelRole::ladder,
                .summary = "coalesced one-thread-per-element",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = coalesced_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_coalesced",
                                   [&](auto t) { run_coalesced<decltype(t)>(p, l); });
                }});
  registry.add({.name = "cuda_blocktile_1d",
                .backend = Backend::cuda,
                .rung = 8,
                .role = KernelRole::ladder,
                .summary = "shared-memory block tiling with a 1-D thread tile",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_1d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_blocktile_1d",
                                   [&](auto t) { run_blocktile_1d<decltype(t)>(p, l); });
                }});
  registry.add({.name = "cuda_blocktile_2d",
                .backend = Backend::cuda,
                .rung = 9,
                .role = KernelRole::ladder,
                .summary = "2-D register blocking",
                .dtypes = {DType::f32, DType::f64},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  with_float_dtype(p, "cuda_blocktile_2d",
                                   [&](auto t) { run_blocktile_2d<decltype(t)>(p, l); });
                }});
  registry.add({.name = "cuda_vectorized",
                .backend = Backend::cuda,
                .rung = 10,
                .role = KernelRole::ladder,
                .summary = "128-bit memory accesses (FP32 only)",
                .dtypes = {DType::f32},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  run_vec4_family<VectorizedLaunch>(p, l, "cuda_vectorized");
                }});
  registry.add({.name = "cuda_bank_conflict_free",
                .backend = Backend::cuda,
                .rung = 11,
                .role = KernelRole::ladder,
                .summary = "shared memory without bank conflicts (FP32 only)",
                .dtypes = {DType::f32},
                .min_compute_capability = 50,
                .auto_priority = 0,
                .precondition = blocktile_2d_fits,
                .run = [](const GemmProblem& p, const KernelLaunch& l) {
                  run_vec4_family<BankConflictFreeLaunch>(p, l, "cuda_bank_conflict_free");
                }});
}

}  // namespace gemmkit::cuda

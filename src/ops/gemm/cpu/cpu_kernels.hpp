// Internal: the CPU kernels behind the registry entries, and what they share.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cpu {

// A CPU registry entry: `run` takes a validated host-memory problem of a dtype the entry
// declares. Each rung's file defines its entry, `KernelEntry <name>_entry()` (register.cpp
// lists them).
inline KernelEntry cpu_entry(std::string name, int rung, std::string summary, std::vector<DType> dtypes,
                             int auto_priority, void (*run)(const GemmProblem&)) {
  KernelEntry e;
  e.name = std::move(name);
  e.backend = Backend::cpu;
  e.rung = rung;
  e.summary = std::move(summary);
  e.dtypes = std::move(dtypes);
  e.auto_priority = auto_priority;
  // CPU kernels run on the calling thread; the launch's stream and workspace do not apply.
  e.run = [run](const GemmProblem& p, const KernelLaunch&) { run(p); };
  return e;
}
inline const std::vector<DType> kCpuFloats = {DType::f32, DType::f64};
inline const std::vector<DType> kCpuFloatsAndIntegers = {DType::f32, DType::f64, DType::i32, DType::i64};

// cblas takes int sizes: why a problem is too large for it, or nullopt (openblas.cpp).
std::optional<std::string> openblas_rejects(const GemmProblem& problem);

// Whether a batch of OpenBLAS calls may run side by side (the OpenMP build of OpenBLAS).
bool openblas_runs_side_by_side(const GemmProblem& problem);

// Strided batches (batch.cpp). Whether the matrices of a batch should run side by side on
// the OpenMP threads, one thread each, rather than one after another with every thread.
bool batch_side_by_side(const GemmProblem& problem);
// Runs item() on each matrix of the batch (batch_item), side by side on OpenMP threads or
// one after another. item() must be safe to call from several threads at once; an
// exception from any matrix is rethrown.
void run_batch(const GemmProblem& problem, bool side_by_side,
               const std::function<void(const GemmProblem&)>& item);

// Register and cache blocking of cpu_blocked for compute type U (see blocked.cpp): an
// (mr, nr) register tile, an (mc, kc) block of op(A) kept in L2, a (kc, nc) panel of op(B)
// kept in L3. kc = 512 measured faster than 256 on the 2-core Zen 4 development host (half
// the passes over C; the kc x nr sliver of B streams from L2 well enough). The i64 tile is
// small because its kernel keeps two accumulators per vector. Public here so that the tests
// can aim at the tile edges.
template <class U> struct Blocking;
template <> struct Blocking<float> { static constexpr int mr = 6, nr = 16, kc = 512, mc = 144, nc = 4080; };
template <> struct Blocking<double> { static constexpr int mr = 6, nr = 8, kc = 512, mc = 96, nc = 4080; };
template <> struct Blocking<std::uint32_t> { static constexpr int mr = 6, nr = 16, kc = 512, mc = 144, nc = 4080; };
template <> struct Blocking<std::uint64_t> { static constexpr int mr = 2, nr = 8, kc = 256, mc = 96, nc = 4080; };

// The arithmetic type of an element type. Integers compute in the unsigned type of the same
// width: its overflow wraps modulo 2^bits (defined behaviour), so results equal the exact
// ones whenever those fit, whatever the intermediate sums do. Reading an intN_t object
// through a uintN_t lvalue is allowed by the aliasing rules.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<std::int32_t> { using type = std::uint32_t; };
template <> struct ComputeOf<std::int64_t> { using type = std::uint64_t; };
template <class T> using compute_t = typename ComputeOf<T>::type;

// alpha or beta in the compute type. Integer dtypes get the (integer) value modulo 2^bits.
template <class U>
U scalar_as(double x) {
  if constexpr (std::is_floating_point_v<U>) {
    return static_cast<U>(x);
  } else {
    const double r = std::fmod(x, 0x1p64);  // exact; |r| < 2^64
    const auto magnitude = static_cast<std::uint64_t>(std::fabs(r));
    return static_cast<U>(r < 0 ? std::uint64_t{0} - magnitude : magnitude);
  }
}

// op(X) of a row-major operand as strides: op(X)(r, c) = data[r * row + c * col], so kernels
// need no branch on the transpose.
template <class U>
struct Operand {
  const U* data;
  std::int64_t row, col;
  U operator()(std::int64_t r, std::int64_t c) const { return data[r * row + c * col]; }
};
template <class U>
Operand<U> op_a(const GemmProblem& p) {
  const auto* data = static_cast<const U*>(p.a);
  return p.trans_a ? Operand<U>{data, 1, p.lda} : Operand<U>{data, p.lda, 1};
}
template <class U>
Operand<U> op_b(const GemmProblem& p) {
  const auto* data = static_cast<const U*>(p.b);
  return p.trans_b ? Operand<U>{data, 1, p.ldb} : Operand<U>{data, p.ldb, 1};
}

// What the loop rungs (1 and 3) read of a problem in compute type U.
template <class U>
struct LoopOperands {
  Operand<U> a, b;
  U* c;
  U alpha, beta;
  bool read_c;  // beta != 0; with beta == 0, C is write-only: NaNs in it must not leak
};
template <class U>
LoopOperands<U> loop_operands(const GemmProblem& p) {
  return {op_a<U>(p), op_b<U>(p), static_cast<U*>(p.c), scalar_as<U>(p.alpha), scalar_as<U>(p.beta), p.beta != 0};
}

// Calls body.template operator()<U>() with the compute type of the problem's dtype, for the
// dtypes f32, f64, i32, i64.
template <class Body>
void with_compute_type(DType dtype, std::string_view kernel, Body&& body) {
  switch (dtype) {
    case DType::f32: body.template operator()<float>(); return;
    case DType::f64: body.template operator()<double>(); return;
    case DType::i32: body.template operator()<std::uint32_t>(); return;
    case DType::i64: body.template operator()<std::uint64_t>(); return;
    default:
      fail(ErrorCategory::internal, std::string(kernel) + " was given a " +
                                        std::string(dtype_name(dtype)) + " problem");
  }
}

}  // namespace gemmkit::cpu

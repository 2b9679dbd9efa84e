// Reduction: names, the kernel list, the CPU reference (long double, compensated), the
// stated error bound of the GPU sums, and the backend dispatch.
#include "gemmkit/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "ops/reduce/reduce_device.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {

std::optional<ReduceOp> parse_reduce_op(std::string_view text) {
  if (text == "sum") return ReduceOp::sum;
  if (text == "min") return ReduceOp::min;
  if (text == "max") return ReduceOp::max;
  if (text == "norm2") return ReduceOp::norm2;
  return std::nullopt;
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::norm2: return "norm2";
  }
  return "?";
}

namespace {

Registry<ReduceProblem> make_registry() {
  Registry<ReduceProblem> r("reduce");
  r.add(cpu_reference_kernel<ReduceProblem>(
      "long double, Neumaier-compensated sums, rounded once", {DType::f32, DType::f64}, [](const ReduceProblem& p) {
        if (p.dtype == DType::f32)
          *static_cast<float*>(p.result) = reduce_cpu(static_cast<const float*>(p.x), p.n, p.op);
        else
          *static_cast<double*>(p.result) = reduce_cpu(static_cast<const double*>(p.x), p.n, p.op);
      }));
  GEMMKIT_CUDA_PART(reduce_detail::register_cuda_kernels(r);)
  return r;
}

void validate(const ReduceProblem& p) {
  if (p.dtype != DType::f32 && p.dtype != DType::f64)
    fail(ErrorCategory::usage, "reduce runs in f32 or f64, not " + std::string(dtype_name(p.dtype)));
  if (!p.result || (p.n > 0 && !p.x)) fail(ErrorCategory::usage, "reduce: null data pointer");
}

}  // namespace

const Registry<ReduceProblem>& reduce_registry() {
  static const Registry<ReduceProblem> registry = make_registry();
  return registry;
}

std::size_t reduce_workspace_bytes(const Context& ctx, std::size_t n, DType dtype, ReduceOp op,
                                   std::string_view kernel) {
  // Sizes do not depend on the pointers; validation only needs them non-null.
  double placeholder = 0;
  const ReduceProblem p{dtype, op, &placeholder, n, &placeholder};
  validate(p);
  return chosen_workspace(reduce_registry(), ctx, p, kernel);
}

const ReduceKernel& reduce(Context& ctx, const ReduceProblem& problem, Stream stream,
                           std::string_view kernel, Workspace workspace) {
  validate(problem);
  return choose_and_run(reduce_registry(), ctx, problem, stream, kernel, workspace);
}

// ---- CPU reference ----

namespace {

// Neumaier's compensated sum: `sum` plus the running compensation `carry` holds the exact
// sum to about two roundings of long double, whatever the order and signs.
struct CompensatedSum {
  long double sum = 0, carry = 0, plain = 0;
  void add(long double v) {
    plain += v;
    const long double t = sum + v;
    if (std::fabs(sum) >= std::fabs(v))
      carry += (sum - t) + v;
    else
      carry += (v - t) + sum;
    sum = t;
  }
  // With an Inf or NaN the compensation is meaningless (Inf - Inf): IEEE's plain sum.
  long double value() const { return std::isfinite(plain) ? sum + carry : plain; }
};

}  // namespace

template <class T>
long double reduce_reference_wide(const T* x, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: {
      CompensatedSum s;
      for (std::size_t i = 0; i < n; ++i) s.add(x[i]);
      return s.value();
    }
    case ReduceOp::norm2: {
      CompensatedSum s;
      for (std::size_t i = 0; i < n; ++i) s.add(static_cast<long double>(x[i]) * x[i]);
      return std::sqrt(s.value());
    }
    case ReduceOp::min:
    case ReduceOp::max: {
      const bool is_min = op == ReduceOp::min;
      long double best = is_min ? std::numeric_limits<long double>::infinity()
                                : -std::numeric_limits<long double>::infinity();
      for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) return std::numeric_limits<long double>::quiet_NaN();
        if (is_min ? x[i] < best : x[i] > best) best = x[i];
      }
      return best;
    }
  }
  return 0;
}

template <class T>
T reduce_cpu(const T* x, std::size_t n, ReduceOp op) {
  return static_cast<T>(reduce_reference_wide(x, n, op));
}

template long double reduce_reference_wide<float>(const float*, std::size_t, ReduceOp);
template long double reduce_reference_wide<double>(const double*, std::size_t, ReduceOp);
template float reduce_cpu<float>(const float*, std::size_t, ReduceOp);
template double reduce_cpu<double>(const double*, std::size_t, ReduceOp);

double reduce_sum_error_height(std::size_t n) {
  if (n <= 1) return 0;
  const double per_thread = std::ceil(static_cast<double>(n) / 16384.0);
  return std::min(static_cast<double>(n - 1), per_thread + 1024.0);
}

double reduce_sum_error_bound(std::size_t n, double sum_abs, DType dtype) {
  if (dtype != DType::f32 && dtype != DType::f64)
    fail(ErrorCategory::usage, "reduce: the sum error bound is stated for f32 and f64 only");
  const double u = dtype == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double hu = reduce_sum_error_height(n) * u;
  return hu / (1 - hu) * sum_abs;
}

// ---- dispatch ----

ReduceChoice choose_reduce(std::optional<Backend> backend, std::string_view kernel) {
  const bool auto_kernel = kernel.empty() || kernel == "auto";
  const ReduceKernel* named = auto_kernel ? nullptr : &reduce_registry().get(kernel);
  if (!backend) backend = named ? named->backend
                                : reduce_cuda_available() ? Backend::cuda : Backend::cpu;
  if (named && named->backend != *backend)
    fail(ErrorCategory::usage,
         "reduce: kernel '" + named->name + "' runs on the " + std::string(backend_name(named->backend)) +
             " backend, not " + std::string(backend_name(*backend)) +
             (*backend == Backend::cpu ? " (the CPU backend has only cpu_reference)" : ""));
  if (*backend == Backend::cpu) return {Backend::cpu, "cpu_reference"};
  require_cuda_device();
  return {Backend::cuda, auto_kernel ? std::string(kReduceAutoKernel) : std::string(kernel)};
}

template <class T>
T reduce(const T* x, std::size_t n, ReduceOp op, const ReduceChoice& choice, Context* ctx) {
  if (choice.backend == Backend::cpu) return reduce_cpu(x, n, op);
  GEMMKIT_CUDA_PART(if (ctx) return reduce_detail::run_host_on_device(*ctx, x, n, op, choice.kernel);
                    Context own(Backend::cuda);
                    return reduce_detail::run_host_on_device(own, x, n, op, choice.kernel);)
  detail::fail_without_cuda();
}

template float reduce<float>(const float*, std::size_t, ReduceOp, const ReduceChoice&, Context*);
template double reduce<double>(const double*, std::size_t, ReduceOp, const ReduceChoice&, Context*);

bool reduce_cuda_available() { return cuda_device_available(); }

BenchReport reduce_bench(std::size_t n, DType dtype, ReduceOp op, int warmup, int reps, std::uint64_t seed) {
  require_cuda_device();
  if (n == 0) fail(ErrorCategory::usage, "reduce --bench: --n must be at least 1");
  if (dtype != DType::f32 && dtype != DType::f64) fail(ErrorCategory::usage, "reduce --bench: --dtype must be f32 or f64");
  GEMMKIT_CUDA_PART(return reduce_detail::bench_on_device(n, dtype, op, warmup, reps, seed);)
  detail::fail_without_cuda();
}

}  // namespace gemmkit

// Reduction: names, the kernel list, the CPU reference (long double, compensated), the
// stated error bound of the GPU sums, and the backend dispatch.
#include "gemmkit/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

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

const std::vector<ReduceKernelInfo>& reduce_kernels() {
  static const std::vector<ReduceKernelInfo> kernels = {
      {"reduce0_fold", 0,
       "seeds' reduce0: fold the top half onto the bottom half, one launch per halving "
       "(any length: the odd middle value has no partner)"},
      {"reduce1_grid_stride", 1,
       "seeds' reduce1: thread-linear grid-stride sums in registers; 3 launches "
       "(256x256 threads, 1 block, 1 thread)"},
      {"reduce2_shared_tree", 2,
       "seeds' reduce2: block tree in shared memory (power-of-two blocks), one value per "
       "block, then one block"},
      {"reduce3_any_blocks", 3,
       "seeds' reduce3: tree rounded up to a power of two, so 4 blocks per SM and a "
       "second pass of exactly that many threads"},
      {"reduce4_unrolled", 4,
       "seeds' reduce4: tree unrolled at compile time, the last warp with __syncwarp"},
      {"warp_shuffle", 5,
       "__shfl_down_sync within warps, one shared slot per warp, one barrier"},
      {"vec16_two_pass", 6,
       "16-byte loads, 4 in flight per thread, one wave of blocks (SMs x occupancy); "
       "deterministic second pass over the block results in a fixed order"},
      {"cub", -1,
       "reference: cub::DeviceReduce::Sum/Min/Max, TransformReduce (squares, double) for norm2"},
  };
  return kernels;
}

const ReduceKernelInfo* find_reduce_kernel(std::string_view name) {
  for (const auto& k : reduce_kernels())
    if (k.name == name) return &k;
  return nullptr;
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
  if (!auto_kernel && kernel != "cpu_reference" && !find_reduce_kernel(kernel)) {
    std::string names;
    for (const auto& k : reduce_kernels()) names += (names.empty() ? "" : ", ") + k.name;
    fail(ErrorCategory::usage, "reduce: unknown kernel '" + std::string(kernel) +
                                   "' (known: auto, cpu_reference, " + names + ")");
  }
  if (!backend) {
    if (kernel == "cpu_reference") backend = Backend::cpu;
    else if (!auto_kernel || reduce_cuda_available()) backend = Backend::cuda;
    else backend = Backend::cpu;
  }
  if (*backend == Backend::cpu) {
    if (!auto_kernel && kernel != "cpu_reference")
      fail(ErrorCategory::usage, "reduce: kernel '" + std::string(kernel) +
                                     "' is a CUDA kernel; the CPU backend has only cpu_reference");
    return {Backend::cpu, "cpu_reference"};
  }
  if (kernel == "cpu_reference")
    fail(ErrorCategory::usage, "reduce: cpu_reference runs on the CPU backend, not cuda");
  require_cuda_device();
  return {Backend::cuda, auto_kernel ? std::string(kReduceAutoKernel) : std::string(kernel)};
}

template <class T>
T reduce(const T* x, std::size_t n, ReduceOp op, const ReduceChoice& choice) {
  if (choice.backend == Backend::cpu) return reduce_cpu(x, n, op);
  return reduce_cuda(x, n, op, choice.kernel);
}

template float reduce<float>(const float*, std::size_t, ReduceOp, const ReduceChoice&);
template double reduce<double>(const double*, std::size_t, ReduceOp, const ReduceChoice&);

}  // namespace gemmkit

// conv1d host side: the CPU reference, the error bound, which rung takes which mask, and the
// dispatch between backends.
#include "gemmkit/conv1d.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "runtime/cuda_part.hpp"
#include "ops/conv1d/conv1d_device.hpp"

namespace gemmkit {

namespace {

std::int64_t round_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b * b; }

// Shared memory of one streaming block: the tile plus halos rounded out to 16-byte vectors.
std::int64_t streaming_shared_bytes(DType dtype, std::int64_t width) {
  const std::int64_t size = std::int64_t(dtype_size(dtype)), vec = 16 / size;
  const std::int64_t tile = dtype == DType::f32 ? conv1d_detail::kStreamingTile<float>
                                                : conv1d_detail::kStreamingTile<double>;
  const std::int64_t left = width / 2, right = width - 1 - left;
  return (round_up(left, vec) + tile + round_up(right, vec)) * size;
}

void check_arguments(const void* x, std::int64_t n, const void* mask, std::int64_t width, const void* y) {
  if (width < 1) fail(ErrorCategory::usage, "conv1d: the mask is empty (it needs at least one tap)");
  if (width > INT_MAX)
    fail(ErrorCategory::usage, "conv1d: a mask of " + std::to_string(width) +
                                   " taps is wider than the 2^31-1 the kernels index");
  if (n < 0) fail(ErrorCategory::usage, "conv1d: negative length " + std::to_string(n));
  if (!mask || (n > 0 && (!x || !y))) fail(ErrorCategory::usage, "conv1d: null data pointer");
}

// What a GPU rung's design refuses of a dtype and mask width (the name already checked).
std::optional<std::string> rung_rejection(std::string_view kernel, DType dtype, std::int64_t width) {
  if (dtype != DType::f32 && dtype != DType::f64)
    return "conv1d runs in f32 or f64, not " + std::string(dtype_name(dtype));
  if (width < 1) return std::string("the mask is empty");
  const bool constant_rung = kernel == "constant_mask" || kernel == "tiled";
  if (constant_rung && width > kConv1dConstantMaskTaps)
    return "kernel '" + std::string(kernel) + "' keeps the mask in constant memory, which holds " +
           std::to_string(kConv1dConstantMaskTaps) + " taps; this mask has " +
           std::to_string(width) + " (use --kernel auto, basic or streaming)";
  if (kernel == "streaming" &&
      streaming_shared_bytes(dtype, width) > conv1d_detail::kSharedBytes)
    return "kernel 'streaming' stages each tile and its halo (" + std::to_string(width - 1) +
           " cells) in " + std::to_string(conv1d_detail::kSharedBytes / 1024) +
           " KiB of shared memory, which a mask of " + std::to_string(width) +
           " taps overflows (use --kernel auto or basic)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> conv1d_kernel_rejection(std::string_view kernel, DType dtype,
                                                   std::int64_t width) {
  const Conv1dKernel* entry = conv1d_registry().find(kernel);
  if (!entry || entry->backend != Backend::cuda) {
    std::string names;
    for (const auto& k : conv1d_registry().entries())
      if (k.backend == Backend::cuda) names += ", " + k.name;
    return "unknown conv1d kernel '" + std::string(kernel) + "' (expected auto" + names + ")" +
           detail::without_cuda_note();
  }
  return rung_rejection(kernel, dtype, width);
}

namespace {

Registry<Conv1dProblem> make_registry() {
  Registry<Conv1dProblem> r("conv1d");
  r.add(cpu_reference_kernel<Conv1dProblem>(
      "each output summed in long double, rounded once", {DType::f32, DType::f64}, [](const Conv1dProblem& p) {
        if (p.dtype == DType::f32)
          conv1d_reference(static_cast<const float*>(p.x), p.n, static_cast<const float*>(p.mask), p.width,
                           static_cast<float*>(p.y));
        else
          conv1d_reference(static_cast<const double*>(p.x), p.n, static_cast<const double*>(p.mask), p.width,
                           static_cast<double*>(p.y));
      }));
  GEMMKIT_CUDA_PART(conv1d_detail::register_cuda_kernels(r);)
  return r;
}

void validate(const Conv1dProblem& p) {
  if (p.dtype != DType::f32 && p.dtype != DType::f64)
    fail(ErrorCategory::usage, "conv1d runs in f32 or f64, not " + std::string(dtype_name(p.dtype)));
  check_arguments(p.x, p.n, p.mask, p.width, p.y);
}

}  // namespace

const Registry<Conv1dProblem>& conv1d_registry() {
  static const Registry<Conv1dProblem> registry = make_registry();
  return registry;
}

std::size_t conv1d_workspace_bytes(const Context& ctx, DType dtype, std::int64_t n,
                                   std::int64_t width, std::string_view kernel) {
  // Sizes do not depend on the pointers; validation needs them non-null (and x aligned).
  alignas(16) double placeholder[2] = {0, 0};
  const Conv1dProblem p{dtype, placeholder, n, placeholder, width, placeholder};
  validate(p);
  return chosen_workspace(conv1d_registry(), ctx, p, kernel);
}

const Conv1dKernel& conv1d(Context& ctx, const Conv1dProblem& problem, Stream stream,
                           std::string_view kernel, Workspace workspace) {
  validate(problem);
  return choose_and_run(conv1d_registry(), ctx, problem, stream, kernel, workspace);
}

std::string_view conv1d_auto_kernel(DType dtype, std::int64_t width) {
  // The streaming rung is the fastest wherever its halo fits; beyond that the work is
  // dominated by the w multiply-adds per output, and the basic rung takes any width.
  if (!rung_rejection("streaming", dtype, width)) return "streaming";
  return "basic";
}

namespace conv1d_detail {
template <class T>
long double reference_at(const T* x, std::int64_t n, const T* mask, std::int64_t width,
                         std::int64_t i) {
  // Taps j with 0 <= i + j - left < n; the others meet the zero padding.
  const std::int64_t left = width / 2;
  const std::int64_t j_begin = std::max<std::int64_t>(0, left - i);
  const std::int64_t j_end = std::min<std::int64_t>(width, n - i + left);
  long double sum = 0;
  for (std::int64_t j = j_begin; j < j_end; ++j)
    sum += static_cast<long double>(mask[j]) * static_cast<long double>(x[i + j - left]);
  return sum;
}
}  // namespace conv1d_detail

template <class T>
void conv1d_reference(const T* x, std::int64_t n, const T* mask, std::int64_t width, T* y) {
  check_arguments(x, n, mask, width, y);
  for (std::int64_t i = 0; i < n; ++i)
    y[i] = static_cast<T>(conv1d_detail::reference_at(x, n, mask, width, i));
}

template <class T>
double conv1d_error_bound(const T* x, std::int64_t n, const T* mask, std::int64_t width,
                          std::int64_t i) {
  const std::int64_t left = width / 2;
  double magnitude = 0;  // S = sum_j |mask[j] x[i + j - left]|
  for (std::int64_t j = std::max<std::int64_t>(0, left - i);
       j < std::min<std::int64_t>(width, n - i + left); ++j)
    magnitude += std::fabs(double(mask[j]) * double(x[i + j - left]));
  return double(width + 1) * double(std::numeric_limits<T>::epsilon()) * magnitude;
}

template <class T>
Conv1dRun conv1d(const T* x, std::int64_t n, const T* mask, std::int64_t width, T* y,
                 const Conv1dOptions& options) {
  check_arguments(x, n, mask, width, y);
  const DType dtype = dtype_of<T>;
  const bool named = !options.kernel.empty() && options.kernel != "auto";
  if (named) {
    // A rung's name asks for the GPU; refusals come before any device work.
    if (options.backend == Backend::cpu)
      fail(ErrorCategory::usage, "kernel '" + options.kernel + "' is a CUDA kernel; "
                                 "--backend cpu runs the CPU reference (use --kernel auto)");
    if (auto why = conv1d_kernel_rejection(options.kernel, dtype, width))
      fail(ErrorCategory::usage, *why);
  }
  Backend backend = Backend::cpu;
  if (options.backend) backend = *options.backend;
  else if (named || cuda_device_available()) backend = Backend::cuda;

  if (backend == Backend::cpu) {
    conv1d_reference(x, n, mask, width, y);
    return {Backend::cpu, "cpu_reference"};
  }
  const std::string kernel = named ? options.kernel : std::string(conv1d_auto_kernel(dtype, width));
  if (!options.context) require_cuda_device();
  GEMMKIT_CUDA_PART(std::optional<Context> own;
                    Context& ctx = options.context ? *options.context : own.emplace(Backend::cuda);
                    if (n > 0) conv1d_detail::run_host_on_device<T>(ctx, kernel, x, n, mask, width, y);
                    return {Backend::cuda, kernel};)
  detail::fail_without_cuda();
}

BenchReport conv1d_bench(DType dtype, std::int64_t n, std::int64_t width, int warmup, int reps,
                         std::uint64_t seed) {
  if (n < 1) fail(ErrorCategory::usage, "conv1d --bench: --n must be at least 1");
  if (width < 1 || width > INT_MAX)
    fail(ErrorCategory::usage, "conv1d --bench: --width must be between 1 and 2^31-1");
  require_cuda_device();
  GEMMKIT_CUDA_PART(return conv1d_detail::bench_on_device(dtype, n, width, warmup, reps, seed);)
  detail::fail_without_cuda();
}

// The element types the header promises: f32 and f64.
template Conv1dRun conv1d<float>(const float*, std::int64_t, const float*, std::int64_t, float*,
                                 const Conv1dOptions&);
template Conv1dRun conv1d<double>(const double*, std::int64_t, const double*, std::int64_t, double*,
                                  const Conv1dOptions&);
template void conv1d_reference<float>(const float*, std::int64_t, const float*, std::int64_t, float*);
template void conv1d_reference<double>(const double*, std::int64_t, const double*, std::int64_t, double*);
template long double conv1d_detail::reference_at<float>(const float*, std::int64_t, const float*,
                                                        std::int64_t, std::int64_t);
template long double conv1d_detail::reference_at<double>(const double*, std::int64_t, const double*,
                                                         std::int64_t, std::int64_t);
template double conv1d_error_bound<float>(const float*, std::int64_t, const float*, std::int64_t,
                                          std::int64_t);
template double conv1d_error_bound<double>(const double*, std::int64_t, const double*, std::int64_t,
                                           std::int64_t);

}  // namespace gemmkit

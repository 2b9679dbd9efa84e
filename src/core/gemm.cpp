#include "gemmkit/gemm.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "core/dispatch.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/memory.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {

std::string_view backend_name(Backend backend) {
  return backend == Backend::cpu ? "cpu" : "cuda";
}

std::string GemmProblem::shape_string() const {
  std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (trans_a && trans_b) return s + " (A^T, B^T)";
  if (trans_a) return s + " (A^T)";
  if (trans_b) return s + " (B^T)";
  return s;
}

void validate(const GemmProblem& p) {
  auto bad = [&](const std::string& what) {
    fail(ErrorCategory::usage, "invalid GEMM " + p.shape_string() + ": " + what);
  };
  if (p.m < 0 || p.n < 0 || p.k < 0) bad("negative size");
  // A stored a_rows x a_cols needs lda >= a_cols (and >= 1), likewise B and C.
  if (p.lda < std::max<std::int64_t>(1, p.a_cols()))
    bad("lda " + std::to_string(p.lda) + " < stored width of A " + std::to_string(p.a_cols()));
  if (p.ldb < std::max<std::int64_t>(1, p.b_cols()))
    bad("ldb " + std::to_string(p.ldb) + " < stored width of B " + std::to_string(p.b_cols()));
  if (p.ldc < std::max<std::int64_t>(1, p.n))
    bad("ldc " + std::to_string(p.ldc) + " < width of C " + std::to_string(p.n));
  if (p.m > 0 && p.n > 0 && p.c == nullptr) bad("C is null");
  if (p.m > 0 && p.n > 0 && p.k > 0 && (p.a == nullptr || p.b == nullptr)) bad("A or B is null");
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta)) bad("alpha and beta must be finite");
  if (p.out_dtype && *p.out_dtype != p.dtype &&
      !(*p.out_dtype == DType::f32 && (p.dtype == DType::f16 || p.dtype == DType::bf16)))
    bad("C in " + std::string(dtype_name(*p.out_dtype)) + " is only offered for f16 and bf16 inputs (as f32)");
  if (is_integer(p.dtype)) {
    // Integer kernels convert alpha/beta to the element type; they must be exact integers.
    for (double x : {p.alpha, p.beta})
      if (x != std::trunc(x) || std::fabs(x) > 9007199254740992.0)
        bad("alpha and beta must be integers for " + std::string(dtype_name(p.dtype)));
  }
}

GemmProblem make_problem(const AnyMatrix& a, bool trans_a, const AnyMatrix& b, bool trans_b,
                         AnyMatrix& c, double alpha, double beta) {
  const DType dtype = dtype_of_any(a);
  if (dtype_of_any(b) != dtype)
    fail(ErrorCategory::usage, "A is " + std::string(dtype_name(dtype)) + " but B is " +
                                   std::string(dtype_name(dtype_of_any(b))) +
                                   ": convert both to one dtype first");
  GemmProblem p = std::visit(
      [&](const auto& am) {
        using T = typename std::decay_t<decltype(am)>::value_type;
        // A view of C's shape only, for make_problem's checks; C's storage goes in below.
        MatrixView<T> c_shape(nullptr, rows_of(c), cols_of(c), std::max<std::int64_t>(cols_of(c), 1));
        return make_problem<T>(am.view(), trans_a, std::get<Matrix<T>>(b).view(), trans_b, c_shape,
                               alpha, beta);
      },
      a);
  std::visit(
      [&](auto& cm) {
        p.c = cm.data();
        p.ldc = cm.ld();
      },
      c);
  if (dtype_of_any(c) != dtype) p.out_dtype = dtype_of_any(c);
  return p;
}

namespace {

bool device_can_run(const KernelEntry& entry) {
  return entry.backend == Backend::cpu ||
         current_compute_capability() >= entry.min_compute_capability;
}

// The accepting kernel of `backend` with the highest auto priority, or nullptr.
const KernelEntry* choose_kernel(Backend backend, const GemmProblem& p) {
  const KernelEntry* best = nullptr;
  for (const KernelEntry* e : Registry::instance().of_backend(backend)) {
    if (e->auto_priority <= 0 || e->rejects(p) || !device_can_run(*e)) continue;
    if (!best || e->auto_priority > best->auto_priority) best = e;
  }
  return best;
}

}  // namespace

std::string gemm(const GemmProblem& p, const GemmOptions& options) {
  validate(p);
  const bool explicit_kernel = !options.kernel.empty() && options.kernel != "auto";
  const KernelEntry* entry = nullptr;
  if (explicit_kernel) {
    entry = &Registry::instance().get(options.kernel);
    if (options.backend && *options.backend != entry->backend)
      fail(ErrorCategory::usage, "kernel '" + entry->name + "' belongs to the " +
                                     std::string(backend_name(entry->backend)) +
                                     " backend, not " + std::string(backend_name(*options.backend)));
    if (auto why = entry->rejects(p))
      fail(ErrorCategory::usage, "kernel '" + entry->name + "' cannot run " + p.shape_string() +
                                     " " + std::string(dtype_name(p.dtype)) + ": " + *why);
  } else {
    Backend backend = Backend::cpu;
    if (options.backend) {
      backend = *options.backend;
      // Without a device no CUDA kernel accepts anything: say that, not "no kernel accepts".
      if (backend == Backend::cuda) require_cuda_device();
    } else if (cuda_device_available() && choose_kernel(Backend::cuda, p)) {
      backend = Backend::cuda;
    }
    entry = choose_kernel(backend, p);
    if (!entry)
      fail(ErrorCategory::usage, "no " + std::string(backend_name(backend)) +
                                     " kernel in this build accepts a " +
                                     std::string(dtype_name(p.dtype)) + " GEMM of " +
                                     p.shape_string());
  }
  if (entry->backend == Backend::cuda) {
    require_cuda_device();
    if (!device_can_run(*entry))
      fail(ErrorCategory::usage, "kernel '" + entry->name + "' needs compute capability " +
                                     std::to_string(entry->min_compute_capability) +
                                     ", the device has " +
                                     std::to_string(current_compute_capability()));
    // The device copies of A, B and C (DeviceProblem in src/cuda/device.cu).
    require_device_memory(estimate_gemm_memory(p, VerifyMode::none).device,
                          "kernel '" + entry->name + "' on " + p.shape_string());
    detail::run_on_device(*entry, p);
  } else if (p.m > 0 && p.n > 0) {
    entry->run(p);
  }
  return entry->name;
}

}  // namespace gemmkit

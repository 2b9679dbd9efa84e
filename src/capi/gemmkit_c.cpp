// The C API (include/gemmkit.h) over the C++ device API. Each function turns its arguments
// into a GemmProblem and runs it inside guarded(), which catches every exception and turns it
// into a gk_status and the thread's last-error message.
#include "gemmkit.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/modular.hpp"
#include "gemmkit/plan.hpp"
#include "gemmkit/registry.hpp"

#if __has_include("gemmkit/version.hpp")
#include "gemmkit/version.hpp"  // GEMMKIT_VERSION, where the package generates it
#endif

#ifdef GEMMKIT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

struct gk_context_s {
  gemmkit::Context context;
};

struct gk_plan_s {
  gemmkit::GemmPlan plan;
};

namespace {

using gemmkit::ErrorCategory;
using gemmkit::fail;

thread_local std::string last_error;

gk_status status_of(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::usage: return GK_ERROR_USAGE;
    case ErrorCategory::input: return GK_ERROR_INPUT;
    case ErrorCategory::device: return GK_ERROR_DEVICE;
    case ErrorCategory::out_of_memory: return GK_ERROR_OUT_OF_MEMORY;
    case ErrorCategory::numeric: return GK_ERROR_NUMERIC;
    case ErrorCategory::internal: return GK_ERROR_INTERNAL;
    case ErrorCategory::output: return GK_ERROR_OUTPUT;
  }
  return GK_ERROR_INTERNAL;
}

gk_status record(const char* function, gk_status status, const char* message) noexcept {
  try {
    last_error = std::string(function) + ": " + message;
  } catch (...) {
    last_error.clear();  // no memory for the message; the status still says what happened
  }
  return status;
}

// Runs `body`; every exception becomes a status and the thread's last error.
template <class Body>
gk_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return GK_SUCCESS;
  } catch (const gemmkit::Error& e) {
    return record(function, status_of(e.category()), e.what());
  } catch (const std::bad_alloc&) {
    return record(function, GK_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return record(function, GK_ERROR_INTERNAL, e.what());
  } catch (...) {
    return record(function, GK_ERROR_INTERNAL, "unknown exception");
  }
}

void require(const void* pointer, const char* name) {
  if (!pointer) fail(ErrorCategory::usage, std::string(name) + " is NULL");
}

gemmkit::Context& context_of(gk_context ctx) {
  require(ctx, "ctx");
  return ctx->context;
}

[[noreturn]] void bad_enum(const char* name, int value, const char* type) {
  fail(ErrorCategory::usage, std::string(name) + " " + std::to_string(value) + " is not a " + type);
}

gemmkit::DType dtype_of(gk_dtype dtype, const char* name) {
  switch (dtype) {
    case GK_F32: return gemmkit::DType::f32;
    case GK_F64: return gemmkit::DType::f64;
    case GK_F16: return gemmkit::DType::f16;
    case GK_BF16: return gemmkit::DType::bf16;
    case GK_TF32: return gemmkit::DType::tf32;
    case GK_I32: return gemmkit::DType::i32;
    case GK_I64: return gemmkit::DType::i64;
    case GK_DTYPE_RANGE_: break;  // not a value (gemmkit.h)
  }
  bad_enum(name, int(dtype), "gk_dtype");
}

bool transposed(gk_op op, const char* name) {
  if (op != GK_OP_N && op != GK_OP_T) bad_enum(name, int(op), "gk_op");
  return op == GK_OP_T;
}

// Everything of a problem but its operands and scalars.
struct Shape {
  gk_layout layout;
  gk_op op_a, op_b;
  std::int64_t m, n, k;
  gk_dtype dtype, c_dtype;
  std::int64_t lda, stride_a, ldb, stride_b, ldc, stride_c, batch;
};

gemmkit::GemmProblem problem_of(const Shape& s, double alpha, const void* a, const void* b,
                                double beta, void* c) {
  gemmkit::GemmProblem p;
  if (s.layout != GK_ROW_MAJOR && s.layout != GK_COL_MAJOR)
    bad_enum("layout", int(s.layout), "gk_layout");
  p.layout = s.layout == GK_ROW_MAJOR ? gemmkit::Layout::row_major : gemmkit::Layout::col_major;
  p.trans_a = transposed(s.op_a, "op_a");
  p.trans_b = transposed(s.op_b, "op_b");
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.dtype = dtype_of(s.dtype, "dtype");
  if (const gemmkit::DType out = dtype_of(s.c_dtype, "c_dtype"); out != p.dtype) p.out_dtype = out;
  p.lda = s.lda;
  p.ldb = s.ldb;
  p.ldc = s.ldc;
  p.stride_a = s.stride_a;
  p.stride_b = s.stride_b;
  p.stride_c = s.stride_c;
  p.batch = s.batch;
  p.alpha = alpha;
  p.a = a;
  p.b = b;
  p.beta = beta;
  p.c = c;
  return p;
}

gemmkit::GemmOptions options_of(const char* kernel) {
  gemmkit::GemmOptions options;
  if (kernel) options.kernel = kernel;
  return options;
}

void run_gemm(gemmkit::Context& context, const gemmkit::GemmProblem& p, const char* kernel,
              void* workspace, std::size_t workspace_bytes, const char** kernel_ran, void* stream) {
  const auto s = static_cast<gemmkit::Stream>(stream);
  const gemmkit::KernelEntry& ran =
      workspace ? gemmkit::gemm(context, p, s, gemmkit::Workspace{workspace, workspace_bytes},
                                options_of(kernel))
                : gemmkit::gemm(context, p, s, options_of(kernel));
  // Registry entries are never removed or moved: the name outlives the call.
  if (kernel_ran) *kernel_ran = ran.name.c_str();
}

gemmkit::ModularGemmProblem modular_problem_of(std::int64_t m, std::int64_t n, std::int64_t k,
                                               const std::uint32_t* moduli, std::int64_t count) {
  if (count < 0) fail(ErrorCategory::usage, "count " + std::to_string(count) + " is negative");
  if (count > 0) require(moduli, "moduli");
  gemmkit::ModularGemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.moduli.assign(moduli, moduli + count);
  return p;
}

}  // namespace

extern "C" {

gk_status gk_context_create(gk_backend backend, int device, gk_context* out) {
  return guarded("gk_context_create", [&] {
    require(out, "out");
    *out = nullptr;
    if (backend != GK_BACKEND_AUTO && backend != GK_BACKEND_CPU && backend != GK_BACKEND_CUDA)
      bad_enum("backend", int(backend), "gk_backend");
    const bool cuda = backend == GK_BACKEND_CUDA ||
                      (backend == GK_BACKEND_AUTO && gemmkit::cuda_device_available());
    if (!cuda) {
      *out = new gk_context_s{gemmkit::Context(gemmkit::Backend::cpu)};
      return;
    }
    if (device < -1)
      fail(ErrorCategory::usage,
           "device " + std::to_string(device) + " is not a device index (-1: the current device)");
    *out = new gk_context_s{gemmkit::Context(gemmkit::Backend::cuda, device)};
  });
}

gk_status gk_context_destroy(gk_context ctx) {
  // Context's destructor does not wait for the device; releasing the pool first does.
  const gk_status status =
      guarded("gk_context_destroy", [&] { if (ctx) ctx->context.release_workspaces(); });
  delete ctx;
  return status;
}

gk_status gk_context_backend(gk_context ctx, gk_backend* out) {
  return guarded("gk_context_backend", [&] {
    const gemmkit::Context& context = context_of(ctx);
    require(out, "out");
    *out = context.backend() == gemmkit::Backend::cuda ? GK_BACKEND_CUDA : GK_BACKEND_CPU;
  });
}

gk_status gk_context_device(gk_context ctx, int* out) {
  return guarded("gk_context_device", [&] {
    const gemmkit::Context& context = context_of(ctx);
    require(out, "out");
    *out = context.device();
  });
}

gk_status gk_gemm_ex(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b, int64_t m,
                     int64_t n, int64_t k, double alpha, gk_dtype dtype, const void* a,
                     int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                     double beta, gk_dtype c_dtype, void* c, int64_t ldc, int64_t stride_c,
                     int64_t batch, const char* kernel, void* workspace,
                     size_t workspace_bytes, const char** kernel_ran, void* stream) {
  return guarded("gk_gemm_ex", [&] {
    gemmkit::Context& context = context_of(ctx);
    const gemmkit::GemmProblem p = problem_of(
        {layout, op_a, op_b, m, n, k, dtype, c_dtype, lda, stride_a, ldb, stride_b, ldc, stride_c, batch},
        alpha, a, b, beta, c);
    run_gemm(context, p, kernel, workspace, workspace_bytes, kernel_ran, stream);
  });
}

gk_status gk_gemm(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b, int64_t m, int64_t n,
                  int64_t k, double alpha, gk_dtype dtype, const void* a, int64_t lda,
                  const void* b, int64_t ldb, double beta, void* c, int64_t ldc, void* stream) {
  return guarded("gk_gemm", [&] {
    gemmkit::Context& context = context_of(ctx);
    const gemmkit::GemmProblem p = problem_of(
        {layout, op_a, op_b, m, n, k, dtype, dtype, lda, 0, ldb, 0, ldc, 0, 1}, alpha, a, b, beta, c);
    run_gemm(context, p, nullptr, nullptr, 0, nullptr, stream);
  });
}

gk_status gk_gemm_strided_batched(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b,
                                  int64_t m, int64_t n, int64_t k, double alpha, gk_dtype dtype,
                                  const void* a, int64_t lda, int64_t stride_a, const void* b,
                                  int64_t ldb, int64_t stride_b, double beta, void* c,
                                  int64_t ldc, int64_t stride_c, int64_t batch, void* stream) {
  return guarded("gk_gemm_strided_batched", [&] {
    gemmkit::Context& context = context_of(ctx);
    const gemmkit::GemmProblem p = problem_of(
        {layout, op_a, op_b, m, n, k, dtype, dtype, lda, stride_a, ldb, stride_b, ldc, stride_c, batch},
        alpha, a, b, beta, c);
    run_gemm(context, p, nullptr, nullptr, 0, nullptr, stream);
  });
}

gk_status gk_gemm_workspace_bytes(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b,
                                  int64_t m, int64_t n, int64_t k, gk_dtype dtype, int64_t lda,
                                  int64_t stride_a, int64_t ldb, int64_t stride_b,
                                  gk_dtype c_dtype, int64_t ldc, int64_t stride_c,
                                  int64_t batch, const char* kernel, size_t* bytes) {
  return guarded("gk_gemm_workspace_bytes", [&] {
    const gemmkit::Context& context = context_of(ctx);
    require(bytes, "bytes");
    // Stand-ins for the operands, which validation wants and nothing reads.
    static char placeholder;
    const gemmkit::GemmProblem p = problem_of(
        {layout, op_a, op_b, m, n, k, dtype, c_dtype, lda, stride_a, ldb, stride_b, ldc, stride_c, batch},
        1.0, &placeholder, &placeholder, 0.0, &placeholder);
    *bytes = gemmkit::gemm_workspace_bytes(context, p, options_of(kernel));
  });
}

namespace {

// gk_plan_create and gk_plan_create_ex: the plan of the problem `shape` with `options`.
gk_status create_plan(const char* function, gk_context ctx, const Shape& shape, const void* a, const void* b,
                      const void* c, const gk_plan_options* options, gk_plan* out) {
  return guarded(function, [&] {
    require(out, "out");
    *out = nullptr;
    // The fields the caller's struct has (its size), the rest as zero.
    gk_plan_options given{};
    if (options) {
      if (options->size < offsetof(gk_plan_options, kernel) + sizeof(options->kernel))
        fail(ErrorCategory::usage, "options->size " + std::to_string(options->size) +
                                       " is too small: set it to sizeof(gk_plan_options)");
      std::memcpy(&given, options, std::min(options->size, sizeof given));
    }
    gemmkit::Context& context = context_of(ctx);
    const gemmkit::GemmProblem p = problem_of(shape, 1.0, a, b, 0.0, const_cast<void*>(c));
    gemmkit::GemmOptions plan_options = options_of(given.kernel);
    plan_options.moduli = given.moduli;
    gk_plan_s made{gemmkit::GemmPlan(context, p, plan_options)};
    made.plan.kernel();  // a plan that cannot run is the usage error saying why
    *out = new gk_plan_s(std::move(made));
  });
}

}  // namespace

gk_status gk_plan_create_ex(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b, int64_t m,
                            int64_t n, int64_t k, gk_dtype dtype, const void* a, int64_t lda,
                            int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                            gk_dtype c_dtype, const void* c, int64_t ldc, int64_t stride_c,
                            int64_t batch, const gk_plan_options* options, gk_plan* out) {
  return create_plan("gk_plan_create_ex", ctx,
                     {layout, op_a, op_b, m, n, k, dtype, c_dtype, lda, stride_a, ldb, stride_b, ldc, stride_c, batch},
                     a, b, c, options, out);
}

gk_status gk_plan_create(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b, int64_t m,
                         int64_t n, int64_t k, gk_dtype dtype, const void* a, int64_t lda,
                         int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                         gk_dtype c_dtype, const void* c, int64_t ldc, int64_t stride_c,
                         int64_t batch, const char* kernel, gk_plan* out) {
  const gk_plan_options options{sizeof(gk_plan_options), kernel, 0};
  return create_plan("gk_plan_create", ctx,
                     {layout, op_a, op_b, m, n, k, dtype, c_dtype, lda, stride_a, ldb, stride_b, ldc, stride_c, batch},
                     a, b, c, &options, out);
}

void gk_plan_destroy(gk_plan plan) { delete plan; }

gk_status gk_plan_workspace_bytes(gk_plan plan, size_t* bytes) {
  return guarded("gk_plan_workspace_bytes", [&] {
    require(plan, "plan");
    require(bytes, "bytes");
    *bytes = plan->plan.workspace_bytes();
  });
}

const char* gk_plan_kernel(gk_plan plan) {
  // Registry entries are never removed or moved: the name outlives the plan.
  return plan && plan->plan.can_run() ? plan->plan.kernel().name.c_str() : nullptr;
}

gk_status gk_plan_run(gk_plan plan, double alpha, const void* a, const void* b, double beta, void* c,
                      void* workspace, size_t workspace_bytes, void* stream) {
  return guarded("gk_plan_run", [&] {
    require(plan, "plan");
    gemmkit::GemmProblem p = plan->plan.problem();
    p.alpha = alpha, p.beta = beta;
    p.a = a, p.b = b, p.c = c;
    const auto s = static_cast<gemmkit::Stream>(stream);
    if (workspace) plan->plan.run(p, s, gemmkit::Workspace{workspace, workspace_bytes});
    else plan->plan.run(p, s);
  });
}

gk_status gk_modular_gemm(gk_context ctx, int64_t m, int64_t n, int64_t k, const uint32_t* moduli,
                          int64_t count, const int8_t* a, int64_t lda, int64_t stride_a, const int8_t* b,
                          int64_t ldb, int64_t stride_b, int8_t* c, int64_t ldc, int64_t stride_c, int8_t* ct,
                          int64_t ldct, int64_t stride_ct, void* workspace, size_t workspace_bytes,
                          void* stream) {
  return guarded("gk_modular_gemm", [&] {
    gemmkit::Context& context = context_of(ctx);
    gemmkit::ModularGemmProblem p = modular_problem_of(m, n, k, moduli, count);
    p.a = a, p.lda = lda, p.stride_a = stride_a;
    p.b = b, p.ldb = ldb, p.stride_b = stride_b;
    p.c = c, p.ldc = ldc, p.stride_c = stride_c;
    p.ct = ct, p.ldct = ldct, p.stride_ct = stride_ct;
    // No workspace: the context's pool, sized by the kernel that runs.
    gemmkit::modular_gemm(context, p, static_cast<gemmkit::Stream>(stream),
                          gemmkit::Workspace{workspace, workspace ? workspace_bytes : 0});
  });
}

gk_status gk_modular_gemm_workspace_bytes(gk_context ctx, int64_t m, int64_t n, int64_t k,
                                          const uint32_t* moduli, int64_t count, int64_t lda,
                                          int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t ldc,
                                          int64_t stride_c, int64_t ldct, int64_t stride_ct, size_t* bytes) {
  return guarded("gk_modular_gemm_workspace_bytes", [&] {
    const gemmkit::Context& context = context_of(ctx);
    require(bytes, "bytes");
    gemmkit::ModularGemmProblem p = modular_problem_of(m, n, k, moduli, count);
    p.lda = lda, p.stride_a = stride_a, p.ldb = ldb, p.stride_b = stride_b;
    p.ldc = ldc, p.stride_c = stride_c, p.ldct = ldct, p.stride_ct = stride_ct;
    *bytes = gemmkit::modular_gemm_workspace_bytes(context, p);
  });
}

gk_status gk_synchronize(gk_context ctx, void* stream) {
  return guarded("gk_synchronize", [&] {
    const gemmkit::Context& context = context_of(ctx);
    if (context.backend() != gemmkit::Backend::cuda) return;
#ifdef GEMMKIT_HAVE_CUDA
    // The legacy default stream is the current device's: make the context's device current.
    int previous = 0;
    cudaError_t status = cudaGetDevice(&previous);
    if (status == cudaSuccess) status = cudaSetDevice(context.device());
    if (status == cudaSuccess) {
      status = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      cudaSetDevice(previous);
    }
    if (status != cudaSuccess)
      fail(ErrorCategory::device, std::string("cudaStreamSynchronize: ") + cudaGetErrorString(status));
#else
    (void)stream;
#endif
  });
}

const char* gk_last_error(void) { return last_error.c_str(); }

const char* gk_status_name(gk_status status) {
  switch (status) {
    case GK_SUCCESS: return "GK_SUCCESS";
    case GK_ERROR_USAGE: return "GK_ERROR_USAGE";
    case GK_ERROR_INPUT: return "GK_ERROR_INPUT";
    case GK_ERROR_DEVICE: return "GK_ERROR_DEVICE";
    case GK_ERROR_OUT_OF_MEMORY: return "GK_ERROR_OUT_OF_MEMORY";
    case GK_ERROR_NUMERIC: return "GK_ERROR_NUMERIC";
    case GK_ERROR_INTERNAL: return "GK_ERROR_INTERNAL";
    case GK_ERROR_OUTPUT: return "GK_ERROR_OUTPUT";
    case GK_STATUS_RANGE_: break;  // not a value (gemmkit.h)
  }
  return "GK_STATUS_UNKNOWN";
}

gk_status gk_version(int* major, int* minor, int* patch) {
  return guarded("gk_version", [&] {
    require(major, "major");
    require(minor, "minor");
    require(patch, "patch");
    // GEMMKIT_VERSION is the project's "MAJOR.MINOR.PATCH".
    if (std::sscanf(GEMMKIT_VERSION, "%d.%d.%d", major, minor, patch) != 3)
      fail(ErrorCategory::internal, "version '" GEMMKIT_VERSION "' is not MAJOR.MINOR.PATCH");
  });
}

}  // extern "C"

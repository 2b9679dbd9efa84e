/* gemmkit.h: the C API of gemmkit, for C and for languages that call C (Fortran through
 * iso_c_binding, Julia's ccall, R's .Call, Python's ctypes). C99; includable from C++.
 *
 * It wraps the C++ device API (gemmkit/gemm.hpp, gemmkit/context.hpp):
 *   - a gk_context is one device (or the CPU): its library handles and workspace pool;
 *   - operands are in the context's memory: device memory of its device for a CUDA
 *     context, host memory for the CPU context. Nothing is copied;
 *   - CUDA calls are asynchronous on the caller's stream (a cudaStream_t passed as void*,
 *     NULL for the legacy default stream); CPU calls run before they return.
 *
 * Every function returns a gk_status (GK_SUCCESS = 0) except the few that cannot fail.
 * On failure, gk_last_error() gives the message on the failing thread; no C++ exception
 * ever leaves a gk_ function. Documented in docs/library.md ("The C API").
 */
#ifndef GEMMKIT_H
#define GEMMKIT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GK_API __attribute__((visibility("default")))
#else
#define GK_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types ---------------------------------------------------------------------------- */

/* One device's state (or the CPU's). Made by gk_context_create, freed by gk_context_destroy.
 * One context may be used from several threads and streams at once. */
typedef struct gk_context_s* gk_context;

/* What went wrong; one value per gemmkit::ErrorCategory. The values are stable. */
typedef enum gk_status {
  GK_SUCCESS = 0,
  GK_ERROR_USAGE = 1,          /* invalid arguments: NULL handle, bad enum, size, leading dimension,
                                  unknown kernel, a kernel that refuses the problem */
  GK_ERROR_INPUT = 2,          /* malformed or unsupported input data */
  GK_ERROR_DEVICE = 3,         /* CUDA, cuBLAS or driver failure; no CUDA device */
  GK_ERROR_OUT_OF_MEMORY = 4,  /* host or device allocation failed */
  GK_ERROR_NUMERIC = 5,        /* a result is not representable or failed verification */
  GK_ERROR_INTERNAL = 6,       /* a bug in gemmkit */
  GK_ERROR_OUTPUT = 7,         /* writing a result failed */
  GK_STATUS_RANGE_ = INT32_MIN  /* not a value: see GK_DTYPE_RANGE_ */
} gk_status;

typedef enum gk_backend {
  GK_BACKEND_AUTO = 0,  /* CUDA when this build has it and a device is present, else the CPU */
  GK_BACKEND_CPU = 1,
  GK_BACKEND_CUDA = 2,
  GK_BACKEND_RANGE_ = INT32_MIN  /* not a value: see GK_DTYPE_RANGE_ */
} gk_backend;

/* How matrices are stored: row-major (a row's elements are contiguous, the leading
 * dimension is the distance between rows) or column-major (as BLAS, cuBLAS, Fortran and
 * Julia store them: the leading dimension is the distance between columns). */
typedef enum gk_layout {
  GK_ROW_MAJOR = 0,
  GK_COL_MAJOR = 1,
  GK_LAYOUT_RANGE_ = INT32_MIN  /* not a value: see GK_DTYPE_RANGE_ */
} gk_layout;

/* op(X) = X or its transpose. A transposed operand is stored as its transpose: with
 * GK_OP_T, A is stored k x m. */
typedef enum gk_op {
  GK_OP_N = 0,
  GK_OP_T = 1,
  GK_OP_RANGE_ = INT32_MIN  /* not a value: see GK_DTYPE_RANGE_ */
} gk_op;

/* Element types. Storage: f32 float, f64 double, f16 IEEE binary16 and bf16 bfloat16 as
 * uint16_t bit patterns, tf32 as float (the tensor cores read 19 of its bits: f32 data,
 * computed at tf32 precision), i32 int32_t, i64 int64_t (alpha and beta must then be
 * integers). Integer results are exact: on the CPU context an entry whose exact value does not
 * fit C is a GK_ERROR_NUMERIC naming it, whatever the kernel (a cheap bound first, the modular
 * check only where the bound cannot prove it fits); on a CUDA context the exact integer GEMM
 * (cuda_exact_residues) reports it the same way. A kernel supports a subset (gemmkit list). */
typedef enum gk_dtype {
  GK_F32 = 0,
  GK_F64 = 1,
  GK_F16 = 2,
  GK_BF16 = 3,
  GK_TF32 = 4,
  GK_I32 = 5,
  GK_I64 = 6,
  /* Not a value. With it every int is a value of the enum type, so a caller's stray integer
   * (from Fortran, Julia or a cast) reaches the library as itself and is refused with
   * GK_ERROR_USAGE, instead of being a value C++ may assume cannot occur. */
  GK_DTYPE_RANGE_ = INT32_MIN
} gk_dtype;

/* ---- contexts ------------------------------------------------------------------------- */

/* Makes a context. device: the CUDA device index, or -1 for the calling thread's current
 * device; the CPU backend ignores it. GK_BACKEND_CUDA without a usable device (or in a build
 * without CUDA) fails with GK_ERROR_DEVICE and a message saying why. *out is NULL on failure. */
GK_API gk_status gk_context_create(gk_backend backend, int device, gk_context* out);

/* Frees a context after waiting for the work queued through it. Call it once no thread
 * uses the context any more. NULL is accepted and does nothing (as free(NULL)). */
GK_API gk_status gk_context_destroy(gk_context ctx);

/* The context's backend (never GK_BACKEND_AUTO) and device index (-1 for the CPU). */
GK_API gk_status gk_context_backend(gk_context ctx, gk_backend* out);
GK_API gk_status gk_context_device(gk_context ctx, int* out);

/* ---- GEMM ----------------------------------------------------------------------------- */

/* C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n, C m x n, all of
 * `dtype`, stored in `layout` with leading dimensions lda, ldb, ldc (in elements).
 * m, n, k >= 0 (an empty product scales C by beta; k = 0 with beta = 0 zeroes C); sizes and
 * leading dimensions whose operands would span more than 2^63 bytes are a GK_ERROR_USAGE.
 * beta = 0 makes C write-only: NaNs already in C do not propagate. alpha and beta are
 * given as double whatever the dtype. The auto-chosen kernel of the context's backend runs. */
GK_API gk_status gk_gemm(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b, int64_t m,
                         int64_t n, int64_t k, double alpha, gk_dtype dtype, const void* a,
                         int64_t lda, const void* b, int64_t ldb, double beta, void* c,
                         int64_t ldc, void* stream);

/* `batch` independent products of one shape: product i reads A at a + i * stride_a,
 * B at b + i * stride_b and writes C at c + i * stride_c (strides in elements). The order
 * is cublasGemmStridedBatchedEx's: each operand's pointer, leading dimension, stride; then
 * the batch count. A stride of 0 reuses one A or B for every product; C's stride must keep
 * the results apart. batch = 0 does nothing. */
GK_API gk_status gk_gemm_strided_batched(gk_context ctx, gk_layout layout, gk_op op_a,
                                         gk_op op_b, int64_t m, int64_t n, int64_t k,
                                         double alpha, gk_dtype dtype, const void* a,
                                         int64_t lda, int64_t stride_a, const void* b,
                                         int64_t ldb, int64_t stride_b, double beta, void* c,
                                         int64_t ldc, int64_t stride_c, int64_t batch,
                                         void* stream);

/* Everything gk_gemm_strided_batched does, plus:
 *   c_dtype     C's element type: `dtype`, or GK_F32 for GK_F16/GK_BF16 inputs (C in f32,
 *               the tensor cores' accumulator type);
 *   kernel      the registry name of the kernel to run (see `gemmkit list`), or NULL or
 *               "auto" for the automatic choice; any other name (the empty one too), a
 *               kernel of another backend, or one that refuses the problem, is a
 *               GK_ERROR_USAGE saying why;
 *   workspace   device memory for the call's scratch, at least gk_gemm_workspace_bytes()
 *               bytes, 256-byte aligned, used by no other stream meanwhile; NULL: the
 *               context's pool (one buffer per stream, grown when needed);
 *   kernel_ran  optional (may be NULL): set to the name of the kernel that ran, a string
 *               owned by gemmkit that stays valid until the process exits. */
GK_API gk_status gk_gemm_ex(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b,
                            int64_t m, int64_t n, int64_t k, double alpha, gk_dtype dtype,
                            const void* a, int64_t lda, int64_t stride_a, const void* b,
                            int64_t ldb, int64_t stride_b, double beta, gk_dtype c_dtype,
                            void* c, int64_t ldc, int64_t stride_c, int64_t batch,
                            const char* kernel, void* workspace, size_t workspace_bytes,
                            const char** kernel_ran, void* stream);

/* Bytes of workspace gk_gemm_ex needs for this problem and kernel (NULL: auto), in *bytes;
 * 0 for most kernels. The arguments mean what they mean for gk_gemm_ex; no operand is
 * needed, since the size does not depend on where the operands are. */
GK_API gk_status gk_gemm_workspace_bytes(gk_context ctx, gk_layout layout, gk_op op_a,
                                         gk_op op_b, int64_t m, int64_t n, int64_t k,
                                         gk_dtype dtype, int64_t lda, int64_t stride_a,
                                         int64_t ldb, int64_t stride_b, gk_dtype c_dtype,
                                         int64_t ldc, int64_t stride_c, int64_t batch,
                                         const char* kernel, size_t* bytes);

/* ---- plans: a problem planned once and run many times ------------------------------- */

/* A GEMM plan (gemmkit/plan.hpp): the kernel and workspace of one problem, chosen once.
 * It holds a pointer to its context: destroy it first. Thread-safe to run concurrently. */
typedef struct gk_plan_s* gk_plan;

/* Plans the problem gk_gemm_ex describes, without alpha and beta: everything else must be
 * the same at every gk_plan_run. a, b and c may be NULL; given, they stand for the alignment
 * the operands will have (NULL: as aligned as any kernel asks), and a kernel that needs
 * aligned rows is chosen only when they are. A problem no kernel (or not the kernel named)
 * takes is a GK_ERROR_USAGE saying why, as gk_gemm_ex's. *out is NULL on failure. */
GK_API gk_status gk_plan_create(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b,
                                int64_t m, int64_t n, int64_t k, gk_dtype dtype, const void* a,
                                int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                                int64_t stride_b, gk_dtype c_dtype, const void* c, int64_t ldc,
                                int64_t stride_c, int64_t batch, const char* kernel,
                                gk_plan* out);

/* What a plan is made with besides its problem (gemmkit/gemm.hpp's GemmOptions). Set `size`
 * to sizeof(gk_plan_options), zero what you do not set: fields added later read as zero from
 * a caller built against this header. A kernel option no kernel of the choice takes is a
 * GK_ERROR_USAGE naming the kernels that take it; with "auto", the choice is among those. */
typedef struct gk_plan_options {
  size_t size;
  const char* kernel; /* a registry name; NULL or "auto": the automatic choice */
  int moduli;         /* the Ozaki emulation's int8 primes per product, 2 to 53 (0: its own plan) */
} gk_plan_options;

/* gk_plan_create with options (NULL: those of gk_plan_create with a NULL kernel). */
GK_API gk_status gk_plan_create_ex(gk_context ctx, gk_layout layout, gk_op op_a, gk_op op_b,
                                   int64_t m, int64_t n, int64_t k, gk_dtype dtype, const void* a,
                                   int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                                   int64_t stride_b, gk_dtype c_dtype, const void* c, int64_t ldc,
                                   int64_t stride_c, int64_t batch, const gk_plan_options* options,
                                   gk_plan* out);

/* Frees a plan. NULL is accepted and does nothing. */
GK_API void gk_plan_destroy(gk_plan plan);

/* Bytes of workspace each gk_plan_run needs, in *bytes (0 for most kernels). */
GK_API gk_status gk_plan_workspace_bytes(gk_plan plan, size_t* bytes);

/* The registry name of the plan's kernel, owned by gemmkit and valid until the process
 * exits; NULL for a NULL plan. */
GK_API const char* gk_plan_kernel(gk_plan plan);

/* Runs the plan on these operands, as gk_gemm_ex would: asynchronous on `stream` for a CUDA
 * context. Operands the plan's kernel cannot take (their alignment) are a GK_ERROR_USAGE
 * and nothing runs. workspace: NULL for the context's pool, else at least
 * gk_plan_workspace_bytes() bytes, 256-byte aligned. */
GK_API gk_status gk_plan_run(gk_plan plan, double alpha, const void* a, const void* b,
                             double beta, void* c, void* workspace, size_t workspace_bytes,
                             void* stream);

/* Waits until the work queued on `stream` (NULL: the legacy default stream of the context's
 * device) is done; a GK_ERROR_DEVICE carries an asynchronous kernel failure. Does nothing
 * for the CPU context. */
GK_API gk_status gk_synchronize(gk_context ctx, void* stream);

/* ---- modular int8 GEMM: exact arithmetic by residues ----------------------------------- */

/* C_q = A_q B_q mod p_q for each of `count` odd moduli p_q = moduli[q] in [3, 255], on
 * centred residues (int8 entries in [-(p_q-1)/2, (p_q-1)/2]; results centred too), on int8
 * tensor cores (gemmkit/modular.hpp, docs/exact.md). Matrix q of an operand starts q * stride
 * elements after the first (stride 0: one matrix for every modulus):
 *   A_q    m x k, row-major, at a (lda, stride_a);
 *   B_q    stored transposed, n x k row-major (B column-major), at b (ldb, stride_b);
 *   C_q    m x n row-major at c (ldc, stride_c), and/or C_q^T, n x m row-major, at ct
 *          (ldct, stride_ct): either may be NULL, not both.
 * Any k (a k longer than int32 sums of residue products hold runs in chunks). On a CUDA
 * context the pointers are device memory and the call is asynchronous on `stream`; on the
 * CPU context they are host memory and the reference (int64 sums) runs before it returns.
 * workspace: at least gk_modular_gemm_workspace_bytes() bytes of device memory, 256-byte
 * aligned, or NULL for the context's pool. */
GK_API gk_status gk_modular_gemm(gk_context ctx, int64_t m, int64_t n, int64_t k,
                                 const uint32_t* moduli, int64_t count, const int8_t* a,
                                 int64_t lda, int64_t stride_a, const int8_t* b, int64_t ldb,
                                 int64_t stride_b, int8_t* c, int64_t ldc, int64_t stride_c,
                                 int8_t* ct, int64_t ldct, int64_t stride_ct, void* workspace,
                                 size_t workspace_bytes, void* stream);

/* Bytes of workspace gk_modular_gemm needs, in *bytes, from the shapes alone (an output
 * counts as asked for when its leading dimension is nonzero). */
GK_API gk_status gk_modular_gemm_workspace_bytes(gk_context ctx, int64_t m, int64_t n, int64_t k,
                                                 const uint32_t* moduli, int64_t count,
                                                 int64_t lda, int64_t stride_a, int64_t ldb,
                                                 int64_t stride_b, int64_t ldc, int64_t stride_c,
                                                 int64_t ldct, int64_t stride_ct, size_t* bytes);

/* ---- errors and version --------------------------------------------------------------- */

/* The message of the last failed gk_ call on the calling thread ("function: what and
 * why"), or "" if none has failed on this thread. Successful calls leave it as it is. The
 * string belongs to gemmkit and stays valid until the thread's next failing call. */
GK_API const char* gk_last_error(void);

/* The enumerator's name, e.g. "GK_ERROR_USAGE"; "GK_STATUS_UNKNOWN" for other values. */
GK_API const char* gk_status_name(gk_status status);

/* The library's version (of the library linked, not of this header). */
GK_API gk_status gk_version(int* major, int* minor, int* patch);

#ifdef __cplusplus
}
#endif

#endif /* GEMMKIT_H */

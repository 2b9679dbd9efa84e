/* The C API from a C program, on the CPU context: products against a plain loop, a strided
 * batch, the error paths and their messages. Compiled as C99 (strict);
 * prints each failed check and exits 1 if any failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmkit.h"

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* got == expected, and after a failure a last error that contains `needle`. */
static void check_status(const char* file, int line, const char* call, gk_status got,
                         gk_status expected, const char* needle) {
  if (got != expected) {
    fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", file, line, call,
            gk_status_name(got), gk_status_name(expected), gk_last_error());
    ++failures;
  } else if (strstr(gk_last_error(), needle) == NULL) {
    fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", file, line, call,
            gk_last_error(), needle);
    ++failures;
  }
}
#define CHECK_STATUS(call, expected, needle) \
  check_status(__FILE__, __LINE__, #call, (call), (expected), (needle))
#define CHECK_OK(call) CHECK_STATUS(call, GK_SUCCESS, "")

/* ---- a plain reference ----------------------------------------------------------------- */

/* Element (i, j) of a stored matrix with leading dimension ld. */
static int64_t at(gk_layout layout, int64_t i, int64_t j, int64_t ld) {
  return layout == GK_ROW_MAJOR ? i * ld + j : i + j * ld;
}

/* C = alpha op(A) op(B) + beta C in double, on doubles. */
static void reference_gemm(gk_layout layout, gk_op op_a, gk_op op_b, int64_t m, int64_t n,
                           int64_t k, double alpha, const double* a, int64_t lda,
                           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  int64_t i, j, p;
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) {
      double sum = 0;
      for (p = 0; p < k; ++p) {
        double x = op_a == GK_OP_N ? a[at(layout, i, p, lda)] : a[at(layout, p, i, lda)];
        double y = op_b == GK_OP_N ? b[at(layout, p, j, ldb)] : b[at(layout, j, p, ldb)];
        sum += x * y;
      }
      c[at(layout, i, j, ldc)] = alpha * sum + beta * c[at(layout, i, j, ldc)];
    }
}

/* Non-trivial values: signed, fractional, no two neighbours alike. */
static void fill(double* x, int64_t count, unsigned seed) {
  int64_t i;
  uint32_t state = 2654435761u * (seed + 1);
  for (i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = (double)((int)(state >> 24) - 128) / 32.0;
  }
}

/* Storage of a matrix rows x cols in `layout` with ld = its width + pad. */
static int64_t leading(gk_layout layout, int64_t rows, int64_t cols, int64_t pad) {
  return (layout == GK_ROW_MAJOR ? cols : rows) + pad;
}
static int64_t span(gk_layout layout, int64_t rows, int64_t cols, int64_t ld) {
  return layout == GK_ROW_MAJOR ? rows * ld : cols * ld;
}

static double max_abs_diff(const double* x, const double* y, int64_t count) {
  double worst = 0;
  int64_t i;
  for (i = 0; i < count; ++i)
    if (fabs(x[i] - y[i]) > worst) worst = fabs(x[i] - y[i]);
  return worst;
}

/* ---- products --------------------------------------------------------------------------- */

/* Every layout and transpose pair, f64 and f32, with padded leading dimensions and beta != 0. */
static void test_products(gk_context ctx) {
  const int64_t m = 13, n = 7, k = 9;
  const double alpha = 1.25, beta = -0.75;
  int layout, op_a, op_b, f32;
  for (f32 = 0; f32 <= 1; ++f32)
    for (layout = GK_ROW_MAJOR; layout <= GK_COL_MAJOR; ++layout)
      for (op_a = GK_OP_N; op_a <= GK_OP_T; ++op_a)
        for (op_b = GK_OP_N; op_b <= GK_OP_T; ++op_b) {
          const gk_layout l = (gk_layout)layout;
          const int64_t a_rows = op_a == GK_OP_N ? m : k, a_cols = op_a == GK_OP_N ? k : m;
          const int64_t b_rows = op_b == GK_OP_N ? k : n, b_cols = op_b == GK_OP_N ? n : k;
          const int64_t lda = leading(l, a_rows, a_cols, 3), ldb = leading(l, b_rows, b_cols, 1);
          const int64_t ldc = leading(l, m, n, 2);
          const int64_t na = span(l, a_rows, a_cols, lda), nb = span(l, b_rows, b_cols, ldb);
          const int64_t nc = span(l, m, n, ldc);
          double* a = malloc(sizeof(double) * na);
          double* b = malloc(sizeof(double) * nb);
          double* c = malloc(sizeof(double) * nc);
          double* expected = malloc(sizeof(double) * nc);
          double* got = malloc(sizeof(double) * nc);
          int64_t i;
          fill(a, na, 1);
          fill(b, nb, 2);
          fill(c, nc, 3);
          memcpy(expected, c, sizeof(double) * nc);
          reference_gemm(l, (gk_op)op_a, (gk_op)op_b, m, n, k, alpha, a, lda, b, ldb, beta,
                         expected, ldc);
          if (f32) {
            float* af = malloc(sizeof(float) * na);
            float* bf = malloc(sizeof(float) * nb);
            float* cf = malloc(sizeof(float) * nc);
            for (i = 0; i < na; ++i) af[i] = (float)a[i];
            for (i = 0; i < nb; ++i) bf[i] = (float)b[i];
            for (i = 0; i < nc; ++i) cf[i] = (float)c[i];
            CHECK_OK(gk_gemm(ctx, l, (gk_op)op_a, (gk_op)op_b, m, n, k, alpha, GK_F32, af, lda,
                             bf, ldb, beta, cf, ldc, NULL));
            for (i = 0; i < nc; ++i) got[i] = cf[i];
            free(af);
            free(bf);
            free(cf);
          } else {
            memcpy(got, c, sizeof(double) * nc);
            CHECK_OK(gk_gemm(ctx, l, (gk_op)op_a, (gk_op)op_b, m, n, k, alpha, GK_F64, a, lda, b,
                             ldb, beta, got, ldc, NULL));
          }
          /* The values are multiples of 1/32 below 4 in size: f64 is exact, f32 nearly. */
          if (max_abs_diff(got, expected, nc) > (f32 ? 1e-4 : 1e-12)) {
            fprintf(stderr, "%s %s-major op_a %d op_b %d: max |difference| %g\n",
                    f32 ? "f32" : "f64", l == GK_ROW_MAJOR ? "row" : "column", op_a, op_b,
                    max_abs_diff(got, expected, nc));
            ++failures;
          }
          free(a);
          free(b);
          free(c);
          free(expected);
          free(got);
        }
}

/* Three products of one shape; A's matrices apart by a gap, one B for all, C's apart by a
 * gap whose elements must stay as they were. */
static void test_strided_batch(gk_context ctx) {
  enum { batch = 3, m = 5, n = 4, k = 6 };
  const gk_layout layouts[2] = {GK_ROW_MAJOR, GK_COL_MAJOR};
  int li;
  for (li = 0; li < 2; ++li) {
    const gk_layout l = layouts[li];
    const int64_t lda = leading(l, m, k, 0), ldb = leading(l, n, k, 2), ldc = leading(l, m, n, 1);
    const int64_t stride_a = span(l, m, k, lda) + 4, stride_c = span(l, m, n, ldc) + 3;
    double a[batch * (m * k + 4)], b[n * (k + 2) + 2 * k], c[batch * (m * (n + 1) + 3) + 8];
    double expected[sizeof c / sizeof c[0]];
    int i;
    fill(a, sizeof a / sizeof a[0], 4);
    fill(b, sizeof b / sizeof b[0], 5);
    fill(c, sizeof c / sizeof c[0], 6);
    memcpy(expected, c, sizeof c);
    for (i = 0; i < batch; ++i)
      reference_gemm(l, GK_OP_N, GK_OP_T, m, n, k, -2.0, a + i * stride_a, lda, b, ldb, 0.5,
                     expected + i * stride_c, ldc);
    CHECK_OK(gk_gemm_strided_batched(ctx, l, GK_OP_N, GK_OP_T, m, n, k, -2.0, GK_F64, a, lda,
                                     stride_a, b, ldb, 0, 0.5, c, ldc, stride_c, batch, NULL));
    CHECK(max_abs_diff(c, expected, sizeof c / sizeof c[0]) <= 1e-12);
    /* batch 0 touches nothing */
    memcpy(expected, c, sizeof c);
    CHECK_OK(gk_gemm_strided_batched(ctx, l, GK_OP_N, GK_OP_T, m, n, k, 1.0, GK_F64, a, lda,
                                     stride_a, b, ldb, 0, 0.0, c, ldc, stride_c, 0, NULL));
    CHECK(memcmp(c, expected, sizeof c) == 0);
  }
}

/* Empty products: k = 0 scales C by beta (0: zeroes it, NaNs included); m = 0 touches nothing. */
static void test_empty_products(gk_context ctx) {
  double c[6] = {1, -2, 3, -4, 5, 0}, a[1] = {7}, b[1] = {9};
  c[5] = nan("");
  CHECK_OK(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 3, 0, 1.0, GK_F64, a, 1, b, 3, 2.0, c, 3,
                   NULL));
  CHECK(c[0] == 2 && c[1] == -4 && c[4] == 10 && isnan(c[5]));
  CHECK_OK(gk_gemm(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 2, 3, 0, 1.0, GK_F64, a, 2, b, 1, 0.0, c, 2,
                   NULL));
  CHECK(c[0] == 0 && c[3] == 0 && c[5] == 0);
  c[0] = 42;
  CHECK_OK(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 0, 3, 4, 1.0, GK_F64, NULL, 4, NULL, 3, 0.0,
                   c, 3, NULL));
  CHECK(c[0] == 42);
}

/* gk_gemm_ex: a named kernel, the kernel that ran, integers, bf16 inputs with C in f32. */
static void test_gemm_ex(gk_context ctx) {
  const int32_t a[6] = {1, -2, 3, 4, 5, -6}; /* 2 x 3 */
  const int32_t b[6] = {7, 8, -9, 10, 11, 12}; /* 3 x 2 */
  int32_t c[4] = {1, 2, 3, 4};
  /* A B = {{58, 24}, {-83, 10}}; C = 2 A B + C */
  const int32_t expected[4] = {2 * 58 + 1, 2 * 24 + 2, 2 * -83 + 3, 2 * 10 + 4};
  const char* ran = NULL;
  size_t bytes = 99;
  CHECK_OK(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 2.0, GK_I32, a, 3, 0, b, 2, 0,
                      1.0, GK_I32, c, 2, 0, 1, "cpu_naive", NULL, 0, &ran, NULL));
  CHECK(memcmp(c, expected, sizeof c) == 0);
  CHECK(ran != NULL && strcmp(ran, "cpu_naive") == 0);

  /* auto: some CPU kernel; NULL kernel_ran is allowed */
  ran = NULL;
  CHECK_OK(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 1.0, GK_I32, a, 3, 0, b, 2, 0,
                      0.0, GK_I32, c, 2, 0, 1, NULL, NULL, 0, &ran, NULL));
  CHECK(ran != NULL && strncmp(ran, "cpu_", 4) == 0);
  CHECK(c[0] == 58 && c[1] == 24 && c[2] == -83 && c[3] == 10);
  CHECK_OK(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 1.0, GK_I32, a, 3, 0, b, 2, 0,
                      0.0, GK_I32, c, 2, 0, 1, "auto", NULL, 0, NULL, NULL));

  CHECK_STATUS(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 1.0, GK_I32, a, 3, 0, b, 2,
                          0, 0.0, GK_I32, c, 2, 0, 1, "no_such_kernel", NULL, 0, &ran, NULL),
               GK_ERROR_USAGE, "no_such_kernel");
  CHECK_STATUS(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 0.5, GK_I32, a, 3, 0, b, 2,
                          0, 0.0, GK_I32, c, 2, 0, 1, NULL, NULL, 0, NULL, NULL),
               GK_ERROR_USAGE, "integers");

  CHECK_OK(gk_gemm_workspace_bytes(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 64, 64, 64, GK_F32, 64, 0,
                                   64, 0, GK_F32, 64, 0, 1, NULL, &bytes));
  CHECK(bytes == 0); /* no CPU kernel needs device scratch */
  CHECK_STATUS(gk_gemm_workspace_bytes(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 64, 64, 64, GK_F32, 64,
                                       0, 64, 0, GK_F32, 64, 0, 1, NULL, NULL),
               GK_ERROR_USAGE, "bytes is NULL");

  {
    /* bf16 inputs as bit patterns (the upper half of the float: exact for small integers),
     * C in f32; column-major 2x2 = (2x3)(3x2) */
    const float av[6] = {1, 2, -3, 4, 5, 6}, bv[6] = {2, -1, 0, 3, 1, 1};
    uint16_t ab[6], bb[6];
    float cf[4] = {0, 0, 0, 0}, want[4];
    int i, j, p;
    for (i = 0; i < 6; ++i) {
      uint32_t bits;
      memcpy(&bits, &av[i], 4);
      ab[i] = (uint16_t)(bits >> 16);
      memcpy(&bits, &bv[i], 4);
      bb[i] = (uint16_t)(bits >> 16);
    }
    for (i = 0; i < 2; ++i)
      for (j = 0; j < 2; ++j) {
        want[i + 2 * j] = 0;
        for (p = 0; p < 3; ++p) want[i + 2 * j] += av[i + 2 * p] * bv[p + 3 * j];
      }
    CHECK_OK(gk_gemm_ex(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 1.0, GK_BF16, ab, 2, 0, bb, 3,
                        0, 0.0, GK_F32, cf, 2, 0, 1, NULL, NULL, 0, NULL, NULL));
    CHECK(memcmp(cf, want, sizeof cf) == 0);
    /* C in f64 is not offered for bf16 */
    CHECK_STATUS(gk_gemm_ex(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 3, 1.0, GK_BF16, ab, 2, 0,
                            bb, 3, 0, 0.0, GK_F64, cf, 2, 0, 1, NULL, NULL, 0, NULL, NULL),
                 GK_ERROR_USAGE, "f64");
  }
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_errors(gk_context ctx) {
  double a[12], b[12], c[9], before[9];
  gk_context made = (gk_context)&made; /* not NULL, so that a reset to NULL shows */
  gk_backend backend;
  fill(a, 12, 7);
  fill(b, 12, 8);
  fill(c, 9, 9);
  memcpy(before, c, sizeof c);

  CHECK_STATUS(gk_gemm(NULL, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a, 4, b, 3, 0,
                       c, 3, NULL),
               GK_ERROR_USAGE, "gk_gemm: ctx is NULL");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, (gk_dtype)99, a, 4, b, 3,
                       0, c, 3, NULL),
               GK_ERROR_USAGE, "dtype 99 is not a gk_dtype");
  CHECK_STATUS(gk_gemm(ctx, (gk_layout)5, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a, 4, b, 3, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "layout 5");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, (gk_op)2, 3, 3, 4, 1, GK_F64, a, 4, b, 3, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "op_b 2");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, -3, 4, 1, GK_F64, a, 4, b, 3, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "negative");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a, 3, b, 3, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "lda 3");
  /* column-major: A (3 x 4) needs lda >= 3 rows, C (3 x 3) ldc >= 3 */
  CHECK_STATUS(gk_gemm(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a, 2, b, 4, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "lda 2");
  CHECK_STATUS(gk_gemm(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a, 3, b, 4, 0, c,
                       2, NULL),
               GK_ERROR_USAGE, "ldc 2");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, NULL, 4, b, 3, 0, c,
                       3, NULL),
               GK_ERROR_USAGE, "null");
  CHECK_STATUS(gk_gemm_strided_batched(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 3, 3, 4, 1, GK_F64, a,
                                       4, 0, b, 3, 0, 0, c, 3, 0, -1, NULL),
               GK_ERROR_USAGE, "batch");
  CHECK(memcmp(c, before, sizeof c) == 0); /* no failing call wrote C */

  /* Kept until the next failure: a successful call leaves the message as it was. */
  CHECK_STATUS(gk_context_backend(ctx, NULL), GK_ERROR_USAGE, "gk_context_backend: out is NULL");
  CHECK_OK(gk_context_backend(ctx, &backend));
  CHECK(backend == GK_BACKEND_CPU);
  CHECK(strcmp(gk_last_error(), "gk_context_backend: out is NULL") == 0);

  CHECK_STATUS(gk_context_create(GK_BACKEND_CPU, -1, NULL), GK_ERROR_USAGE, "out is NULL");
  CHECK_STATUS(gk_context_create((gk_backend)7, -1, &made), GK_ERROR_USAGE,
               "backend 7 is not a gk_backend");
  CHECK(made == NULL);
  CHECK_STATUS(gk_context_device(NULL, NULL), GK_ERROR_USAGE, "ctx is NULL");
  CHECK_STATUS(gk_synchronize(NULL, NULL), GK_ERROR_USAGE, "gk_synchronize: ctx is NULL");
  CHECK_OK(gk_synchronize(ctx, NULL));
  CHECK_OK(gk_context_destroy(NULL));
  CHECK_STATUS(gk_version(NULL, NULL, NULL), GK_ERROR_USAGE, "major is NULL");

  /* A CUDA context: made where a device is, else a device error saying why. */
  {
    gk_status status = gk_context_create(GK_BACKEND_CUDA, 0, &made);
    CHECK(status == GK_SUCCESS || status == GK_ERROR_DEVICE);
    if (status == GK_SUCCESS) {
      CHECK_OK(gk_context_backend(made, &backend));
      CHECK(backend == GK_BACKEND_CUDA);
      CHECK_OK(gk_context_destroy(made));
    } else {
      CHECK(made == NULL);
      CHECK(strstr(gk_last_error(), "CUDA") != NULL || strstr(gk_last_error(), "device") != NULL);
    }
  }
}

/* Integer results never wrap, whatever the kernel or the call; the kernel name "" is no kernel;
 * sizes whose spans overflow are refused before anything is read or written. */
static void test_integer_rule_and_sizes(gk_context ctx) {
  int64_t big[16], c[16];
  int32_t a32[2] = {46341, 46341}, c32[1] = {5}; /* 2 * 46341^2 = 4294976562 > 2^31 - 1 */
  size_t bytes = 0;
  const char* kernels[3] = {NULL, "cpu_naive", "cpu_blocked"};
  int i, kernel;
  for (i = 0; i < 16; ++i) big[i] = (int64_t)1 << 40; /* each entry of big^2 is 4 * 2^80: 0 mod 2^64 */
  for (kernel = 0; kernel < 3; ++kernel) {
    for (i = 0; i < 16; ++i) c[i] = 7;
    CHECK_STATUS(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 4, 4, 4, 1.0, GK_I64, big, 4, 0, big, 4, 0, 0.0,
                            GK_I64, c, 4, 0, 1, kernels[kernel], NULL, 0, NULL, NULL),
                 GK_ERROR_NUMERIC, "the exact result at (0, 0) is 4835703278458516698824704, which does not fit i64");
  }
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 4, 4, 4, 1.0, GK_I64, big, 4, big, 4, 0.0, c, 4, NULL),
               GK_ERROR_NUMERIC, "gk_gemm: numeric overflow: the exact result at (0, 0)");
  /* column-major, 1 x 1 x 2: the entry is named as the caller stores C */
  CHECK_STATUS(gk_gemm(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, 1.0, GK_I32, a32, 1, a32, 2, 0.0, c32, 1, NULL),
               GK_ERROR_NUMERIC, "(0, 0) is 4294976562, which does not fit i32");
  CHECK_STATUS(gk_gemm_strided_batched(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_T, 1, 1, 4, 1.0, GK_I64, big, 4, 4, big,
                                       4, 4, 0.0, c, 1, 1, 4, NULL),
               GK_ERROR_NUMERIC, "(product 0 of the batch)");
  /* the empty kernel name is unknown, not auto */
  CHECK_STATUS(gk_gemm_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, 1.0, GK_I32, a32, 2, 0, a32, 1, 0, 0.0, GK_I32,
                          c32, 1, 0, 1, "", NULL, 0, NULL, NULL),
               GK_ERROR_USAGE, "unknown kernel ''");
  CHECK_STATUS(gk_gemm_workspace_bytes(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 1, 1, 2, GK_I32, 2, 0, 1, 0, GK_I32, 1,
                                       0, 1, "", &bytes),
               GK_ERROR_USAGE, "unknown kernel ''");
  /* m = n = 2^40 over a 16-element buffer: C would span 2^80 elements (it used to crash) */
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, (int64_t)1 << 40, (int64_t)1 << 40, 1, 1.0, GK_I64, big,
                       1, big, (int64_t)1 << 40, 0.0, c, (int64_t)1 << 40, NULL),
               GK_ERROR_USAGE, "C would span more than 2^63 bytes");
  CHECK_STATUS(gk_gemm(ctx, GK_COL_MAJOR, GK_OP_N, GK_OP_N, (int64_t)1 << 40, (int64_t)1 << 40, 1, 1.0, GK_F64, big,
                       (int64_t)1 << 40, big, 1, 0.0, c, (int64_t)1 << 40, NULL),
               GK_ERROR_USAGE, "C would span more than 2^63 bytes");
  CHECK_STATUS(gk_gemm(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, 1.0, GK_F64, big, (int64_t)1 << 62, big, 2, 0.0,
                       c, 2, NULL),
               GK_ERROR_USAGE, "A would span more than 2^63 bytes");
}

/* The modular GEMM: its checks, nothing written by a failing call, and on the CPU context the
 * reference's residues, against sums worked by hand. (The GPU tests check the CUDA kernels.) */
static void test_modular_errors(gk_context ctx) {
  int8_t a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {2, 2, 2, 2, 2, 2}, c[4] = {9, 9, 9, 9};
  uint32_t moduli[2] = {251, 241}, even[1] = {250};
  size_t bytes = 1;
  CHECK_STATUS(gk_modular_gemm(NULL, 2, 2, 3, moduli, 1, a, 3, 0, b, 3, 0, c, 2, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "gk_modular_gemm: ctx is NULL");
  CHECK_STATUS(gk_modular_gemm(ctx, 2, 2, 3, NULL, 1, a, 3, 0, b, 3, 0, c, 2, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "moduli is NULL");
  CHECK_STATUS(gk_modular_gemm(ctx, 2, 2, 3, moduli, -1, a, 3, 0, b, 3, 0, c, 2, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "count -1");
  CHECK_STATUS(gk_modular_gemm(ctx, 2, 2, 3, even, 1, a, 3, 0, b, 3, 0, c, 2, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "modulus 0 is 250");
  CHECK_STATUS(gk_modular_gemm(ctx, 2, 2, 3, moduli, 2, a, 3, 0, b, 3, 0, NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "no output");
  CHECK_STATUS(gk_modular_gemm(ctx, 2, 2, 3, moduli, 2, a, 3, 0, b, 3, 0, c, 1, 0, NULL, 0, 0, NULL, 0, NULL),
               GK_ERROR_USAGE, "ldc 1");
  CHECK(c[0] == 9 && c[1] == 9 && c[2] == 9 && c[3] == 9);
  CHECK_STATUS(gk_modular_gemm_workspace_bytes(ctx, 2, 2, 3, moduli, 2, 3, 0, 3, 0, 2, 4, 0, 0, NULL),
               GK_ERROR_USAGE, "bytes is NULL");
  CHECK(gk_modular_gemm_workspace_bytes(ctx, 2, 2, 3, moduli, 2, 3, 0, 3, 0, 2, 4, 0, 0, &bytes) == GK_SUCCESS);
  CHECK(bytes == 0);
  /* A = [1 -2 3; -4 5 -6], B^T rows [2 2 2] and [2 2 2]: row sums 2 * (1 - 2 + 3) = 4 and
   * 2 * (-4 + 5 - 6) = -10; mod 7 centred: 4 -> -3, -10 -> -3. Mod 5: 4 -> -1, -10 -> 0. */
  {
    uint32_t small[2] = {7, 5};
    int8_t out[8], out_t[8];
    CHECK(gk_modular_gemm(ctx, 2, 2, 3, small, 2, a, 3, 0, b, 3, 0, out, 2, 4, out_t, 2, 4, NULL, 0, NULL) ==
          GK_SUCCESS);
    CHECK(out[0] == -3 && out[1] == -3 && out[2] == -3 && out[3] == -3);
    CHECK(out[4] == -1 && out[5] == -1 && out[6] == 0 && out[7] == 0);
    CHECK(out_t[0] == -3 && out_t[1] == -3 && out_t[4] == -1 && out_t[5] == 0 && out_t[6] == -1 && out_t[7] == 0);
  }
}

static void test_status_names(void) {
  CHECK(strcmp(gk_status_name(GK_SUCCESS), "GK_SUCCESS") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_USAGE), "GK_ERROR_USAGE") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_INPUT), "GK_ERROR_INPUT") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_DEVICE), "GK_ERROR_DEVICE") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_OUT_OF_MEMORY), "GK_ERROR_OUT_OF_MEMORY") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_NUMERIC), "GK_ERROR_NUMERIC") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_INTERNAL), "GK_ERROR_INTERNAL") == 0);
  CHECK(strcmp(gk_status_name(GK_ERROR_OUTPUT), "GK_ERROR_OUTPUT") == 0);
  CHECK(strcmp(gk_status_name((gk_status)42), "GK_STATUS_UNKNOWN") == 0);
}

/* ---- plans ------------------------------------------------------------------------------- */

/* A plan made once (no operands yet) runs three operand sets as gk_gemm_ex does; a plan no
 * kernel can run is not made; operands, sizes and NULLs are checked. */
static void test_plans(gk_context ctx) {
  enum { M = 5, N = 4, K = 3, LDA = 4, LDB = 6, LDC = 5 }; /* col-major, A^T stored K x M */
  double a[M * LDA], b[N * LDB], c[N * LDC], expected[N * LDC];
  gk_plan plan = NULL, refused = (gk_plan)1;
  size_t bytes = 99;
  unsigned seed;
  CHECK_OK(gk_plan_create(ctx, GK_COL_MAJOR, GK_OP_T, GK_OP_N, M, N, K, GK_F64, NULL, LDA, 0, NULL,
                          LDB, 0, GK_F64, NULL, LDC, 0, 1, "cpu_restrict", &plan));
  if (plan == NULL) return;
  CHECK(strcmp(gk_plan_kernel(plan), "cpu_restrict") == 0);
  CHECK_OK(gk_plan_workspace_bytes(plan, &bytes));
  CHECK(bytes == 0);
  for (seed = 1; seed <= 3; ++seed) {
    const double alpha = 0.5 * seed, beta = seed == 2 ? 0.0 : -1.0;
    fill(a, M * LDA, seed);
    fill(b, N * LDB, seed + 10);
    fill(c, N * LDC, seed + 20);
    memcpy(expected, c, sizeof c);
    CHECK_OK(gk_plan_run(plan, alpha, a, b, beta, c, NULL, 0, NULL));
    CHECK_OK(gk_gemm_ex(ctx, GK_COL_MAJOR, GK_OP_T, GK_OP_N, M, N, K, alpha, GK_F64, a, LDA, 0, b, LDB,
                        0, beta, GK_F64, expected, LDC, 0, 1, "cpu_restrict", NULL, 0, NULL, NULL));
    CHECK(memcmp(c, expected, sizeof c) == 0);
  }
  CHECK_STATUS(gk_plan_run(plan, 1.0, a, NULL, 0.0, c, NULL, 0, NULL), GK_ERROR_USAGE, "null");
  CHECK_STATUS(gk_plan_run(NULL, 1.0, a, b, 0.0, c, NULL, 0, NULL), GK_ERROR_USAGE, "plan is NULL");
  CHECK_STATUS(gk_plan_workspace_bytes(plan, NULL), GK_ERROR_USAGE, "bytes is NULL");
  gk_plan_destroy(plan);
  gk_plan_destroy(NULL);
  CHECK(gk_plan_kernel(NULL) == NULL);

  /* Options: a kernel by name in gk_plan_options runs as gk_plan_create's; the Ozaki moduli
   * are taken by no CPU kernel, so a CPU plan with them is refused, saying which option. */
  {
    gk_plan_options options;
    gk_plan with_options = NULL;
    memset(&options, 0, sizeof options);
    options.size = sizeof options;
    options.kernel = "cpu_blocked";
    CHECK_OK(gk_plan_create_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 2, 0, NULL, 2, 0,
                               GK_F64, NULL, 2, 0, 1, &options, &with_options));
    CHECK(with_options != NULL && strcmp(gk_plan_kernel(with_options), "cpu_blocked") == 0);
    gk_plan_destroy(with_options);
    options.kernel = NULL;
    options.moduli = 16;
    refused = (gk_plan)1;
    CHECK_STATUS(gk_plan_create_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 2, 0, NULL, 2, 0,
                                   GK_F64, NULL, 2, 0, 1, &options, &refused),
                 GK_ERROR_USAGE, "moduli 16");
    CHECK(refused == NULL);
    options.size = 4; /* a struct from no header of ours */
    CHECK_STATUS(gk_plan_create_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 2, 0, NULL, 2, 0,
                                   GK_F64, NULL, 2, 0, 1, &options, &refused),
                 GK_ERROR_USAGE, "sizeof(gk_plan_options)");
    /* NULL options: gk_plan_create's with a NULL kernel. */
    CHECK_OK(gk_plan_create_ex(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 2, 0, NULL, 2, 0,
                               GK_F64, NULL, 2, 0, 1, NULL, &with_options));
    gk_plan_destroy(with_options);
  }

  /* OpenBLAS takes no integers: no plan, and the reason. */
  CHECK_STATUS(gk_plan_create(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_I32, NULL, 2, 0, NULL,
                              2, 0, GK_I32, NULL, 2, 0, 1, "cpu_openblas", &refused),
               GK_ERROR_USAGE, "cpu_openblas");
  CHECK(refused == NULL);
  CHECK_STATUS(gk_plan_create(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 1, 0, NULL,
                              2, 0, GK_F64, NULL, 2, 0, 1, NULL, &refused),
               GK_ERROR_USAGE, "lda 1");
  CHECK_STATUS(gk_plan_create(ctx, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, 2, 2, 2, GK_F64, NULL, 2, 0, NULL,
                              2, 0, GK_F64, NULL, 2, 0, 1, NULL, NULL),
               GK_ERROR_USAGE, "out is NULL");
}

int main(void) {
  gk_context ctx = NULL;
  gk_backend backend = GK_BACKEND_AUTO;
  int device = 7, major = -1, minor = -1, patch = -1;

  CHECK(strcmp(gk_last_error(), "") == 0); /* nothing has failed yet */
  CHECK_OK(gk_version(&major, &minor, &patch));
  CHECK(major >= 0 && minor >= 0 && patch >= 0 && major + minor + patch > 0);

  CHECK_OK(gk_context_create(GK_BACKEND_CPU, -1, &ctx));
  if (ctx == NULL) {
    fprintf(stderr, "no CPU context: %s\n", gk_last_error());
    return 1;
  }
  CHECK_OK(gk_context_backend(ctx, &backend));
  CHECK(backend == GK_BACKEND_CPU);
  CHECK_OK(gk_context_device(ctx, &device));
  CHECK(device == -1);
  CHECK(strcmp(gk_last_error(), "") == 0); /* successes set no message */

  test_products(ctx);
  test_strided_batch(ctx);
  test_empty_products(ctx);
  test_gemm_ex(ctx);
  test_errors(ctx);
  test_integer_rule_and_sizes(ctx);
  test_modular_errors(ctx);
  test_status_names();
  test_plans(ctx);
  CHECK_OK(gk_context_destroy(ctx));

  if (failures) {
    fprintf(stderr, "test_c_api: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_c_api: all checks passed (gemmkit %d.%d.%d)\n", major, minor, patch);
  return 0;
}

/* gemmkit's C API from C99: C = A B of a small row-major f64 problem on the CPU context, and
 * on the CUDA device (device memory, the default stream) when there is one, each checked
 * against a plain triple loop; then a deliberately bad call, to show the status and
 * gk_last_error(). Exit 0 when everything is as expected, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gemmkit.h>

#ifdef GEMMKIT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

enum { M = 5, N = 4, K = 3 };

static int check(const char* where, const double* c, const double* a, const double* b) {
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double sum = 0;
      for (int l = 0; l < K; ++l) sum += a[i * K + l] * b[l * N + j];
      worst = fmax(worst, fabs(c[i * N + j] - sum));
    }
  printf("%s: C = A B, row-major f64 %dx%dx%d on %s: max error %g\n", worst == 0 ? "ok" : "MISMATCH",
         M, N, K, where, worst);
  return worst == 0;
}

static int fail(const char* call, gk_status status) {
  fprintf(stderr, "%s failed: %s: %s\n", call, gk_status_name(status), gk_last_error());
  return 1;
}

int main(void) {
  double a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (double)(i % 7) - 3;
  for (int i = 0; i < K * N; ++i) b[i] = (double)(i % 5) - 2;
  int major = 0, minor = 0, patch = 0;
  gk_version(&major, &minor, &patch);
  printf("gemmkit %d.%d.%d through gemmkit.h\n", major, minor, patch);

  gk_context cpu = NULL;
  gk_status s = gk_context_create(GK_BACKEND_CPU, -1, &cpu);
  if (s != GK_SUCCESS) return fail("gk_context_create(GK_BACKEND_CPU)", s);
  s = gk_gemm(cpu, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, M, N, K, 1.0, GK_F64, a, K, b, N, 0.0, c, N, NULL);
  if (s != GK_SUCCESS) return fail("gk_gemm", s);
  int ok = check("the CPU", c, a, b);

  /* A bad call: a leading dimension smaller than the row it spans. It must fail, say why,
   * and queue nothing. */
  s = gk_gemm(cpu, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, M, N, K, 1.0, GK_F64, a, K - 1, b, N, 0.0, c, N, NULL);
  printf("a bad call (lda %d < k %d) returns %s: %s\n", K - 1, K, gk_status_name(s), gk_last_error());
  ok = ok && s == GK_ERROR_USAGE && strlen(gk_last_error()) > 0;
  gk_context_destroy(cpu);

#ifdef GEMMKIT_HAVE_CUDA
  gk_context gpu = NULL;
  s = gk_context_create(GK_BACKEND_CUDA, -1, &gpu);
  if (s != GK_SUCCESS) {
    printf("no CUDA context (%s): %s\n", gk_status_name(s), gk_last_error());
  } else {
    double *da = NULL, *db = NULL, *dc = NULL;
    if (cudaMalloc((void**)&da, sizeof a) != cudaSuccess || cudaMalloc((void**)&db, sizeof b) != cudaSuccess ||
        cudaMalloc((void**)&dc, sizeof c) != cudaSuccess) {
      fprintf(stderr, "cudaMalloc failed\n");
      return 1;
    }
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    memset(c, 0, sizeof c);
    s = gk_gemm(gpu, GK_ROW_MAJOR, GK_OP_N, GK_OP_N, M, N, K, 1.0, GK_F64, da, K, db, N, 0.0, dc, N, NULL);
    if (s != GK_SUCCESS) return fail("gk_gemm (CUDA)", s);
    s = gk_synchronize(gpu, NULL);
    if (s != GK_SUCCESS) return fail("gk_synchronize", s);
    if (cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost) != cudaSuccess) {
      fprintf(stderr, "cudaMemcpy failed\n");
      return 1;
    }
    ok = check("the CUDA device", c, a, b) && ok;
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    gk_context_destroy(gpu);
  }
#endif
  return ok ? 0 : 1;
}

// The one GEMM contract: C = alpha * op(A) * op(B) + beta * C, row-major, any M, N, K >= 0,
// any leading dimensions. op(A) is M x K, op(B) is K x N, C is M x N. A transposed operand
// is stored as its transpose (A^T stored K x M, row-major). beta == 0 means C is write-only:
// NaNs already in C do not propagate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gemmkit/dtype.hpp"
#include "gemmkit/matrix.hpp"

namespace gemmkit {

// A type-erased problem, as kernels and the registry see it. Pointers refer to memory of
// the backend that runs it (host memory for CPU kernels, device memory for CUDA kernels).
// alpha and beta are doubles; for integer dtypes they must be integers (checked by validate).
struct GemmProblem {
  DType dtype = DType::f32;
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  const void* a = nullptr;
  std::int64_t lda = 1;
  const void* b = nullptr;
  std::int64_t ldb = 1;
  void* c = nullptr;
  std::int64_t ldc = 1;
  // C's element type when it differs from the inputs': only f32 for f16/bf16 inputs (the
  // tensor cores sum in FP32 anyway). nullopt: C has the input dtype.
  std::optional<DType> out_dtype;

  DType c_dtype() const { return out_dtype.value_or(dtype); }

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Stored shape of A and B: rows x cols as laid out in memory.
  std::int64_t a_rows() const { return trans_a ? k : m; }
  std::int64_t a_cols() const { return trans_a ? m : k; }
  std::int64_t b_rows() const { return trans_b ? n : k; }
  std::int64_t b_cols() const { return trans_b ? k : n; }
  std::string shape_string() const;  // "MxNxK" with transposes, e.g. "300x100x200 (A^T)"
};

// Throws a usage error if the problem is inconsistent (negative sizes, leading dimension
// smaller than a stored width, null pointer for a non-empty operand, non-integer alpha/beta
// for an integer dtype, an output dtype other than f32 for f16/bf16 inputs).
void validate(const GemmProblem& problem);

// Build a problem from typed views. a is op(A)'s storage (M x K, or K x M if trans_a).
template <class T>
GemmProblem make_problem(MatrixView<const T> a, bool trans_a, MatrixView<const T> b,
                         bool trans_b, MatrixView<T> c, double alpha = 1.0, double beta = 0.0) {
  GemmProblem p;
  p.dtype = dtype_of<T>;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.m = trans_a ? a.cols() : a.rows();
  p.k = trans_a ? a.rows() : a.cols();
  p.n = trans_b ? b.rows() : b.cols();
  const std::int64_t kb = trans_b ? b.cols() : b.rows();
  if (kb != p.k || c.rows() != p.m || c.cols() != p.n)
    fail(ErrorCategory::usage,
         "shape mismatch: op(A) is " + std::to_string(p.m) + "x" + std::to_string(p.k) +
             ", op(B) is " + std::to_string(kb) + "x" + std::to_string(p.n) + ", C is " +
             std::to_string(c.rows()) + "x" + std::to_string(c.cols()));
  p.alpha = alpha;
  p.beta = beta;
  p.a = a.data();
  p.lda = a.ld();
  p.b = b.data();
  p.ldb = b.ld();
  p.c = c.data();
  p.ldc = c.ld();
  return p;
}

// The same from host matrices of any dtype: A and B of one dtype (f32 storage for tf32:
// set dtype afterwards), C of that dtype or, for f16/bf16 inputs, f32 (out_dtype). Usage
// errors for mismatched dtypes or shapes.
GemmProblem make_problem(const AnyMatrix& a, bool trans_a, const AnyMatrix& b, bool trans_b,
                         AnyMatrix& c, double alpha = 1.0, double beta = 0.0);

enum class Backend { cpu, cuda };
std::string_view backend_name(Backend backend);

// What the high-level entry point should use. An empty kernel name means "auto": the
// fastest kernel of the backend that accepts the problem.
struct GemmOptions {
  std::optional<Backend> backend;  // nullopt: CUDA when a device is present, else CPU
  std::string kernel;              // "" or "auto": chosen by the dispatcher
};

// Runs a host-memory problem on the chosen backend and kernel (copying to and from the
// device for CUDA kernels). Returns the name of the kernel that ran.
std::string gemm(const GemmProblem& host_problem, const GemmOptions& options = {});

}  // namespace gemmkit

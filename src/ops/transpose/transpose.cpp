// Transpose: the CPU reference, the registry, validation and the device API.
#include "gemmkit/transpose.hpp"

#include <cstring>
#include <string>

#include "arith/int128.hpp"
#include "gemmkit/error.hpp"
#include "ops/transpose/transpose_device.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {
namespace {

// B(j, i) = A(i, j), element by element as bytes of `size`; rows of A read in order.
void transpose_bytes(const TransposeProblem& p) {
  const std::size_t size = dtype_size(p.dtype);
  const auto* a = static_cast<const unsigned char*>(p.a);
  auto* b = static_cast<unsigned char*>(p.b);
  for (std::int64_t i = 0; i < p.rows; ++i)
    for (std::int64_t j = 0; j < p.cols; ++j)
      std::memcpy(b + std::size_t(j * p.ldb + i) * size, a + std::size_t(i * p.lda + j) * size, size);
}

Registry<TransposeProblem> make_registry() {
  Registry<TransposeProblem> r("transpose");
  r.add(cpu_reference_kernel<TransposeProblem>("two loops, A read row by row, every element copied as its bytes",
                                               transpose_detail::transpose_dtypes(), transpose_bytes));
  GEMMKIT_CUDA_PART(transpose_detail::register_cuda_kernels(r);)
  return r;
}

// The bytes [first, first + span) a matrix of `rows` rows of leading dimension `ld` touches,
// in 128 bits (the project's one u128): any int64 sizes, no overflow.
using Wide = u128;
Wide span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::size_t size) {
  return (rows == 0 || cols == 0) ? 0 : (Wide(rows - 1) * Wide(ld) + Wide(cols)) * size;
}

}  // namespace

const std::vector<DType>& transpose_detail::transpose_dtypes() {
  static const std::vector<DType> dtypes = {DType::f32, DType::f64, DType::tf32, DType::f16,
                                            DType::bf16, DType::i8,  DType::i32,  DType::i64};
  return dtypes;
}

void validate(const TransposeProblem& p) {
  const auto text = [](std::int64_t v) { return std::to_string(v); };
  if (p.rows < 0 || p.cols < 0)
    fail(ErrorCategory::usage, "transpose: negative size (" + text(p.rows) + " x " + text(p.cols) + ")");
  if (p.rows == 0 || p.cols == 0) return;  // nothing is read or written
  // Sizes past 2^40 leave the index arithmetic far from overflow (as explain's shapes do).
  if (p.rows >= (std::int64_t(1) << 40) || p.cols >= (std::int64_t(1) << 40))
    fail(ErrorCategory::usage, "transpose: " + text(p.rows) + " x " + text(p.cols) + " is larger than 2^40 a side");
  if (p.lda < p.cols)
    fail(ErrorCategory::usage, "transpose: lda " + text(p.lda) + " is less than A's " + text(p.cols) + " columns");
  if (p.ldb < p.rows)
    fail(ErrorCategory::usage, "transpose: ldb " + text(p.ldb) + " is less than B's " + text(p.rows) +
                                   " columns (A's rows)");
  if (!p.a || !p.b) fail(ErrorCategory::usage, "transpose: null data pointer");
  const std::size_t size = dtype_size(p.dtype);
  const Wide a_span = span_bytes(p.rows, p.cols, p.lda, size), b_span = span_bytes(p.cols, p.rows, p.ldb, size);
  // Past 2^62 bytes no memory holds the operand, and the kernels' 64-bit offsets would wrap.
  if (a_span > (Wide(1) << 62) || b_span > (Wide(1) << 62))
    fail(ErrorCategory::usage, "transpose: the leading dimensions (lda " + text(p.lda) + ", ldb " + text(p.ldb) +
                                   ") span more than 2^62 bytes");
  const Wide a = reinterpret_cast<std::uintptr_t>(p.a), b = reinterpret_cast<std::uintptr_t>(p.b);
  if (a < b + b_span && b < a + a_span)
    fail(ErrorCategory::usage, "transpose: A and B overlap (the transpose is out of place)");
}

const Registry<TransposeProblem>& transpose_registry() {
  static const Registry<TransposeProblem> registry = make_registry();
  return registry;
}

std::size_t transpose_workspace_bytes(const Context& ctx, const TransposeProblem& problem, std::string_view kernel) {
  validate(problem);
  return chosen_workspace(transpose_registry(), ctx, problem, kernel);
}

const TransposeKernel& transpose(Context& ctx, const TransposeProblem& problem, Stream stream,
                                 std::string_view kernel, Workspace workspace) {
  validate(problem);
  return choose_and_run(transpose_registry(), ctx, problem, stream, kernel, workspace);
}

}  // namespace gemmkit

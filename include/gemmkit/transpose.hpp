// Matrix transpose, B = A^T, out of place: the teaching texts' lesson in coalescing and
// shared-memory banks on an operation with no arithmetic at all. A CPU reference and a ladder
// of CUDA kernels (one thread per element; a 32x32 tile staged in shared memory; the same tile
// padded against bank conflicts) in transpose_registry(). Elements are moved as bits, so every
// dtype of 1, 2, 4 or 8 bytes transposes, and every kernel gives the same B bit for bit. The
// device API takes device pointers, a Context and a stream; a CPU Context runs the CPU
// reference on host pointers. No CUDA header here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/kernel.hpp"

namespace gemmkit {

// A is rows x cols, row-major with leading dimension lda >= cols; B = A^T is cols x rows,
// row-major with ldb >= rows. A and B must not overlap. Both in the memory of the backend that
// runs it (device memory for the CUDA kernels).
struct TransposeProblem {
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  void* b = nullptr;
  std::int64_t ldb = 0;
};
using TransposeKernel = Kernel<TransposeProblem>;
// cpu_reference, then the CUDA ladder (transpose_naive, transpose_shared_tile,
// transpose_padded_tile) in a build with the CUDA backend.
const Registry<TransposeProblem>& transpose_registry();

// Usage errors for negative sizes, leading dimensions below the rows they hold, null or
// overlapping operands.
void validate(const TransposeProblem& problem);

// The kernels need no workspace today; the call is here so that callers plan for it as for
// every operation. `kernel` "auto": the highest-priority kernel of ctx's backend.
std::size_t transpose_workspace_bytes(const Context& ctx, const TransposeProblem& problem,
                                      std::string_view kernel = "auto");
// Queues B = A^T on `stream` and returns the kernel that ran. Refusals (unknown kernel, other
// backend, dtype) come before anything is queued.
const TransposeKernel& transpose(Context& ctx, const TransposeProblem& problem, Stream stream,
                                 std::string_view kernel = "auto", Workspace workspace = {});

}  // namespace gemmkit

// reduce, spmv and conv1d (gemmkit/reduce.hpp, sparse.hpp, conv1d.hpp), bound thinly: the
// device API (pointers in the context's memory, queued on a stream: host pointers and the
// CPU context, or device pointers and a CUDA context), and the host API of the CUDA backend
// (host pointers copied to the device and back) for numpy arrays with backend='cuda'. The
// Python layer (gemmkit/_primitives.py) turns arrays into pointers and allocates results.
#include <cstring>

#include "bindings.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit::python {
namespace {

template <class T>
T* pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

ReduceOp reduce_op_from_name(std::string_view name) {
  if (auto op = parse_reduce_op(name)) return *op;
  fail(ErrorCategory::usage,
       "reduce: unknown op '" + std::string(name) + "' (expected sum, min, max or norm2)");
}

// Calls f(T{}) with T the host type of an f32 or f64 dtype; a usage error for any other.
template <class F>
decltype(auto) with_float_type(DType dtype, std::string_view operation, F&& f) {
  if (dtype == DType::f32) return f(float{});
  if (dtype == DType::f64) return f(double{});
  fail(ErrorCategory::usage, std::string(operation) + " runs f32 and f64, not " +
                                 std::string(dtype_name(dtype)));
}

void require_cuda_context(const Context& ctx, std::string_view operation) {
  if (ctx.backend() != Backend::cuda)
    fail(ErrorCategory::usage, std::string(operation) +
                                   ": the host API with copies runs on a CUDA context; host "
                                   "arrays on the CPU context use the device API");
}

}  // namespace

void bind_primitives(nb::module_& m) {
  // ---- reduce ----
  m.def(
      "reduce",
      [](Context& ctx, std::string_view dtype, std::string_view op, std::uintptr_t x,
         std::size_t n, std::uintptr_t result, std::uintptr_t stream, std::string_view kernel) {
        const ReduceProblem problem{dtype_from_name(dtype), reduce_op_from_name(op),
                                    pointer<const void>(x), n, pointer<void>(result)};
        nb::gil_scoped_release release;
        return reduce(ctx, problem, stream_from_int(stream), kernel).name;
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("op"), nb::arg("x"), nb::arg("n"),
      nb::arg("result"), nb::arg("stream"), nb::arg("kernel") = "auto",
      "The device API: op ('sum', 'min', 'max', 'norm2') of n values of dtype at x into "
      "*result, both in the context's memory, queued on `stream`. Returns the kernel's name.");
  m.def(
      "reduce_host",
      [](Context& ctx, std::string_view dtype, std::string_view op, std::uintptr_t x,
         std::size_t n, std::string_view kernel) -> double {
        require_cuda_context(ctx, "reduce");
        const ReduceOp parsed = reduce_op_from_name(op);
        const ReduceChoice choice = choose_reduce(Backend::cuda, kernel);
        return with_float_type(dtype_from_name(dtype), "reduce", [&](auto t) -> double {
          using T = decltype(t);
          nb::gil_scoped_release release;
          return reduce<T>(pointer<const T>(x), n, parsed, choice, &ctx);
        });
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("op"), nb::arg("x"), nb::arg("n"),
      nb::arg("kernel") = "auto",
      "The host API on a CUDA context: x in host memory, copied to the device; the result.");

  // ---- spmv ----
  m.def(
      "spmv",
      [](Context& ctx, std::string_view dtype, std::int64_t rows, std::int64_t cols,
         std::int64_t nnz, std::uintptr_t row_offsets, bool offsets_64bit,
         std::uintptr_t col_indices, std::uintptr_t values, std::uintptr_t x, std::uintptr_t y,
         std::uintptr_t stream, std::string_view kernel) {
        SpmvProblem problem;
        problem.dtype = dtype_from_name(dtype);
        problem.rows = rows;
        problem.cols = cols;
        problem.nnz = nnz;
        problem.row_offsets = pointer<const void>(row_offsets);
        problem.offsets_64bit = offsets_64bit;
        problem.col_indices = pointer<const std::int32_t>(col_indices);
        problem.values = pointer<const void>(values);
        problem.x = pointer<const void>(x);
        problem.y = pointer<void>(y);
        nb::gil_scoped_release release;
        return spmv(ctx, problem, stream_from_int(stream), kernel).name;
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("nnz"),
      nb::arg("row_offsets"), nb::arg("offsets_64bit"), nb::arg("col_indices"),
      nb::arg("values"), nb::arg("x"), nb::arg("y"), nb::arg("stream"),
      nb::arg("kernel") = "auto",
      "The device API: y = A x with A in CSR form (int32 or int64 row offsets, int32 column "
      "indices sorted within each row, values of dtype), all in the context's memory, queued "
      "on `stream`. Returns the kernel's name.");
  m.def(
      "spmv_host",
      [](Context& ctx, std::string_view dtype, std::int64_t rows, std::int64_t cols,
         std::int64_t nnz, std::uintptr_t row_offsets, std::uintptr_t col_indices,
         std::uintptr_t values, std::uintptr_t x, std::uintptr_t y, std::string_view kernel) {
        require_cuda_context(ctx, "spmv");
        with_float_type(dtype_from_name(dtype), "spmv", [&](auto t) {
          using T = decltype(t);
          nb::gil_scoped_release release;
          CsrMatrix<T> a;
          a.rows = rows;
          a.cols = cols;
          const auto* offsets = pointer<const std::int64_t>(row_offsets);
          a.row_offsets.assign(offsets, offsets + rows + 1);
          const auto* columns = pointer<const std::int32_t>(col_indices);
          a.col_indices.assign(columns, columns + nnz);
          const auto* entries = pointer<const T>(values);
          a.values.assign(entries, entries + nnz);
          validate_csr(a, "the sparse matrix");
          const std::vector<T> xs(pointer<const T>(x), pointer<const T>(x) + cols);
          SpmvRunOptions options;
          options.kernel = std::string(kernel);
          options.context = &ctx;
          const std::vector<T> ys = spmv_cuda(a, xs, options);
          std::memcpy(pointer<T>(y), ys.data(), ys.size() * sizeof(T));
        });
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("rows"), nb::arg("cols"), nb::arg("nnz"),
      nb::arg("row_offsets"), nb::arg("col_indices"), nb::arg("values"), nb::arg("x"),
      nb::arg("y"), nb::arg("kernel") = "auto",
      "The host API on a CUDA context: A (int64 row offsets), x and y in host memory, copied "
      "to the device and back.");

  // ---- conv1d ----
  m.def(
      "conv1d",
      [](Context& ctx, std::string_view dtype, std::uintptr_t x, std::int64_t n,
         std::uintptr_t mask, std::int64_t width, std::uintptr_t y, std::uintptr_t stream,
         std::string_view kernel) {
        const Conv1dProblem problem{dtype_from_name(dtype), pointer<const void>(x), n,
                                    pointer<const void>(mask), width, pointer<void>(y)};
        nb::gil_scoped_release release;
        return conv1d(ctx, problem, stream_from_int(stream), kernel).name;
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("x"), nb::arg("n"), nb::arg("mask"),
      nb::arg("width"), nb::arg("y"), nb::arg("stream"), nb::arg("kernel") = "auto",
      "The device API: y (n values) = x convolved with the mask's `width` taps ('same' size, "
      "zeros outside x); x and y in the context's memory, the mask in host memory. Queued on "
      "`stream`; returns the kernel's name.");
  m.def(
      "conv1d_host",
      [](Context& ctx, std::string_view dtype, std::uintptr_t x, std::int64_t n,
         std::uintptr_t mask, std::int64_t width, std::uintptr_t y, std::string_view kernel) {
        require_cuda_context(ctx, "conv1d");
        return with_float_type(dtype_from_name(dtype), "conv1d", [&](auto t) {
          using T = decltype(t);
          Conv1dOptions options;
          options.backend = Backend::cuda;
          options.kernel = std::string(kernel);
          options.context = &ctx;
          nb::gil_scoped_release release;
          return conv1d<T>(pointer<const T>(x), n, pointer<const T>(mask), width, pointer<T>(y),
                           options)
              .kernel;
        });
      },
      nb::arg("context"), nb::arg("dtype"), nb::arg("x"), nb::arg("n"), nb::arg("mask"),
      nb::arg("width"), nb::arg("y"), nb::arg("kernel") = "auto",
      "The host API on a CUDA context: x, mask and y in host memory, copied to the device and "
      "back. Returns the kernel's name.");
}

}  // namespace gemmkit::python

// Reduction in a build made without nvcc: the CUDA entry points say so.
#include "gemmkit/error.hpp"
#include "gemmkit/reduce.hpp"

namespace gemmkit {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  fail(ErrorCategory::usage, std::string(what) + " needs the CUDA backend, and this gemmkit was "
                                                 "built without CUDA");
}
}  // namespace

bool reduce_cuda_available() { return false; }

template <class T>
T reduce_cuda_device(const T*, std::size_t, ReduceOp, std::string_view) {
  no_cuda("reduce on the GPU");
}
template <class T>
T reduce_cuda(const T*, std::size_t, ReduceOp, std::string_view) {
  no_cuda("reduce on the GPU");
}
template float reduce_cuda_device<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda_device<double>(const double*, std::size_t, ReduceOp, std::string_view);
template float reduce_cuda<float>(const float*, std::size_t, ReduceOp, std::string_view);
template double reduce_cuda<double>(const double*, std::size_t, ReduceOp, std::string_view);

ReduceBenchReport reduce_bench(std::size_t, DType, ReduceOp, int, int, std::uint64_t) {
  no_cuda("reduce --bench");
}

}  // namespace gemmkit

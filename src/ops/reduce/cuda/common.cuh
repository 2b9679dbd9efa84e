// Device-side pieces every reduction rung shares: the operations (what a value contributes,
// how two partial results combine, the identity) and the block-level combine through warp
// shuffles used by the later rungs. Only __host__/__device__ code here.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace gemmkit::cuda::reduce_kernels {

// An operation: Value is the input type, Acc what partial results are kept in.
//   load(x)        the contribution of one input value (x*x for norm2)
//   combine(a, b)  associative; the kernels only change the order of combining
//   identity()     the result of an empty input
// norm2's sqrt is applied on the host, once, to the final accumulator.
template <class T>
struct SumOp {
  using Value = T;
  using Acc = T;
  __host__ __device__ static Acc identity() { return Acc(0); }
  __host__ __device__ static Acc load(Value x) { return x; }
  __host__ __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// NaN wins: if a is NaN it is returned, else if b is NaN (a < b is false) b is returned.
template <class T>
struct MinOp {
  using Value = T;
  using Acc = T;
  __host__ __device__ static Acc identity() { return INFINITY; }
  __host__ __device__ static Acc load(Value x) { return x; }
  __host__ __device__ static Acc combine(Acc a, Acc b) { return (a < b || a != a) ? a : b; }
};

template <class T>
struct MaxOp {
  using Value = T;
  using Acc = T;
  __host__ __device__ static Acc identity() { return -INFINITY; }
  __host__ __device__ static Acc load(Value x) { return x; }
  __host__ __device__ static Acc combine(Acc a, Acc b) { return (a > b || a != a) ? a : b; }
};

// Squares summed in double for both f32 and f64: no f32 overflow for any finite input,
// and the reads stay the bottleneck (one double add per value is far below the FP64 rate).
template <class T>
struct SumSquaresOp {
  using Value = T;
  using Acc = double;
  __host__ __device__ static Acc identity() { return 0.0; }
  __host__ __device__ static Acc load(Value x) { return double(x) * double(x); }
  __host__ __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// Later passes read partial results (Acc), which are combined as they are; only the first
// pass reads input values through Op::load. kRaw selects which.
template <class Op, bool kRaw>
struct Reader {
  using In = std::conditional_t<kRaw, typename Op::Value, typename Op::Acc>;
  __device__ __forceinline__ static typename Op::Acc read(In v) {
    if constexpr (kRaw) return Op::load(v);
    else return v;
  }
};

// Warp-wide combine by shuffles: lane 0 ends with the combination of all 32 lanes, always
// in the same tree order (offsets 16, 8, 4, 2, 1), so the result is deterministic.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_combine(typename Op::Acc v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    v = Op::combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// Block-wide combine for blockDim.x a multiple of 32 up to 1024: warps combine by shuffles,
// warp leaders leave one value each in shared memory, warp 0 combines those. The result is
// valid in thread 0.
template <class Op>
__device__ __forceinline__ typename Op::Acc block_combine(typename Op::Acc v) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_results[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  v = warp_combine<Op>(v);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_results[lane] : Op::identity();
    v = warp_combine<Op>(v);
  }
  return v;
}

}  // namespace gemmkit::cuda::reduce_kernels

// The Chinese remainder rebuild on the device (gemmkit/exact.hpp; the arithmetic is
// src/arith/crt_math.hpp): one thread per entry. A warp reads 32 consecutive residues of a
// plane (one 32-byte sector) per modulus and writes 32 consecutive entries' words, so the
// kernel streams at memory speed while its q (W + 3) multiply-adds per entry keep the
// integer units busy: about 50 x 15 for a 50-modulus table.
#include <cuda_runtime.h>

#include <algorithm>

#include "ops/exact/crt_device.hpp"
#include "runtime/cuda/context.hpp"
#include "launch/launch.hpp"

namespace gemmkit::crt_detail {
namespace {

struct CrtArgs {
  std::int64_t rows, cols;
  const std::int8_t* residues;
  std::int64_t ld, plane_stride;
  const std::int64_t* row_index;
  const std::int64_t* col_index;
  std::uint64_t* out;
  std::int64_t ld_out;
  int limbs;
};

constexpr int kThreads = 256;

// Block (x, y): 256 columns of rows y, y + gridDim.y, ... The constants stay in the
// parameter space (__grid_constant__: read in place, every thread of a warp reading the same
// word at once, not copied to local memory).
template <int W>
__global__ void __launch_bounds__(kThreads) crt_rebuild_kernel(const __grid_constant__ CrtConstants k,
                                                               const CrtArgs a) {
  const std::int64_t c = std::int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= a.cols) return;
  const std::int64_t col = a.col_index ? a.col_index[c] : c;
  for (std::int64_t r = blockIdx.y; r < a.rows; r += gridDim.y) {
    const std::int64_t row = a.row_index ? a.row_index[r] : r;
    rebuild_entry<W>(k, a.residues + row * a.ld + col, a.plane_stride,
                     a.out + (r * a.ld_out + c) * a.limbs, a.limbs);
  }
}

}  // namespace

void cuda_rebuild(Context& ctx, const CrtConstants& k, int words, const CrtProblem& p, Stream stream) {
  const cuda::DeviceScope scope(ctx.device());
  const CrtArgs args{p.rows, p.cols, p.residues, p.ld, p.plane_stride, p.row_index, p.col_index,
                     p.out, p.ld_out, p.limbs};
  const dim3 grid(unsigned((p.cols + kThreads - 1) / kThreads), unsigned(std::min<std::int64_t>(p.rows, 65535)));
  with_work_words(words, [&](auto w) { crt_rebuild_kernel<w()><<<grid, kThreads, 0, stream>>>(k, args); });
  cuda::check_launch("crt_rebuild_kernel");
}

}  // namespace gemmkit::crt_detail

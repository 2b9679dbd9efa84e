// The Chinese remainder rebuild's host side: its entry points and the CPU path (the same
// per-entry arithmetic as the kernel, src/arith/crt_math.hpp; its constants and their
// validation, src/arith/crt_math.cpp).
#include <bit>
#include <string>

#include "arith/crt_math.hpp"
#include "ops/exact/crt_device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {

int crt_limbs(const std::vector<std::uint32_t>& moduli) {
  const crt_detail::CrtConstants k = crt_detail::make_constants(moduli);
  // |x| <= (P - 1) / 2 < 2^(bits(P) - 1): bits(P) bits of two's complement.
  int bits = 0;
  for (int j = crt_detail::kMaxWords; j-- > 0 && bits == 0;)
    if (k.modulus[j] != 0) bits = 32 * j + 32 - std::countl_zero(k.modulus[j]);
  return (bits + 63) / 64;
}

void crt_rebuild(Context& ctx, const CrtProblem& p, Stream stream) {
  const crt_detail::CrtConstants k = crt_detail::make_constants(p.moduli);
  auto bad = [](const std::string& what) { fail(ErrorCategory::usage, "crt_rebuild: " + what); };
  if (p.rows < 0 || p.cols < 0) bad("negative size " + std::to_string(p.rows) + "x" + std::to_string(p.cols));
  if (p.limbs < 1 || p.limbs > 64) bad("limbs is " + std::to_string(p.limbs) + "; 1 to 64 are taken");
  if (p.ld_out < p.cols) bad("ld_out " + std::to_string(p.ld_out) + " is below cols " + std::to_string(p.cols));
  if (!p.col_index && p.ld < p.cols) bad("ld " + std::to_string(p.ld) + " is below cols " + std::to_string(p.cols));
  if (p.rows == 0 || p.cols == 0) return;
  if (!p.residues || !p.out) bad("null residues or output");
  const int words = crt_detail::work_words(k);
  if (ctx.backend() == Backend::cuda) {
    GEMMKIT_CUDA_PART(crt_detail::cuda_rebuild(ctx, k, words, p, stream); return;)
    detail::fail_without_cuda();
  }
  crt_detail::with_work_words(words, [&](auto w) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < p.rows; ++r) {
      const std::int64_t row = p.row_index ? p.row_index[r] : r;
      for (std::int64_t c = 0; c < p.cols; ++c) {
        const std::int64_t col = p.col_index ? p.col_index[c] : c;
        crt_detail::rebuild_entry<w()>(k, p.residues + row * p.ld + col, p.plane_stride,
                                       p.out + (r * p.ld_out + c) * p.limbs, p.limbs);
      }
    }
  });
}

}  // namespace gemmkit

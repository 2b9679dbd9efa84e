// Distributed exact walks on GPUs: rank 0 rebuilds the counts from every rank's residues on
// its device (crt_rebuild), as the single-process GPU engine does.
#include "cuda/device_buffer.hpp"
#include "dist/nccl_common.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::dist {

void rebuild_counts(Context& ctx, const std::vector<std::uint32_t>& primes, const std::int8_t* planes,
                    std::int64_t n, int limbs, std::uint64_t* out) {
  const std::size_t entries = std::size_t(n * n);
  if (entries == 0) return;
  GEMMKIT_CUDA_CHECK(cudaSetDevice(ctx.device()));
  cuda::DeviceBuffer<std::int8_t> residues(entries * primes.size());
  cuda::DeviceBuffer<std::uint64_t> counts(entries * std::size_t(limbs));
  residues.copy_from_host(planes, entries * primes.size());
  CrtProblem p;
  p.rows = n, p.cols = n;
  p.moduli = primes;
  p.residues = residues.data();
  p.ld = n, p.plane_stride = n * n;
  p.out = counts.data();
  p.ld_out = n;
  p.limbs = limbs;
  crt_rebuild(ctx, p, nullptr);
  counts.copy_to_host(out, entries * std::size_t(limbs));  // waits for the rebuild (legacy stream)
}

}  // namespace gemmkit::dist

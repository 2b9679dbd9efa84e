// The GPU walks' residues on the device: every count that the single-process engine rebuilt
// modulo the product of a rank's primes, reduced modulo each of those primes (WordsModulo),
// as centred int8 planes, one per prime.
#include <cuda_runtime.h>

#include <vector>

#include "cuda/device_buffer.hpp"
#include "cuda/launch.hpp"
#include "dist/dist_common.hpp"
#include "gemmkit/exact.hpp"

namespace gemmkit::dist {
namespace {

struct Moduli {
  WordsModulo m[kCrtMaxModuli];
};

__global__ void residues_kernel(const std::uint64_t* words, std::int64_t entries, int limbs, Moduli moduli, int count,
                                std::int8_t* planes) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < entries;
       e += std::int64_t(gridDim.x) * blockDim.x)
    for (int q = 0; q < count; ++q)
      planes[std::int64_t(q) * entries + e] = std::int8_t(moduli.m[q].centred(words + e * limbs, limbs));
}

}  // namespace

std::vector<std::int8_t> residues_of_counts(Context& ctx, const std::vector<std::uint32_t>& primes,
                                            const std::uint64_t* words, std::int64_t entries, int limbs) {
  std::vector<std::int8_t> planes(primes.size() * std::size_t(entries));
  if (entries == 0 || primes.empty()) return planes;
  if (primes.size() > std::size_t(kCrtMaxModuli))
    fail(ErrorCategory::internal, "residues_of_counts: more than " + std::to_string(kCrtMaxModuli) + " primes");
  Moduli moduli{};
  for (std::size_t q = 0; q < primes.size(); ++q) moduli.m[q] = WordsModulo(primes[q]);
  GEMMKIT_CUDA_CHECK(cudaSetDevice(ctx.device()));
  cuda::DeviceBuffer<std::uint64_t> d_words(std::size_t(entries) * std::size_t(limbs));
  cuda::DeviceBuffer<std::int8_t> d_planes(planes.size());
  d_words.copy_from_host(words, d_words.size());
  residues_kernel<<<1024, 256>>>(d_words.data(), entries, limbs, moduli, int(primes.size()), d_planes.data());
  cuda::check_launch("residues_kernel");
  d_planes.copy_to_host(planes.data(), planes.size());  // waits for the kernel (legacy stream)
  return planes;
}

}  // namespace gemmkit::dist

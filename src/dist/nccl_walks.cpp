// Distributed exact walks on GPUs, after the graph's broadcast: each rank's residue planes of
// A^length on its device (the engine's power steps), gathered into rank 0's device over NCCL,
// and rebuilt there (crt_rebuild) into words that go to the host once.
#include "cuda/device_buffer.hpp"
#include "cuda/event.hpp"
#include "dist/nccl_common.hpp"
#include "graph/modular_int8.hpp"

namespace gemmkit::dist {

void gpu_walk_counts(MPI_Comm comm, Context& ctx, const Graph& g, int length,
                     const std::vector<std::uint32_t>& primes, const std::vector<int>& first, int limbs,
                     std::uint64_t* out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t plane = std::size_t(g.n * g.n);
  const std::vector<std::uint32_t> own(primes.begin() + first[rank], primes.begin() + first[rank + 1]);
  // Rank 0 holds every rank's planes, in the order of `primes`, its own first.
  cuda::DeviceBuffer<std::int8_t> planes;
  collective(comm, [&] {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(ctx.device()));
    planes = cuda::DeviceBuffer<std::int8_t>(plane * (rank == 0 ? primes.size() : own.size()));
    if (!own.empty()) walks_detail::gpu_int8_power_planes(ctx, g, own, length, planes.data());
  });
  if (size > 1 && plane > 0) {
    const WorldComm world(comm);
    collective(comm, [&] {
      const cuda::OwnStream stream;
      GEMMKIT_NCCL_CHECK(ncclGroupStart());
      if (rank == 0) {
        for (int r = 1; r < size; ++r)
          if (first[r + 1] > first[r])
            GEMMKIT_NCCL_CHECK(ncclRecv(planes.data() + std::size_t(first[r]) * plane,
                                        std::size_t(first[r + 1] - first[r]) * plane, ncclInt8, r, world.get(),
                                        stream.get()));
      } else if (!own.empty()) {
        GEMMKIT_NCCL_CHECK(ncclSend(planes.data(), own.size() * plane, ncclInt8, 0, world.get(), stream.get()));
      }
      GEMMKIT_NCCL_CHECK(ncclGroupEnd());
      GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    });
  }
  collective(comm, [&] {
    if (rank == 0) walks_detail::gpu_counts_from_planes(ctx, primes, planes.data(), g.n, limbs, out);
  });
}

}  // namespace gemmkit::dist

// Distributed exact walks on GPUs, after the graph's broadcast: each rank's residue planes of
// A^length on its device (the engine's power steps); then, a block of rows at a time, every
// rank's rows of its planes go to rank 0's device over NCCL and are rebuilt there (crt_rebuild)
// into words that go to the host. Rank 0 holds its own planes and one block of rows of every
// prime's, so the residues of a table stay spread over the ranks' devices.
#include <algorithm>

#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/event.hpp"
#include "distributed/nccl_common.hpp"
#include "ops/walks/modular_int8.hpp"

namespace gemmkit::dist {
namespace {

// Rows of counts per pass: rank 0's block of every prime's residues and the block's words
// (`limbs` 8-byte words a count) within the bytes of its own planes or 1 GiB, whichever is
// more; the passes even.
std::int64_t rows_per_pass(std::int64_t n, std::size_t primes, int limbs, std::size_t own_bytes) {
  const double per_row = double(n) * double(primes + 8 * std::size_t(limbs));
  const double budget = std::max(double(own_bytes), double(std::int64_t{1} << 30));
  const std::int64_t block = std::clamp<std::int64_t>(std::int64_t(budget / per_row), 1, n);
  const std::int64_t passes = (n + block - 1) / block;
  return (n + passes - 1) / passes;
}

}  // namespace

void gpu_walk_counts(MPI_Comm comm, Context& ctx, const Graph& g, int length,
                     const std::vector<std::uint32_t>& primes, const std::vector<int>& first, int limbs,
                     std::uint64_t* out, std::int64_t gather_rows) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t n = g.n;
  const std::size_t plane = std::size_t(n * n);
  const std::vector<std::uint32_t> own(primes.begin() + first[rank], primes.begin() + first[rank + 1]);
  cuda::DeviceBuffer<std::int8_t> planes;  // this rank's, in the order of `own`
  collective(comm, [&] {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(ctx.device()));
    planes = cuda::DeviceBuffer<std::int8_t>(plane * own.size());
    if (!own.empty()) walks_detail::gpu_int8_power_planes(ctx, g, own, length, planes.data());
  });
  if (plane == 0) return;
  if (size == 1 && gather_rows == 0) {  // every prime's plane is here: rebuilt where it lies
    collective(comm, [&] {
      walks_detail::gpu_counts_from_planes(ctx, primes, {planes.data(), n, n * n, n, n}, limbs, out);
    });
    return;
  }
  const WorldComm world(comm);
  const std::int64_t block = gather_rows > 0 ? std::min(gather_rows, n)
                                            : rows_per_pass(n, primes.size(), limbs, plane * std::size_t(first[1] - first[0]));
  cuda::DeviceBuffer<std::int8_t> rows_of_all;  // rank 0: a block of rows of every prime's plane
  std::optional<cuda::OwnStream> stream;
  collective(comm, [&] {
    if (rank == 0) rows_of_all = cuda::DeviceBuffer<std::int8_t>(primes.size() * std::size_t(block * n));
    stream.emplace();
  });
  for (std::int64_t r0 = 0; r0 < n; r0 += block) {
    // Rows r0 .. r0 + rows - 1 of every plane: prime q's at rows_of_all + q bytes.
    const std::int64_t rows = std::min(block, n - r0);
    const std::size_t bytes = std::size_t(rows * n);
    collective(comm, [&] {
      const cudaStream_t s = stream->get();
      if (rank == 0 && !own.empty())
        GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(rows_of_all.data(), bytes, planes.data() + r0 * n, plane, bytes,
                                             own.size(), cudaMemcpyDeviceToDevice, s));
      GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGroupStart)());
      if (rank == 0) {
        for (int r = 1; r < size; ++r)
          for (int q = first[r]; q < first[r + 1]; ++q)
            GEMMKIT_NCCL_CHECK(
                GEMMKIT_NCCL(ncclRecv)(rows_of_all.data() + std::size_t(q) * bytes, bytes, ncclInt8, r, world.get(), s));
      } else {
        for (std::size_t j = 0; j < own.size(); ++j)
          GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclSend)(planes.data() + j * plane + r0 * n, bytes, ncclInt8, 0, world.get(), s));
      }
      GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGroupEnd)());
      GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(s));
    });
    collective(comm, [&] {
      if (rank == 0)
        walks_detail::gpu_counts_from_planes(ctx, primes, {rows_of_all.data(), n, std::int64_t(bytes), rows, n},
                                             limbs, out + std::size_t(r0 * n) * std::size_t(limbs));
    });
  }
}

}  // namespace gemmkit::dist

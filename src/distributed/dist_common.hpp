// What the distributed sources share (src/distributed only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemmkit/distributed.hpp"

namespace gemmkit::dist {

// The MPI datatype that moves elements of a host matrix's dtype (f16 and bf16 as 16-bit
// words); a usage error for the others.
MPI_Datatype mpi_type(DType dtype);
// A usage error unless the CPU backend takes `dtype` (f64, f32, i32, i64).
void check_host_dtype(DType dtype);
// An element count as MPI's int, or a usage error naming `what` when it does not fit.
int mpi_count(std::int64_t elements, const std::string& what);
// A zero rows x cols host matrix of `dtype` (any dtype an AnyMatrix holds).
AnyMatrix zero_matrix(DType dtype, std::int64_t rows, std::int64_t cols);
// A usage error for negative sizes or empty blocks.
void check_blocks(std::int64_t rows, std::int64_t cols, std::int64_t mb, std::int64_t nb);
// Usage errors for SUMMA operands that do not fit together (grids, backends, dtypes, shapes, blocks).
void check_summa_operands(const DistMatrix& a, const DistMatrix& b, const DistMatrix& c);
// This rank's rank among the ranks of `comm` on its node.
int node_rank(MPI_Comm comm);

// ---- the CUDA backend: src/distributed/nccl_*.cpp, or nccl_absent.cpp without NCCL -----------------
// This rank's device blocks from (upload) and to (download) a host matrix of local_rows() x
// local_cols(). Not collective: callers wrap them in collective().
void upload_local(const DistMatrix& m, const AnyMatrix& host);
AnyMatrix download_local(const DistMatrix& m);
// The GPU walks (count_walks with the CUDA backend) after the broadcast of the graph: rank r
// runs the engine's power steps (walks_detail::gpu_int8_power_planes) on ctx's device modulo
// its primes, primes[first[r], first[r + 1]), and rank 0 gathers every rank's residue planes
// and rebuilds the n x n counts from them into out (`limbs` words each, host memory; rank 0
// only). With NCCL the planes stay on the devices, go to rank 0's over NCCL gather_rows rows
// at a time (DistWalkOptions::gather_rows) and are rebuilt there (crt_rebuild), the words
// copied to the host; without, they are staged in host memory, sent over MPI and rebuilt on
// the CPU. Collective.
void gpu_walk_counts(MPI_Comm comm, Context& ctx, const Graph& g, int length,
                     const std::vector<std::uint32_t>& primes, const std::vector<int>& first, int limbs,
                     std::uint64_t* out, std::int64_t gather_rows);
// SUMMA on device blocks (summa() checks the backend and calls it).
std::string summa_cuda(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c,
                       const SummaOptions& options);

}  // namespace gemmkit::dist

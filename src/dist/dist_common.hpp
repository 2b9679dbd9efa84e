// What the distributed sources share (src/dist only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dist/words_modulo.hpp"
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

// ---- the CUDA backend: src/dist/nccl_*.cpp, or nccl_absent.cpp without NCCL -----------------
// This rank's device blocks from (upload) and to (download) a host matrix of local_rows() x
// local_cols(). Not collective: callers wrap them in collective().
void upload_local(const DistMatrix& m, const AnyMatrix& host);
AnyMatrix download_local(const DistMatrix& m);
// The counts of an n x n table (`limbs` words each, row-major, host memory) from their centred
// residues modulo the int8 `primes` (plane q, n x n row-major, at planes + q n^2; host memory),
// by crt_rebuild on ctx's device (on the CPU without NCCL). Not collective.
void rebuild_counts(Context& ctx, const std::vector<std::uint32_t>& primes, const std::int8_t* planes,
                    std::int64_t n, int limbs, std::uint64_t* out);
// Centred residues (planes: prime q's n x n at q n^2) of counts held as `limbs` words each
// (host memory, `entries` of them), modulo each of `primes`: on ctx's device, or with NCCL
// absent, on the CPU. Not collective.
std::vector<std::int8_t> residues_of_counts(Context& ctx, const std::vector<std::uint32_t>& primes,
                                            const std::uint64_t* words, std::int64_t entries, int limbs);
// SUMMA on device blocks (summa() checks the backend and calls it).
std::string summa_cuda(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c,
                       const SummaOptions& options);

}  // namespace gemmkit::dist

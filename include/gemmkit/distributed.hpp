// Distributed matrices and GEMM over MPI processes: a P x Q process grid, a 2-D block-cyclic
// distribution, scatter from and gather to rank 0, and SUMMA (C = alpha A B + beta C) with each
// rank's share computed by gemmkit's own GEMM, exact walk counts with their primes spread
// over the ranks, and the Ozaki FP64 emulation with its moduli spread over GPUs. Two
// backends: the CPU (blocks in host memory, panels over MPI) and, in a build with NCCL
// (GEMMKIT_HAVE_NCCL), CUDA (blocks in device memory, panels over NCCL, the local products
// through the device API). Needs a build with MPI (target
// gemmkit::distributed, which defines GEMMKIT_HAVE_MPI); docs/distributed.md.
//
// Every function here is collective over the grid's communicator: every rank calls it, in the
// same order. An error on any rank (bad input on rank 0, a shape mismatch, out of memory) is
// agreed by all of them (collective()): every rank throws the same RankError, whose message
// names the failing rank, so that no rank is left waiting for another.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/bench_report.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/matrix.hpp"
#include "gemmkit/ozaki.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit::dist {

// MPI for the length of a program's distributed work: initialises MPI unless it already is,
// and finalises it on destruction if it initialised it.
class Environment {
 public:
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owned_ = false;
};

// An error agreed by every rank: the first failing rank's error ("rank R: ...") with its category.
class RankError : public Error {
 public:
  RankError(ErrorCategory category, const std::string& message, int failed_rank)
      : Error(category, message), failed_rank_(failed_rank) {}
  int failed_rank() const noexcept { return failed_rank_; }

 private:
  int failed_rank_;
};

// Runs `step` on this rank, then agrees with every rank of `comm` whether it failed anywhere:
// if it threw on any rank (gemmkit::Error, std::bad_alloc, any std::exception), every rank
// throws the RankError of the lowest failing rank, its message "rank R: <what>". Collective.
void collective(MPI_Comm comm, const std::function<void()>& step);

// ---- process grid -----------------------------------------------------------------------
struct GridShape {
  int rows = 1, cols = 1;  // P x Q
};
// The most square P x Q with P * Q == ranks and P <= Q (4: 2x2, 6: 2x3, 7: 1x7).
GridShape square_grid(int ranks);
// "PxQ" (e.g. "2x2"); a usage error for anything else.
GridShape parse_grid(std::string_view text);
std::string grid_name(GridShape shape);  // "2x2"

// The ranks of `comm` as a P x Q grid, row-major: rank = row * Q + col. Collective; a usage
// error (on every rank) when P * Q is not the number of ranks.
class ProcessGrid {
 public:
  explicit ProcessGrid(MPI_Comm comm, std::optional<GridShape> shape = std::nullopt);
  ~ProcessGrid();
  ProcessGrid(const ProcessGrid&) = delete;
  ProcessGrid& operator=(const ProcessGrid&) = delete;

  MPI_Comm comm() const { return comm_; }
  MPI_Comm row_comm() const { return row_comm_; }  // my process row, ranked by column
  MPI_Comm col_comm() const { return col_comm_; }  // my process column, ranked by row
  int rank() const { return rank_; }
  int size() const { return shape_.rows * shape_.cols; }
  GridShape shape() const { return shape_; }
  int row() const { return rank_ / shape_.cols; }
  int col() const { return rank_ % shape_.cols; }

 private:
  MPI_Comm comm_, row_comm_ = MPI_COMM_NULL, col_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  GridShape shape_;
};

// ---- the GPU backend (a build with NCCL) ------------------------------------------------
// Whether this build has the CUDA backend of the distributed part (CUDA and NCCL).
bool nccl_available();
// The device a rank uses by default: its rank among the ranks of its node, modulo the node's
// devices (one rank per GPU when mpirun starts as many ranks per node as there are GPUs).
int default_device(int node_rank, int devices);

// This rank's GPU and the NCCL communicators of its process row and column (each made by
// ncclCommInitRank from an id that the row's, or column's, first rank broadcasts over MPI),
// with the streams SUMMA runs on: one for the local GEMMs, one for the broadcasts. Collective
// over the grid (an error on any rank, such as no device or an NCCL failure, is agreed);
// destroy it (collectively) before the ProcessGrid, after the work queued through it.
// device -1: default_device() of the rank's node rank. NCCL refuses two ranks on one GPU.
class GpuGrid {
 public:
  explicit GpuGrid(const ProcessGrid& grid, int device = -1);
  ~GpuGrid();
  GpuGrid(const GpuGrid&) = delete;
  GpuGrid& operator=(const GpuGrid&) = delete;

  const ProcessGrid& grid() const { return *grid_; }
  int device() const { return device_; }
  Context& context() const;  // the device API's context of this rank's device

  struct Impl;  // the communicators and streams (src/distributed only)
  Impl& impl() const { return *impl_; }

 private:
  const ProcessGrid* grid_;
  int device_ = 0;
  std::unique_ptr<Impl> impl_;
};

// ---- 2-D block-cyclic distribution -----------------------------------------------------
// Blocks of mb x nb (the last row and column of blocks may be smaller): block (I, J) lives on
// process (I mod P, J mod Q), and each process keeps its blocks in order as one row-major
// local matrix.
struct BlockCyclic {
  std::int64_t rows = 0, cols = 0;  // the whole matrix
  std::int64_t mb = 1, nb = 1;      // block rows x block columns
  GridShape grid;

  std::int64_t local_rows(int prow) const;
  std::int64_t local_cols(int pcol) const;
  // The global row (column) of local row li (column lj) of process row prow (column pcol).
  std::int64_t global_row(int prow, std::int64_t li) const;
  std::int64_t global_col(int pcol, std::int64_t lj) const;
};
// Rows (or columns) of an order-n dimension that index `p` of `procs` holds in blocks of b.
std::int64_t block_cyclic_extent(std::int64_t n, std::int64_t b, int procs, int p);

// One rank's part of a block-cyclic matrix. In host memory (the CPU backend): f64, f32, i32
// or i64 (the dtypes every CPU kernel takes). In device memory (the CUDA backend, on a
// GpuGrid's device): also f16, bf16 and i8 (the tensor cores' inputs). The grid (and GpuGrid)
// must outlive it. A copy of a host matrix copies its blocks; copies of a device matrix share
// them (the memory goes with the last).
class DistMatrix {
 public:
  // Zero-filled local blocks in host memory. Collective (an allocation failure on any rank is agreed).
  DistMatrix(const ProcessGrid& grid, DType dtype, std::int64_t rows, std::int64_t cols,
             std::int64_t mb, std::int64_t nb);
  // Zero-filled local blocks in the device memory of gpus' device, rows device_ld() apart.
  // Collective (out of device memory on any rank is agreed, naming the bytes asked and free).
  DistMatrix(const GpuGrid& gpus, DType dtype, std::int64_t rows, std::int64_t cols,
             std::int64_t mb, std::int64_t nb);

  const ProcessGrid& grid() const { return *grid_; }
  DType dtype() const { return dtype_; }
  const BlockCyclic& distribution() const { return dist_; }
  std::int64_t rows() const { return dist_.rows; }
  std::int64_t cols() const { return dist_.cols; }
  std::int64_t local_rows() const { return dist_.local_rows(grid_->row()); }
  std::int64_t local_cols() const { return dist_.local_cols(grid_->col()); }
  Backend backend() const { return gpus_ ? Backend::cuda : Backend::cpu; }
  // Host memory: this rank's blocks, local_rows() x local_cols(), row-major. (Device
  // matrices: an empty 0 x 0 matrix.)
  AnyMatrix& local() { return local_; }
  const AnyMatrix& local() const { return local_; }
  // Device memory: the GpuGrid, and this rank's blocks, local_rows() x local_cols() row-major
  // with rows device_ld() elements apart (padded to 16 bytes, so that every row of every
  // panel starts aligned for the tensor cores). Null and 0 for host matrices.
  const GpuGrid* gpus() const { return gpus_; }
  void* device_data() const { return device_.get(); }
  std::int64_t device_ld() const { return device_ld_; }

 private:
  const ProcessGrid* grid_;
  DType dtype_;
  BlockCyclic dist_;
  AnyMatrix local_;
  const GpuGrid* gpus_ = nullptr;
  std::shared_ptr<void> device_;  // freed with cudaFree when the last copy goes
  std::int64_t device_ld_ = 0;
};

// Distributes rank 0's `whole` (ignored on the other ranks, where it may be null) in mb x nb
// blocks; its shape and dtype come from rank 0. transpose: distributes whole^T. Collective.
DistMatrix scatter(const ProcessGrid& grid, const AnyMatrix* whole, std::int64_t mb, std::int64_t nb,
                   bool transpose = false);
// The same into the device memory of gpus' device (any dtype of a host matrix: f64, f32,
// i32, i64, f16, bf16). Collective.
DistMatrix scatter(const GpuGrid& gpus, const AnyMatrix* whole, std::int64_t mb, std::int64_t nb,
                   bool transpose = false);
// The whole matrix on rank 0 (an empty 0 x 0 matrix of its dtype elsewhere), from host or
// device blocks (device: i8 is not gathered, no host matrix holds it). Collective.
AnyMatrix gather(const DistMatrix& m);

// A matrix .npy file read in parallel straight into mb x nb blocks in host memory: every rank
// reads and checks the header of the file it sees (gemmkit::read_npy_layout), which must be
// rank 0's (shape, dtype, order, data offset), then every rank reads only its own blocks
// with one collective MPI-IO read (MPI_File_read_all through a view of MPI_Type_create_darray,
// which is exactly this block-cyclic layout). C and Fortran order; transpose: distributes the
// file's matrix transposed. The file's dtype must be one a host distributed matrix holds, stored
// as it is (<f8 <f4 <i8 <i4); others are input errors (read them on rank 0 and scatter). Every
// rank must see the same file (a shared file system). Collective: a missing, bad or different
// file on any rank is one RankError on every rank, naming that rank.
DistMatrix read_npy(const ProcessGrid& grid, const std::string& path, std::int64_t mb, std::int64_t nb,
                    bool transpose = false);

// Writes the whole matrix as a C-ordered .npy file with no whole matrix anywhere: rank 0 opens
// `path` through gemmkit::AtomicFile (a temporary file next to it) and writes the header, every
// rank writes its own blocks into that temporary file (named from the root, so that a relative
// `path` is rank 0's whatever folder the others work in) with one collective MPI_File_write_all
// through the block-cyclic view, and once every rank's write has succeeded rank 0 commits it
// (renamed onto `path`, or handed to the OutputBatch open on rank 0). On any failure the
// temporary file is removed and `path` left as it was. `path` must name a file, not "-" or a
// device, and the blocks must be in host memory (gather() the others and write them on rank 0);
// every rank must see its folder. Collective.
void write_npy(const DistMatrix& m, const std::string& path);

// ---- distributed GEMM ------------------------------------------------------------------
struct SummaOptions {
  // The local kernel (gemmkit list) of the matrices' backend, or auto (on the GPU: the
  // tuned choice for each panel's shape, e.g. the Hopper wgmma rungs).
  std::string kernel = "auto";
  // nullopt: the matrices' backend (where their blocks are); a backend given must be theirs.
  std::optional<Backend> backend;
  // CUDA: each local GEMM multiplies consecutive panels together, enough of them for a K of
  // at least local_k (summa_steps), so that the GPU's GEMM is not bound by reading and writing
  // C once per panel and gets the shapes the tuned kernels won at. 1: one panel per GEMM. A
  // 1 x 1 grid (nothing to broadcast) runs one GEMM of the whole K.
  std::int64_t local_k = 8192;
  // CUDA: where a process row (column) is one rank, its GEMMs read A's (B's) panels in place
  // from the blocks; false copies and broadcasts them anyway (to test that path on one GPU).
  bool read_in_place = true;
};

// SUMMA's panels, as every rank walks them: panel t is block column t of A and block row t of
// B, `width` wide; its A part is broadcast along process rows from process column a_root,
// where it starts at local column a_offset, and its B part along process columns from
// process row b_root, where it starts at local row b_offset.
struct SummaPanel {
  std::int64_t width = 0;
  int a_root = 0, b_root = 0;
  std::int64_t a_offset = 0, b_offset = 0;
};
// The panels of a K-long product in blocks of kb on a P x Q grid.
std::vector<SummaPanel> summa_panels(std::int64_t k, std::int64_t kb, GridShape grid);
// The CUDA backend's steps: panels [first, last), k wide together, each step the fewest
// consecutive panels whose widths reach local_k (the last step may be narrower).
struct SummaStep {
  std::size_t first = 0, last = 0;
  std::int64_t k = 0;
};
std::vector<SummaStep> summa_steps(const std::vector<SummaPanel>& panels, std::int64_t local_k);

// C = alpha * A * B + beta * C by SUMMA: for each block column of A (block row of B), its
// owners broadcast it along process rows (B's along process columns) while the previous
// panel's local GEMM runs (two buffers; the CPU backend: MPI_Ibcast; CUDA: ncclBroadcast on
// the GpuGrid's communication stream, events ordering it with the GEMMs on the compute
// stream). Needs one grid and one backend for all three, A (M x K, mb x kb blocks), B (K x N,
// kb x nb) and C (M x N, mb x nb), A and B of one dtype, C of that dtype or (CUDA) the wider
// output the kernels write: f32 for f16/bf16, i32 for i8. beta == 0: C is write-only. Integer
// results are taken modulo 2^32 or 2^64 (the panels' partial sums may leave the dtype and come
// back), so they are exact wherever the exact result fits; unlike the single-process gemm(),
// summa() does not screen them (that needs whole rows of A and columns of B): gather C and
// call check_integer_result (gemmkit/verify.hpp), as `gemmkit multiply` does. Floats differ
// from the single-process GEMM's by rounding only. Returns the local kernel's name (CUDA: every kernel used,
// e.g. for a last, narrower panel). The CUDA backend returns once C is complete.
// Collective; usage errors (on every rank) for mismatched shapes, blocks, grids or dtypes.
std::string summa(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c,
                  const SummaOptions& options = {});

// ---- the reference: cuBLASMp ------------------------------------------------------------
// Whether this build found cuBLASMp (GEMMKIT_CUBLASMP; it is loaded when first used).
bool cublasmp_available();
// C = alpha * A * B + beta * C by cuBLASMp's cublasMpMatmul on the same device blocks, grid and
// blocks as summa() (the row-major blocks are cuBLASMp's column-major blocks of the transposes:
// C^T = B^T A^T on the transposed grid), on the GpuGrid's compute stream, with a communicator
// over the whole grid that the GpuGrid keeps. Returns the seconds of the call, between two
// barriers, once C is complete (the first call includes cuBLASMp's set-up: time a second one).
// Collective; a usage error (on every rank) without cuBLASMp, for host matrices or operands
// summa() would refuse.
double cublasmp_matmul(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c);

// ---- timing SUMMA --------------------------------------------------------------------------
struct SummaBenchOptions {
  int warmup = 1;            // untimed runs first
  int reps = 5;              // timed runs at most
  double max_seconds = 3.0;  // stop timing once this much has been spent (after >= 1 run)
  std::uint64_t seed = 1;    // of the random operands
  // The local kernel, and the backend: cpu (the default) or cuda (a GpuGrid over the grid,
  // one GPU per rank; a build with NCCL).
  SummaOptions summa;
  bool reference = true;     // cuda: time cublasmp_matmul() beside it where cublasmp_available()
};
// Times C = A B by SUMMA, A (m x k) and B (k x n) random, all in block x block blocks:
// `warmup` untimed runs, then timed ones, each between two barriers and taken as the slowest
// rank's time, until `reps` runs or max_seconds (agreed by every rank). The operands are made
// where they live (each rank fills its own blocks, in host memory or, on CUDA, uploaded to its
// device; C in f32 for f16 and bf16 there), and on CUDA cuBLASMp runs beside SUMMA on the same
// blocks when asked and found. The weak and strong scaling benchmarks. Collective.
// The report (operation "summa", the same on every rank): the row "summa" with its
// DistributedBenchFacts and GemmBenchFacts (the shape), rates in GFLOP/s (2 m n k / median),
// then, when timed, the reference row "cublasMpMatmul" (percent_of).
BenchReport bench_summa(const ProcessGrid& grid, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t block, const SummaBenchOptions& options = {});

// ---- the Ozaki emulation with its moduli over the ranks ---------------------------------
// C = alpha op(A) op(B) + beta C0 in f64 or f32, emulated on int8 tensor cores as
// gemmkit::ozaki_gemm() does (gemmkit/ozaki.hpp) and bit for bit the same C, with its moduli
// spread over the grid's ranks (its shape does not matter): rank 0 scans the operands and
// broadcasts the plan, the scaling and op(A) and op(B) over NCCL; each rank makes the int8
// planes and runs the modular GEMMs of its own share of the moduli (consecutive ones, as
// evenly as they go, rank 0's no more than the others'); rank 0 gathers every rank's residues
// of C, a pass of C's rows at a time while the next pass runs, and rebuilds C. `problem` is
// rank 0's: device matrices on its GPU (gpus.device()), ready when the call is made; the other
// ranks' `problem` is ignored (GemmProblem{} will do). moduli 0: the default plan. Each rank
// other than 0 holds copies of op(A) and op(B), and every rank its share's planes, in the
// workspace pool of gpus.context() (kept for the next call; release_workspaces() frees it),
// on the GpuGrid's two streams (transfers beside computation). Collective;
// returns, with the plan that ran on every rank, when C is written. Rank 0's usage errors
// (dtypes, shapes, an Inf or NaN) and any rank's allocation failure are agreed errors.
OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem& problem, int moduli = 0);
// The same on rank 0's host matrices (`host_problem` on rank 0, null on the others), copied to
// rank 0's GPU and C back: C is written only when the call succeeds.
OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem* host_problem, int moduli = 0);

// ---- distributed exact walk counts ------------------------------------------------------
// The exact all-pairs table of walks of `length` (>= 1) in rank 0's `graph` (ignored on the
// other ranks, where it may be null), with the primes spread over the ranks of `comm`: rank 0
// broadcasts the graph, each rank computes A^length modulo its own primes (prime q on rank
// q mod P; dense squaring with the CPU's modular GEMM), and rank 0 gathers the residues and
// rebuilds the counts by the Chinese remainder theorem. On rank 0 the counts of
// gemmkit::count_walks(graph, {length, all pairs, all_lengths, exact}); an empty WalkCounts
// elsewhere. backend: cpu (the primes below 2^21, CPU modular GEMMs), cuda (each rank runs the
// single-process GPU engine's powers, int8 tensor cores, on its own primes below 256, on
// `context`'s device or, null, a context of its own on default_device(); their residues go to
// rank 0's device, over NCCL, and are rebuilt there), automatic (cuda where the
// single-process engine would choose it, on every rank). Collective.
struct DistWalkOptions {
  WalkBackend backend = WalkBackend::cpu;
  Context* context = nullptr;
  bool all_lengths = false;  // the tables of every length 1..length (A^t = A^(t-1) A on each rank)
  // GPUs over NCCL: rows of counts whose residues rank 0 gathers and rebuilds at a time (0: as
  // many as keep them and their words within its own residues' bytes or 1 GiB; a single rank
  // then rebuilds its residues where they lie, in one pass).
  std::int64_t gather_rows = 0;
};
WalkCounts count_walks(MPI_Comm comm, const Graph* graph, int length, const DistWalkOptions& options = {});

}  // namespace gemmkit::dist

// The distributed part's CUDA backend in a build without NCCL (or without CUDA): every entry
// says so, but the GPU walks, which move their residues over MPI (and need CUDA).
#include "distributed/dist_common.hpp"
#include "gemmkit/exact.hpp"
#include "ops/walks/modular_int8.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit::dist {
namespace {

[[noreturn]] void no_nccl() {
  fail(ErrorCategory::usage, "the distributed CUDA backend needs a build with CUDA and NCCL (GEMMKIT_NCCL), "
                             "and this one has none");
}

}  // namespace

bool nccl_available() { return false; }
bool cublasmp_available() { return false; }
double cublasmp_matmul(double, const DistMatrix&, const DistMatrix&, double, DistMatrix& c) {
  collective(c.grid().comm(), [] { no_nccl(); });
  return 0;
}

struct GpuGrid::Impl {};

GpuGrid::GpuGrid(const ProcessGrid& grid, int) : grid_(&grid) {
  collective(grid.comm(), [] { no_nccl(); });
}
GpuGrid::~GpuGrid() = default;
Context& GpuGrid::context() const { no_nccl(); }

DistMatrix::DistMatrix(const GpuGrid& gpus, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t mb,
                       std::int64_t nb)
    : grid_(&gpus.grid()), dtype_(dtype), dist_{rows, cols, mb, nb, gpus.grid().shape()}, gpus_(&gpus) {
  collective(grid_->comm(), [] { no_nccl(); });
}

// The planes through host memory: each rank's copied off its device by the engine, sent to
// rank 0 over MPI, one message per plane, and rebuilt there on the CPU.
void gpu_walk_counts(MPI_Comm comm, Context& ctx, const Graph& g, int length,
                     const std::vector<std::uint32_t>& primes, const std::vector<int>& first, int limbs,
                     std::uint64_t* out, std::int64_t) {  // gather_rows: NCCL's
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t n = g.n;
  const std::size_t plane = std::size_t(n * n);
  const std::vector<std::uint32_t> own(primes.begin() + first[rank], primes.begin() + first[rank + 1]);
  std::vector<std::int8_t> planes;  // rank 0: every rank's, in the order of `primes`
  collective(comm, [&] {
    planes.resize(plane * (rank == 0 ? primes.size() : own.size()));
    if (own.empty()) return;
    GEMMKIT_CUDA_PART(walks_detail::gpu_int8_power_planes(ctx, g, own, length, planes.data(),
                                                          walks_detail::PlanesIn::host);
                      return;)
    detail::fail_without_cuda();
  });
  const int count = mpi_count(n * n, "a table of residues");
  constexpr int kTagPlanes = 7302;
  if (rank == 0) {
    for (int r = 1; r < size; ++r)
      for (int q = first[r]; q < first[r + 1]; ++q)
        MPI_Recv(planes.data() + std::size_t(q) * plane, count, MPI_INT8_T, r, kTagPlanes, comm, MPI_STATUS_IGNORE);
  } else {
    for (std::size_t q = 0; q < own.size(); ++q)
      MPI_Send(planes.data() + q * plane, count, MPI_INT8_T, 0, kTagPlanes, comm);
  }
  collective(comm, [&] {
    if (rank != 0 || plane == 0) return;
    Context cpu(Backend::cpu);
    CrtProblem p;
    p.rows = n, p.cols = n;
    p.moduli = primes;
    p.residues = planes.data();
    p.ld = n, p.plane_stride = n * n;
    p.out = out;
    p.ld_out = n;
    p.limbs = limbs;
    crt_rebuild(cpu, p);
  });
}

OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem&, int) {
  collective(gpus.grid().comm(), [] { no_nccl(); });
  return {};
}
OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem*, int) {
  collective(gpus.grid().comm(), [] { no_nccl(); });
  return {};
}

void upload_local(const DistMatrix&, const AnyMatrix&) { no_nccl(); }
AnyMatrix download_local(const DistMatrix&) { no_nccl(); }
std::string summa_cuda(double, const DistMatrix&, const DistMatrix&, double, DistMatrix&, const SummaOptions&) {
  no_nccl();
}

}  // namespace gemmkit::dist

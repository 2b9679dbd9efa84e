// The distributed part's CUDA backend in a build without NCCL (or without CUDA): every entry
// says so.
#include "dist/dist_common.hpp"
#include "gemmkit/exact.hpp"

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

// On the CPU: crt_rebuild on host memory.
void rebuild_counts(Context&, const std::vector<std::uint32_t>& primes, const std::int8_t* planes, std::int64_t n,
                    int limbs, std::uint64_t* out) {
  Context cpu(Backend::cpu);
  CrtProblem p;
  p.rows = n, p.cols = n;
  p.moduli = primes;
  p.residues = planes;
  p.ld = n, p.plane_stride = n * n;
  p.out = out;
  p.ld_out = n;
  p.limbs = limbs;
  crt_rebuild(cpu, p);
}

std::vector<std::int8_t> residues_of_counts(Context&, const std::vector<std::uint32_t>& primes,
                                            const std::uint64_t* words, std::int64_t entries, int limbs) {
  std::vector<std::int8_t> planes(primes.size() * std::size_t(entries));
  for (std::size_t q = 0; q < primes.size(); ++q) {
    const WordsModulo modulo(primes[q]);
#pragma omp parallel for schedule(static)
    for (std::int64_t e = 0; e < entries; ++e)
      planes[q * std::size_t(entries) + std::size_t(e)] = std::int8_t(modulo.centred(words + e * limbs, limbs));
  }
  return planes;
}

void upload_local(const DistMatrix&, const AnyMatrix&) { no_nccl(); }
AnyMatrix download_local(const DistMatrix&) { no_nccl(); }
std::string summa_cuda(double, const DistMatrix&, const DistMatrix&, double, DistMatrix&, const SummaOptions&) {
  no_nccl();
}

}  // namespace gemmkit::dist

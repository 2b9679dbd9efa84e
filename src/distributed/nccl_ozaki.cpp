// The Ozaki emulation with its moduli spread over the grid's GPUs: the emulation's own
// driver (ozaki_detail::ozaki_gemm_over_ranks) with NCCL as its transport, over a
// communicator of the whole grid that the GpuGrid keeps.
#include <cstdio>

#include "ops/ozaki/ozaki_ranks.hpp"
#include "runtime/cuda/device_problem.hpp"
#include "distributed/nccl_common.hpp"

namespace gemmkit::dist {
namespace {

class NcclExchange final : public ozaki_detail::OzakiExchange {
 public:
  // world: null for a single rank, which moves nothing.
  NcclExchange(MPI_Comm comm, ncclComm_t world) : comm_(comm), world_(world) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void agree(const std::function<void()>& step) override {
    collective(comm_, [&] {
      step();
      ncclResult_t async = ncclSuccess;  // a transfer that failed since the last step
      if (world_) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommGetAsyncError)(world_, &async));
      GEMMKIT_NCCL_CHECK(async);
    });
  }
  void must_succeed(const std::function<void()>& work) override {
    try {
      work();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gemmkit: error: rank %d: ozaki_gemm: %s\n", rank_, e.what());
      MPI_Abort(comm_, 1);
    }
  }
  void share(std::int64_t* values, int count) override { MPI_Bcast(values, count, MPI_INT64_T, 0, comm_); }
  void broadcast(void* data, std::size_t bytes, Stream stream) override {
    if (world_ && bytes > 0) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclBroadcast)(data, data, bytes, ncclInt8, 0, world_, stream));
  }
  void gather(const void* own, void* all, const std::vector<std::size_t>& offset,
              const std::vector<std::size_t>& bytes, Stream stream) override {
    if (!world_) return;
    GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGroupStart)());
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r)
        if (bytes[std::size_t(r)] > 0)
          GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclRecv)(static_cast<char*>(all) + offset[std::size_t(r)], bytes[std::size_t(r)],
                                      ncclInt8, r, world_, stream));
    } else if (bytes[std::size_t(rank_)] > 0) {
      GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclSend)(own, bytes[std::size_t(rank_)], ncclInt8, 0, world_, stream));
    }
    GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGroupEnd)());
  }

 private:
  MPI_Comm comm_;
  ncclComm_t world_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem& problem, int moduli) {
  const ProcessGrid& grid = gpus.grid();
  GpuGrid::Impl& g = gpus.impl();
  collective(grid.comm(), [&] { GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device())); });
  NcclExchange exchange(grid.comm(), grid.size() > 1 ? world_comm(gpus) : nullptr);
  return ozaki_detail::ozaki_gemm_over_ranks(gpus.context(), problem, moduli, exchange, g.compute, g.comm);
}

OzakiPlan ozaki_gemm(const GpuGrid& gpus, const GemmProblem* host_problem, int moduli) {
  const ProcessGrid& grid = gpus.grid();
  std::optional<cuda::DeviceProblem> device;  // rank 0's copies
  collective(grid.comm(), [&] {
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    if (grid.rank() != 0) return;
    if (!host_problem) fail(ErrorCategory::usage, "dist::ozaki_gemm: rank 0 passes the problem, not null");
    validate(*host_problem);  // its spans are what is copied
    device.emplace(*host_problem);
  });
  const OzakiPlan plan = ozaki_gemm(gpus, device ? device->get() : GemmProblem{}, moduli);
  collective(grid.comm(), [&] {
    if (device) device->copy_c_back();
  });
  return plan;
}

}  // namespace gemmkit::dist

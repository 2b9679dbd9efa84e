// GpuGrid: this rank's device, its context and streams, and the NCCL communicators of its
// process row and column, made from the MPI grid (ncclCommInitRank with an id that each row's
// and column's first rank broadcasts over MPI).
#include <cstring>

#include "distributed/nccl_common.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::dist {

bool nccl_available() { return true; }

void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  const char* last = GEMMKIT_NCCL(ncclGetLastError)(nullptr);
  throw Error(ErrorCategory::device, std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                                         ": " + GEMMKIT_NCCL(ncclGetErrorString)(status) +
                                         (last && *last ? std::string(" (") + last + ")" : std::string()));
}

WorldComm::WorldComm(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  collective(comm, [&] {
    if (rank == 0) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGetUniqueId)(&id));
  });
  MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, comm);
  collective(comm, [&] { GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommInitRank)(&comm_, size, id, rank)); });
}

WorldComm::~WorldComm() {
  if (comm_) GEMMKIT_NCCL(ncclCommDestroy)(comm_);
}

ncclComm_t world_comm(const GpuGrid& gpus) {
  GpuGrid::Impl& g = gpus.impl();
  if (!g.world) g.world = std::make_unique<WorldComm>(gpus.grid().comm());  // on the current device
  return g.world->get();
}

GpuGrid::Impl::~Impl() {
  // Never throws: the work queued through the grid is done (the caller's promise).
  if (compute) cudaStreamSynchronize(compute);
  if (comm) cudaStreamSynchronize(comm);
  cublasmp.reset();
  world.reset();
  if (row) GEMMKIT_NCCL(ncclCommDestroy)(row);
  if (col) GEMMKIT_NCCL(ncclCommDestroy)(col);
  if (compute) cudaStreamDestroy(compute);
  if (comm) cudaStreamDestroy(comm);
}

GpuGrid::GpuGrid(const ProcessGrid& grid, int device) : grid_(&grid), impl_(std::make_unique<Impl>()) {
  const int local = node_rank(grid.comm());
  collective(grid.comm(), [&] {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      cudaGetLastError();
      require_cuda_device();  // the device error every command gives, saying why
    }
    device_ = device >= 0 ? device : default_device(local, devices);
    if (device_ >= devices)
      fail(ErrorCategory::usage, "device " + std::to_string(device_) + ": this node has " +
                                     std::to_string(devices) + " CUDA devices");
    GEMMKIT_CUDA_CHECK(cudaSetDevice(device_));
    impl_->context.emplace(Backend::cuda, device_);
    GEMMKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->compute, cudaStreamNonBlocking));
    GEMMKIT_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->comm, cudaStreamNonBlocking));
  });
  // Each process row's (column's) first rank makes its id; MPI brings it to the others.
  ncclUniqueId row_id, col_id;
  std::memset(&row_id, 0, sizeof row_id);
  std::memset(&col_id, 0, sizeof col_id);
  collective(grid.comm(), [&] {
    if (grid.col() == 0) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGetUniqueId)(&row_id));
    if (grid.row() == 0) GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclGetUniqueId)(&col_id));
  });
  MPI_Bcast(&row_id, int(sizeof row_id), MPI_BYTE, 0, grid.row_comm());
  MPI_Bcast(&col_id, int(sizeof col_id), MPI_BYTE, 0, grid.col_comm());
  // Every rank joins its row's communicator, then its column's: no rank waits for one that
  // is still in the other.
  collective(grid.comm(), [&] {
    GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommInitRank)(&impl_->row, grid.shape().cols, row_id, grid.col()));
  });
  collective(grid.comm(), [&] {
    GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommInitRank)(&impl_->col, grid.shape().rows, col_id, grid.row()));
  });
}

GpuGrid::~GpuGrid() = default;

Context& GpuGrid::context() const { return *impl_->context; }

}  // namespace gemmkit::dist

// What the CUDA backend's sources share (src/distributed/nccl_*.cpp, a build with NCCL only).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <optional>
#include <string>

#include "runtime/cuda/check.hpp"
#include "distributed/dist_common.hpp"

namespace gemmkit::dist {

// An NCCL communicator over every rank of an MPI communicator (ncclCommInitRank with an id
// that rank 0 makes and broadcasts over MPI; collective), destroyed with it.
class WorldComm {
 public:
  explicit WorldComm(MPI_Comm comm);
  ~WorldComm();
  WorldComm(const WorldComm&) = delete;
  WorldComm& operator=(const WorldComm&) = delete;
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

// The communicators of this rank's process row and column, its device's context, and the
// streams SUMMA runs on. Freed in reverse order of creation.
struct GpuGrid::Impl {
  std::optional<Context> context;
  cudaStream_t compute = nullptr;  // local GEMMs
  cudaStream_t comm = nullptr;     // panel copies and broadcasts
  ncclComm_t row = nullptr, col = nullptr;
  std::unique_ptr<WorldComm> world;  // over the whole grid, once used (world_comm())
  // cuBLASMp, once used (nccl_cublasmp.cpp): its library, handle, grid and a communicator
  // over the whole grid; freed first.
  std::shared_ptr<void> cublasmp;
  ~Impl();
};

// The grid's communicator over all its ranks, made on first use. Collective.
ncclComm_t world_comm(const GpuGrid& gpus);

[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace gemmkit::dist

#define GEMMKIT_NCCL_CHECK(call)                                                          \
  do {                                                                                    \
    const ncclResult_t gemmkit_status_ = (call);                                          \
    if (gemmkit_status_ != ncclSuccess)                                                   \
      ::gemmkit::dist::throw_nccl_error(gemmkit_status_, #call, __FILE__, __LINE__);      \
  } while (0)

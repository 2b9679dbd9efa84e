// Internal: the Ozaki emulation (cuda/ozaki_ranks.cu) with its moduli split over the
// ranks of a job. Each rank makes the int8 planes and runs the modular GEMMs of
// its own moduli; rank 0 also scans the operands, and gathers every rank's
// residues of C to rebuild it. The transport is the caller's (OzakiExchange):
// NCCL in the distributed library (src/distributed/nccl_ozaki.cpp), MPI through host
// memory in its tests, where several ranks share one GPU. No CUDA types here:
// the distributed sources are host C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/ozaki.hpp"

namespace gemmkit::ozaki_detail {

// What the emulation asks of the job's transport. Every rank makes the same
// calls in the same order.
class OzakiExchange {
 public:
  virtual ~OzakiExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Runs `step` on every rank; if it failed on any, every rank throws the
  // lowest failing rank's error.
  virtual void agree(const std::function<void()>& step) = 0;
  // Runs `work`, which queues transfers that the other ranks' match: a failure
  // cannot be agreed (they would wait for it), so it ends the job.
  virtual void must_succeed(const std::function<void()>& work) = 0;
  // values[0 .. count) from rank 0 to every rank (host memory).
  virtual void share(std::int64_t* values, int count) = 0;
  // `bytes` of device memory at `data` from rank 0 to every rank, queued on
  // `stream` (after the work queued on it before).
  virtual void broadcast(void* data, std::size_t bytes, Stream stream) = 0;
  // Every rank r > 0 sends bytes[r] of device memory at `own` into rank 0's
  // `all` + offset[r], queued on `stream`; rank 0 passes `all`, the others
  // `own`.
  virtual void gather(const void* own, void* all, const std::vector<std::size_t>& offset,
                      const std::vector<std::size_t>& bytes, Stream stream) = 0;
};

// C = alpha op(A) op(B) + beta C0 on rank 0's `problem` (device matrices of
// ctx's device; the other ranks' problem is ignored: rank 0's shape and scalars
// reach them through the exchange), bit for bit as ozaki_gemm(ctx, problem,
// ...) computes it, with the moduli split by ozaki_moduli_by_rank().
// `compute` and `comm` are two streams of ctx's device on every rank: the scan
// and the transfers run on `comm`, the planes, GEMMs and rebuilds on
// `compute`, so that one pass's residues go to rank 0 while the next pass's
// are computed. Memory comes from ctx's workspace pool, one buffer for each
// stream (kept there for the next call). Collective; returns when C is written
// and every rank is done, with the plan that ran on every rank. Rank 0's
// errors (usage, Inf or NaN in the operands) and any rank's allocation
// failure are agreed. pass_rows: rows of C per pass (0: as many as a budget of
// memory holds; the tests take a few, for many passes).
OzakiPlan ozaki_gemm_over_ranks(Context& ctx, const GemmProblem& problem, int moduli, OzakiExchange& exchange,
                                Stream compute, Stream comm, std::int64_t pass_rows = 0);

}  // namespace gemmkit::ozaki_detail

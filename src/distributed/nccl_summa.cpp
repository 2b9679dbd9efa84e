// SUMMA on device blocks. The panels are taken a step at a time (summa_steps: consecutive
// panels, so that each local GEMM has a K of at least SummaOptions::local_k): for each panel of
// a step, the owners of its A part copy it out of their blocks into a staging buffer, which is
// broadcast along the process row (ncclBroadcast on the row communicator) and copied into the
// step's A buffer beside the step's other panels; the owners of its B part copy it into the
// step's B buffer, below the others, and broadcast it there along the process column. All of
// this runs on the GpuGrid's communication stream, into one of two step buffers, while the
// local GEMM of the previous step runs on the compute stream (gemmkit's device API). Events
// order them: a step's GEMM waits for its broadcasts (ready), and the broadcasts into a
// buffer wait for the GEMM that last read it (consumed). A process row (column) of one rank
// broadcasts nothing: its GEMM reads A (B) in place from the blocks.
#include <algorithm>
#include <cstdio>

#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/event.hpp"
#include "distributed/nccl_common.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::dist {
namespace {

// Panel rows start on 16 bytes, as the tensor-core kernels' loads want.
std::int64_t padded(std::int64_t width, std::size_t size) {
  const auto per_16 = std::int64_t(16 / size);
  return std::max<std::int64_t>(per_16, (width + per_16 - 1) / per_16 * per_16);
}

}  // namespace

std::string summa_cuda(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c,
                       const SummaOptions& options) {
  const ProcessGrid& grid = c.grid();
  const GridShape shape = grid.shape();
  const GpuGrid& gpus = *c.gpus();
  GpuGrid::Impl& g = gpus.impl();
  Context& ctx = gpus.context();
  const DType in = a.dtype();
  const std::int64_t k = a.cols(), kb = a.distribution().nb;
  const std::int64_t lm = c.local_rows(), ln = c.local_cols();
  const std::vector<SummaPanel> panels = summa_panels(k, kb, shape);
  const std::size_t size = dtype_size(in);
  // A single process column (row) holds every panel of A (B) itself: read in place. With
  // both (a 1 x 1 grid) nothing moves, and one GEMM of the whole K is the fastest.
  const bool a_in_place = options.read_in_place && shape.cols == 1;
  const bool b_in_place = options.read_in_place && shape.rows == 1;
  const std::int64_t local_k = a_in_place && b_in_place ? std::max<std::int64_t>(k, 1) : options.local_k;
  const std::vector<SummaStep> steps = summa_steps(panels, std::max<std::int64_t>(1, local_k));
  std::int64_t step_k = 0;  // the widest step
  for (const SummaStep& s : steps) step_k = std::max(step_k, s.k);
  const std::int64_t lda = a_in_place ? a.device_ld() : padded(step_k, size);
  const std::int64_t ldb = b_in_place ? b.device_ld() : padded(ln, size);
  const auto* a_blocks = static_cast<const unsigned char*>(a.device_data());
  const auto* b_blocks = static_cast<const unsigned char*>(b.device_data());

  GemmOptions gemm_options;
  gemm_options.backend = Backend::cuda;
  gemm_options.kernel = options.kernel;
  cuda::DeviceBuffer<unsigned char> a_step[2], b_step[2], a_stage;
  std::vector<std::string> kernels;  // by step (K = 0: one)
  Workspace workspace;
  std::optional<cuda::Event> ready[2], consumed[2];
  // The local product of step s (in buffer `buffer`) into this rank's C.
  const auto local_problem = [&](int buffer, std::size_t s, double beta_now) {
    GemmProblem p;
    p.dtype = in;
    if (c.dtype() != in) p.out_dtype = c.dtype();
    p.m = lm, p.n = ln, p.k = steps.empty() ? 0 : steps[s].k;
    p.alpha = alpha, p.beta = beta_now;
    const SummaPanel* first = steps.empty() ? nullptr : &panels[steps[s].first];
    p.a = a_in_place && first ? a_blocks + std::size_t(first->a_offset) * size : a_step[buffer].data();
    p.b = b_in_place && first ? b_blocks + std::size_t(first->b_offset * ldb) * size : b_step[buffer].data();
    p.lda = lda, p.ldb = ldb;
    p.c = c.device_data(), p.ldc = c.device_ld();
    return p;
  };
  collective(grid.comm(), [&] {
    check_summa_operands(a, b, c);
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    for (int i = 0; i < 2; ++i) {
      if (!a_in_place) a_step[i] = cuda::DeviceBuffer<unsigned char>(std::size_t(lm * lda) * size);
      if (!b_in_place) b_step[i] = cuda::DeviceBuffer<unsigned char>(std::size_t(step_k * ldb) * size);
      ready[i].emplace();
      consumed[i].emplace();
    }
    if (!a_in_place) a_stage = cuda::DeviceBuffer<unsigned char>(std::size_t(lm * std::min(k, kb)) * size);
    // Each step's kernel (a last, narrower step, or blocks read in place at another
    // alignment, may get another), chosen and checked here: nothing is refused in the loop.
    std::size_t workspace_bytes = 0;
    for (std::size_t s = 0; s < std::max<std::size_t>(steps.size(), 1) && lm > 0 && ln > 0; ++s) {
      const GemmProblem p = local_problem(int(s % 2), s, s == 0 ? beta : 1.0);
      validate(p);
      GemmOptions o = gemm_options;
      o.kernel = choose_gemm_kernel(ctx, p, gemm_options).name;
      kernels.push_back(o.kernel);
      workspace_bytes = std::max(workspace_bytes, gemm_workspace_bytes(ctx, p, o));
    }
    if (workspace_bytes > 0) workspace = ctx.workspace(g.compute, workspace_bytes);
  });

  // Step s into buffer s % 2: for each of its panels, its owners copy it out of their blocks
  // and every rank of the row (column) joins its broadcast (sizes agree: a process row shares
  // lm, a process column ln).
  const auto post = [&](std::size_t s) {
    const int buffer = int(s % 2);
    GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(g.comm, consumed[buffer]->get(), 0));
    std::int64_t at = 0;  // the panel's first column (row) in the step
    for (std::size_t t = steps[s].first; t < steps[s].last; ++t) {
      const SummaPanel& panel = panels[t];
      const std::int64_t w = panel.width;
      if (!a_in_place && lm > 0) {
        if (grid.col() == panel.a_root)
          GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(a_stage.data(), std::size_t(w) * size,
                                               a_blocks + std::size_t(panel.a_offset) * size,
                                               std::size_t(a.device_ld()) * size, std::size_t(w) * size,
                                               std::size_t(lm), cudaMemcpyDeviceToDevice, g.comm));
        GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclBroadcast)(a_stage.data(), a_stage.data(), std::size_t(lm * w) * size, ncclUint8,
                                         panel.a_root, g.row, g.comm));
        GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(a_step[buffer].data() + std::size_t(at) * size,
                                             std::size_t(lda) * size, a_stage.data(), std::size_t(w) * size,
                                             std::size_t(w) * size, std::size_t(lm), cudaMemcpyDeviceToDevice,
                                             g.comm));
      }
      if (!b_in_place && ln > 0) {
        unsigned char* rows = b_step[buffer].data() + std::size_t(at * ldb) * size;
        if (grid.row() == panel.b_root)
          GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(rows, std::size_t(ldb) * size,
                                               b_blocks + std::size_t(panel.b_offset * b.device_ld()) * size,
                                               std::size_t(b.device_ld()) * size, std::size_t(ln) * size,
                                               std::size_t(w), cudaMemcpyDeviceToDevice, g.comm));
        GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclBroadcast)(rows, rows, std::size_t(w * ldb) * size, ncclUint8, panel.b_root, g.col,
                                         g.comm));
      }
      at += w;
    }
    GEMMKIT_CUDA_CHECK(cudaEventRecord(ready[buffer]->get(), g.comm));
  };

  // Nothing here is refused for a valid problem (checked above on every rank); should a call
  // still fail, the other ranks would wait in a broadcast for ever, so the job is ended.
  try {
    if (steps.empty() && lm > 0 && ln > 0) {  // K = 0: C = beta C
      GemmOptions o = gemm_options;
      o.kernel = kernels.at(0);
      gemm(ctx, local_problem(0, 0, beta), g.compute, workspace, o);
    }
    if (!steps.empty()) post(0);
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const int buffer = int(s % 2);
      if (s + 1 < steps.size()) post(s + 1);  // overlaps step s's GEMM
      GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(g.compute, ready[buffer]->get(), 0));
      if (lm > 0 && ln > 0) {
        GemmOptions o = gemm_options;
        o.kernel = kernels.at(s);
        gemm(ctx, local_problem(buffer, s, s == 0 ? beta : 1.0), g.compute, workspace, o);
      }
      GEMMKIT_CUDA_CHECK(cudaEventRecord(consumed[buffer]->get(), g.compute));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmkit: error: rank %d: summa: %s\n", grid.rank(), e.what());
    MPI_Abort(grid.comm(), 1);
  }
  // C is complete when both streams are; an error of the device or of NCCL on any rank is agreed.
  collective(grid.comm(), [&] {
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(g.compute));
    GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(g.comm));
    for (ncclComm_t comm : {g.row, g.col}) {
      ncclResult_t async = ncclSuccess;
      GEMMKIT_NCCL_CHECK(GEMMKIT_NCCL(ncclCommGetAsyncError)(comm, &async));
      GEMMKIT_NCCL_CHECK(async);
    }
  });
  std::string names;
  for (const std::string& name : kernels)
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? gemm_options.kernel : names;
}

}  // namespace gemmkit::dist

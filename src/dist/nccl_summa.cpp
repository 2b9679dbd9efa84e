// SUMMA on device blocks: panel t's A part is copied out of its owners' blocks and broadcast
// along process rows (ncclBroadcast on the row communicator), its B part along process columns,
// both on the GpuGrid's communication stream into one of two panel buffers, while the local
// GEMM of panel t - 1 runs on the compute stream (gemmkit's device API). Events order them:
// a panel's GEMM waits for its broadcasts (ready), and the broadcasts into a buffer wait for
// the GEMM that last read it (consumed).
#include <algorithm>
#include <cstdio>
#include <map>

#include "cuda/device_buffer.hpp"
#include "cuda/event.hpp"
#include "dist/nccl_common.hpp"
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
  const GpuGrid& gpus = *c.gpus();
  GpuGrid::Impl& g = gpus.impl();
  Context& ctx = gpus.context();
  const DType in = a.dtype();
  const std::int64_t k = a.cols(), kb = a.distribution().nb;
  const std::int64_t lm = c.local_rows(), ln = c.local_cols();
  const std::vector<SummaPanel> plan = summa_panels(k, kb, grid.shape());
  const std::size_t size = dtype_size(in);
  const std::int64_t lda = padded(std::min(k, kb), size), ldb = padded(ln, size);
  const std::size_t a_bytes = std::size_t(lm * lda) * size, b_bytes = std::size_t(kb * ldb) * size;

  GemmOptions gemm_options;
  gemm_options.backend = Backend::cuda;
  gemm_options.kernel = options.kernel;
  cuda::DeviceBuffer<unsigned char> a_panel[2], b_panel[2];
  std::map<std::int64_t, std::string> kernels;  // by panel width: at most two
  Workspace workspace;
  std::optional<cuda::Event> ready[2], consumed[2];
  // The local product of a panel of width w (in buffer `buffer`) into this rank's C.
  const auto local_problem = [&](int buffer, std::int64_t w, double beta_now) {
    GemmProblem p;
    p.dtype = in;
    if (c.dtype() != in) p.out_dtype = c.dtype();
    p.m = lm, p.n = ln, p.k = w;
    p.alpha = alpha, p.beta = beta_now;
    p.a = a_panel[buffer].data(), p.lda = lda;
    p.b = b_panel[buffer].data(), p.ldb = ldb;
    p.c = c.device_data(), p.ldc = c.device_ld();
    return p;
  };
  collective(grid.comm(), [&] {
    check_summa_operands(a, b, c);
    GEMMKIT_CUDA_CHECK(cudaSetDevice(gpus.device()));
    for (int i = 0; i < 2; ++i) {
      a_panel[i] = cuda::DeviceBuffer<unsigned char>(a_bytes);
      b_panel[i] = cuda::DeviceBuffer<unsigned char>(b_bytes);
      ready[i].emplace();
      consumed[i].emplace();
    }
    // One kernel per panel width (the last panel may be narrower), chosen and checked here:
    // nothing is refused inside the loop.
    std::size_t workspace_bytes = 0;
    std::vector<std::int64_t> widths;
    for (const SummaPanel& panel : plan) widths.push_back(panel.width);
    if (plan.empty()) widths.push_back(0);
    for (const std::int64_t w : widths) {
      if (kernels.count(w) || lm == 0 || ln == 0) continue;
      const GemmProblem p = local_problem(0, w, beta);
      validate(p);
      GemmOptions o = gemm_options;
      o.kernel = choose_gemm_kernel(ctx, p, gemm_options).name;
      kernels[w] = o.kernel;
      workspace_bytes = std::max(workspace_bytes, gemm_workspace_bytes(ctx, p, o));
    }
    if (workspace_bytes > 0) workspace = ctx.workspace(g.compute, workspace_bytes);
  });

  // Panel t into buffer t % 2: its owners copy it out of their blocks, every rank joins the
  // two broadcasts (sizes agree: a process row shares lm, a process column ln).
  const auto post = [&](std::size_t t) {
    const int buffer = int(t % 2);
    const SummaPanel& panel = plan[t];
    const std::int64_t w = panel.width;
    GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(g.comm, consumed[buffer]->get(), 0));
    const auto* a_blocks = static_cast<const unsigned char*>(a.device_data());
    const auto* b_blocks = static_cast<const unsigned char*>(b.device_data());
    if (grid.col() == panel.a_root && lm > 0 && w > 0)
      GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(a_panel[buffer].data(), std::size_t(lda) * size,
                                           a_blocks + std::size_t(panel.a_offset) * size,
                                           std::size_t(a.device_ld()) * size, std::size_t(w) * size,
                                           std::size_t(lm), cudaMemcpyDeviceToDevice, g.comm));
    if (grid.row() == panel.b_root && ln > 0 && w > 0)
      GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(b_panel[buffer].data(), std::size_t(ldb) * size,
                                           b_blocks + std::size_t(panel.b_offset * b.device_ld()) * size,
                                           std::size_t(b.device_ld()) * size, std::size_t(ln) * size,
                                           std::size_t(w), cudaMemcpyDeviceToDevice, g.comm));
    const std::size_t a_count = std::size_t(lm * lda) * size, b_count = std::size_t(w * ldb) * size;
    GEMMKIT_NCCL_CHECK(ncclGroupStart());
    if (a_count > 0)
      GEMMKIT_NCCL_CHECK(ncclBroadcast(a_panel[buffer].data(), a_panel[buffer].data(), a_count, ncclUint8,
                                       panel.a_root, g.row, g.comm));
    if (b_count > 0)
      GEMMKIT_NCCL_CHECK(ncclBroadcast(b_panel[buffer].data(), b_panel[buffer].data(), b_count, ncclUint8,
                                       panel.b_root, g.col, g.comm));
    GEMMKIT_NCCL_CHECK(ncclGroupEnd());
    GEMMKIT_CUDA_CHECK(cudaEventRecord(ready[buffer]->get(), g.comm));
  };

  // Nothing here is refused for a valid problem (checked above on every rank); should a call
  // still fail, the other ranks would wait in a broadcast for ever, so the job is ended.
  try {
    if (plan.empty() && lm > 0 && ln > 0) {
      GemmOptions o = gemm_options;
      o.kernel = kernels.at(0);
      gemm(ctx, local_problem(0, 0, beta), g.compute, workspace, o);
    }
    if (!plan.empty()) post(0);
    for (std::size_t t = 0; t < plan.size(); ++t) {
      const int buffer = int(t % 2);
      if (t + 1 < plan.size()) post(t + 1);  // overlaps panel t's GEMM
      GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(g.compute, ready[buffer]->get(), 0));
      if (lm > 0 && ln > 0) {
        GemmOptions o = gemm_options;
        o.kernel = kernels.at(plan[t].width);
        gemm(ctx, local_problem(buffer, plan[t].width, t == 0 ? beta : 1.0), g.compute, workspace, o);
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
      GEMMKIT_NCCL_CHECK(ncclCommGetAsyncError(comm, &async));
      GEMMKIT_NCCL_CHECK(async);
    }
  });
  std::string names;
  for (const auto& [width, name] : kernels)
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? gemm_options.kernel : names;
}

}  // namespace gemmkit::dist

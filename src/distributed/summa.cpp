// SUMMA over a process grid: C = alpha A B + beta C, one block column of A and block row of B
// (a panel) at a time. Panel t's owners (process column t mod Q for A, process row t mod P
// for B) broadcast it along their process rows and columns; every rank multiplies the panels
// it received into its part of C with the CPU GEMM. Panel t+1's broadcasts (MPI_Ibcast into
// the other of two buffers) are posted before panel t's local GEMM, which runs in slices with
// a test of those broadcasts between them, so that communication and computation overlap.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ops/gemm/dispatch.hpp"
#include "distributed/dist_common.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::dist {
namespace {

// The local product of a panel runs in up to kSlices slices of at least kSliceRows rows.
constexpr std::int64_t kSlices = 4, kSliceRows = 16;

std::string shape_text(const DistMatrix& m) {
  return std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + " (blocks " +
         std::to_string(m.distribution().mb) + "x" + std::to_string(m.distribution().nb) + ")";
}

}  // namespace

void check_summa_operands(const DistMatrix& a, const DistMatrix& b, const DistMatrix& c) {
  if (&a.grid() != &c.grid() || &b.grid() != &c.grid())
    fail(ErrorCategory::usage, "summa: A, B and C must be distributed over one process grid");
  if (a.gpus() != c.gpus() || b.gpus() != c.gpus())
    fail(ErrorCategory::usage, "summa: A, B and C must all be in host memory or all on one GpuGrid's devices");
  // C has the inputs' dtype or, on the GPU, the wider one the kernels write.
  const DType in = a.dtype();
  const bool wider = c.backend() == Backend::cuda &&
                     (((in == DType::f16 || in == DType::bf16) && c.dtype() == DType::f32) ||
                      (in == DType::i8 && c.dtype() == DType::i32));
  if (b.dtype() != in || (c.dtype() != in && !wider))
    fail(ErrorCategory::usage, "summa: A, B and C must have one dtype (on the GPU, C may be f32 for f16 "
                               "or bf16 inputs, i32 for i8); they are " +
                                   std::string(dtype_name(a.dtype())) + ", " + std::string(dtype_name(b.dtype())) +
                                   " and " + std::string(dtype_name(c.dtype())));
  const std::string shapes = "A is " + shape_text(a) + ", B is " + shape_text(b) + ", C is " + shape_text(c);
  if (a.cols() != b.rows() || a.rows() != c.rows() || b.cols() != c.cols())
    fail(ErrorCategory::usage, "summa: shape mismatch: " + shapes);
  const BlockCyclic &da = a.distribution(), &db = b.distribution(), &dc = c.distribution();
  if (da.nb != db.mb || da.mb != dc.mb || db.nb != dc.nb)
    fail(ErrorCategory::usage, "summa: block mismatch: " + shapes +
                                   " (A's block columns must be B's block rows, A's block rows C's, "
                                   "B's block columns C's)");
}

std::vector<SummaStep> summa_steps(const std::vector<SummaPanel>& panels, std::int64_t local_k) {
  std::vector<SummaStep> steps;
  for (std::size_t t = 0; t < panels.size(); ++t) {
    if (steps.empty() || steps.back().k >= local_k) steps.push_back({t, t, 0});
    steps.back().last = t + 1;
    steps.back().k += panels[t].width;
  }
  return steps;
}

std::vector<SummaPanel> summa_panels(std::int64_t k, std::int64_t kb, GridShape grid) {
  std::vector<SummaPanel> panels;
  for (std::int64_t t = 0; kb > 0 && t * kb < k; ++t)
    panels.push_back({std::min(kb, k - t * kb), int(t % grid.cols), int(t % grid.rows),
                      (t / grid.cols) * kb, (t / grid.rows) * kb});
  return panels;
}

std::string summa(double alpha, const DistMatrix& a, const DistMatrix& b, double beta, DistMatrix& c,
                  const SummaOptions& options) {
  if (options.backend && *options.backend != c.backend())
    collective(c.grid().comm(), [&] {
      fail(ErrorCategory::usage, "summa: --backend " + std::string(backend_name(*options.backend)) +
                                     ", but the matrices' blocks are in " +
                                     (c.backend() == Backend::cuda ? "device" : "host") + " memory");
    });
  if (c.backend() == Backend::cuda) return summa_cuda(alpha, a, b, beta, c, options);
  const ProcessGrid& grid = c.grid();
  const GridShape g = grid.shape();
  const DType dtype = c.dtype();
  const std::int64_t k = a.cols(), kb = a.distribution().nb;
  const std::int64_t lm = c.distribution().local_rows(grid.row());
  const std::int64_t ln = c.distribution().local_cols(grid.col());
  const std::int64_t la_cols = a.distribution().local_cols(grid.col());
  const std::vector<SummaPanel> plan = summa_panels(k, kb, g);
  const auto panels = std::int64_t(plan.size());
  const std::size_t size = dtype_size(dtype);
  void* c_local = std::visit([](auto& x) -> void* { return x.data(); }, c.local());
  const std::int64_t ldc = std::visit([](const auto& x) { return x.ld(); }, c.local());
  const auto* a_local = static_cast<const unsigned char*>(
      std::visit([](const auto& x) -> const void* { return x.data(); }, a.local()));
  const auto* b_local = static_cast<const unsigned char*>(
      std::visit([](const auto& x) -> const void* { return x.data(); }, b.local()));

  Context context(Backend::cpu);
  GemmOptions gemm_options;
  gemm_options.backend = Backend::cpu;
  gemm_options.kernel = options.kernel;
  // The local products run on the kernel itself, not through gemm(): a panel's integer sums
  // are partial (they may leave the dtype and come back), taken modulo 2^bits as the whole
  // product's are; the caller screens the gathered C (check_integer_result, as multiply does).
  const KernelEntry* entry = nullptr;
  std::vector<unsigned char> a_panel[2], b_panel[2];
  // The local product of a panel of width w into this rank's C.
  const auto local_problem = [&](int buffer, std::int64_t w, double beta_now) {
    GemmProblem p;
    p.dtype = dtype;
    p.m = lm, p.n = ln, p.k = w;
    p.alpha = alpha, p.beta = beta_now;
    p.a = a_panel[buffer].data(), p.lda = std::max<std::int64_t>(w, 1);
    p.b = b_panel[buffer].data(), p.ldb = std::max<std::int64_t>(ln, 1);
    p.c = c_local, p.ldc = ldc;
    return p;
  };
  collective(grid.comm(), [&] {
    check_summa_operands(a, b, c);
    check_host_dtype(dtype);
    const std::int64_t w = std::min(k, kb);
    mpi_count(lm * w, "a panel of A");
    mpi_count(w * ln, "a panel of B");
    for (int i = 0; i < 2; ++i) {
      a_panel[i].resize(std::size_t(lm * w) * size);
      b_panel[i].resize(std::size_t(w * ln) * size);
    }
    // One kernel for every panel, chosen and checked once (it refuses nothing later).
    const GemmProblem first = local_problem(0, w, beta);
    validate(first);
    entry = &choose_gemm_kernel(context, first, gemm_options);
    gemm_options.kernel = entry->name;
  });

  const MPI_Datatype type = mpi_type(dtype);
  MPI_Request requests[2][2];
  // Panel t: its owners pack it into buffer t % 2, and every rank starts its broadcasts.
  const auto post = [&](std::int64_t t) {
    const int buffer = int(t % 2);
    const SummaPanel& panel = plan[std::size_t(t)];
    const std::int64_t w = panel.width;
    if (grid.col() == panel.a_root) {  // A's local columns of block column t, rows packed w wide
      for (std::int64_t i = 0; i < lm; ++i)
        std::memcpy(a_panel[buffer].data() + std::size_t(i * w) * size,
                    a_local + std::size_t(i * la_cols + panel.a_offset) * size, std::size_t(w) * size);
    }
    if (grid.row() == panel.b_root && w * ln > 0)  // B's local rows of block row t: contiguous
      std::memcpy(b_panel[buffer].data(), b_local + std::size_t(panel.b_offset * ln) * size,
                  std::size_t(w * ln) * size);
    MPI_Ibcast(a_panel[buffer].data(), int(lm * w), type, panel.a_root, grid.row_comm(), &requests[buffer][0]);
    MPI_Ibcast(b_panel[buffer].data(), int(w * ln), type, panel.b_root, grid.col_comm(), &requests[buffer][1]);
  };

  // Nothing here fails for a valid problem (checked above on every rank); should it, the
  // other ranks would wait in a broadcast for ever, so the job is ended instead.
  try {
    if (panels == 0 && lm > 0 && ln > 0) detail::launch_gemm(context, *entry, local_problem(0, 0, beta), nullptr, {});
    if (panels > 0) post(0);
    for (std::int64_t t = 0; t < panels; ++t) {
      const int buffer = int(t % 2);
      MPI_Waitall(2, requests[buffer], MPI_STATUSES_IGNORE);
      if (t + 1 < panels) post(t + 1);
      const std::int64_t w = plan[std::size_t(t)].width;
      if (lm == 0 || ln == 0) continue;
      // MPI moves a nonblocking broadcast on only inside MPI calls (Open MPI has no progress
      // thread by default), so the local product runs in slices of C's rows with a test of
      // the next panel's broadcasts between them. Each entry's sum is the same either way.
      const GemmProblem whole = local_problem(buffer, w, t == 0 ? beta : 1.0);
      const std::int64_t slice = std::max<std::int64_t>(kSliceRows, (lm + kSlices - 1) / kSlices);
      for (std::int64_t row = 0; row < lm; row += slice) {
        GemmProblem part = whole;
        part.m = std::min(slice, lm - row);
        part.a = static_cast<const unsigned char*>(whole.a) + std::size_t(row * whole.lda) * size;
        part.c = static_cast<unsigned char*>(whole.c) + std::size_t(row * whole.ldc) * size;
        detail::launch_gemm(context, *entry, part, nullptr, {});
        if (t + 1 < panels && row + slice < lm) {
          int done = 0;
          MPI_Testall(2, requests[1 - buffer], &done, MPI_STATUSES_IGNORE);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmkit: error: rank %d: summa: %s\n", grid.rank(), e.what());
    MPI_Abort(grid.comm(), 1);
  }
  return gemm_options.kernel;
}

}  // namespace gemmkit::dist

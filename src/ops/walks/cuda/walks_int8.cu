// The GPU engine of exact walk counting (ops/walks/modular_int8.hpp), end to end on the device:
// the graph is uploaded once as CSR; one kernel scatters its weights mod every prime of a
// batch into zeroed residue planes; the powers run as modular int8 GEMMs (modular_gemm)
// whose epilogue writes centred residues in both layouts the next product reads; at each
// recorded length crt_rebuild turns the residues of every count asked for into its final
// two's-complement words on the device, and the table goes to the host once, in that form.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "ops/gemm/cuda/cublas.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_timing.hpp"
#include "runtime/cuda/event.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "ops/walks/modular_int8.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit::walks_detail {
namespace {

using cuda::Event;
using cuda::OwnStream;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Residue planes are n x n inside ld x ld with zeros around (ld a multiple of 64, so every
// row starts 64-byte aligned and the products run on whole tiles), one plane per modulus,
// ld * ld bytes apart. The products run on the whole ld x ld: the zero rows and columns add
// nothing, and their results stay zero.
std::int64_t leading_dimension(std::int64_t n) { return std::max<std::int64_t>(64, (n + 63) / 64 * 64); }

// The moduli of one batch, passed by value to the scatter kernel.
struct BatchModuli {
  std::uint32_t p[64];
};

// A mod p_q for every modulus q of a batch, centred, from the CSR graph: entry (u, v) goes to
// row-major r_row[q][u][v] and to column-major a_col[q][v][u] and r_col[q][v][u] (planes
// zeroed before; parallel edges are merged in a Graph, so no entry is written twice).
// One warp per row u, its lanes over the row's edges; blockIdx.y is the modulus.
__global__ void scatter_residues(const std::int64_t* __restrict__ row_start,
                                 const std::int32_t* __restrict__ target,
                                 const std::int64_t* __restrict__ weight,  // null: all 1
                                 std::int64_t n, std::int64_t ld, BatchModuli moduli,
                                 std::int8_t* __restrict__ r_row, std::int8_t* __restrict__ r_col,
                                 std::int8_t* __restrict__ a_col) {
  const std::int64_t plane = ld * ld;
  const std::int64_t p = moduli.p[blockIdx.y], half = (p - 1) / 2;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  const int lane = threadIdx.x % 32;
  for (std::int64_t u = blockIdx.x * std::int64_t(blockDim.x / 32) + threadIdx.x / 32; u < n; u += warps)
    for (std::int64_t e = row_start[u] + lane; e < row_start[u + 1]; e += 32) {
      std::int64_t x = weight ? weight[e] % p : 1;  // in (-p, p)
      if (x > half) x -= p;
      else if (x < -half) x += p;
      const std::int64_t v = target[e];
      const std::int64_t q = blockIdx.y * plane;
      r_row[q + u * ld + v] = std::int8_t(x);
      r_col[q + v * ld + u] = std::int8_t(x);
      a_col[q + v * ld + u] = std::int8_t(x);
    }
}

// Keeps the residues of the counts asked for, for a batch of moduli, when the moduli do not
// all fit on the device at once: kept[q][r][c] = r_row[q][rows[r]][cols[c]] (q in the batch).
__global__ void gather_residues(const std::int8_t* __restrict__ r_row, std::int64_t ld, int batch,
                                const std::int64_t* __restrict__ rows, std::int64_t row_count,
                                const std::int64_t* __restrict__ cols, std::int64_t col_count,
                                std::int8_t* __restrict__ kept) {
  const std::int64_t per_plane = row_count * col_count, total = per_plane * batch;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t q = i / per_plane, e = i % per_plane;
    kept[i] = r_row[q * ld * ld + rows[e / col_count] * ld + cols[e % col_count]];
  }
}

// Fills x with seeded pseudo-random integers in [-125, 125], as residues are.
template <class T>
__global__ void fill_residue_like(T* x, std::int64_t count, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = T(int(h % 251) - 125);
  }
}

// Z = X Y (ld x ld): X row-major, Y column-major, Z column-major int32, as cuBLAS's "TN"
// int8 tensor-core GEMM (the reference the benchmark compares the modular GEMMs with).
void int8_gemm(cublasHandle_t h, const std::int8_t* x_row, const std::int8_t* y_col, int* z,
               std::int64_t ld) {
  const int one = 1, zero = 0;
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmEx_64)(h, CUBLAS_OP_T, CUBLAS_OP_N, int(ld), int(ld),
                                    int(ld), &one, x_row, CUDA_R_8I, int(ld), y_col, CUDA_R_8I, int(ld),
                                    &zero, z, CUDA_R_32I, int(ld), CUBLAS_COMPUTE_32I,
                                    CUBLAS_GEMM_DEFAULT));
}

// Page-locked host memory, freed with it.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) {
    if (bytes) GEMMKIT_CUDA_CHECK(cudaMallocHost(&data_, bytes));
  }
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  char* data() const { return static_cast<char*>(data_); }

 private:
  void* data_ = nullptr;
};

// Copies finished tables to host memory that may never have been touched, through two
// pinned staging buffers: the DMA of one chunk overlaps the copy of the one before out of
// the staging buffer, and that copy runs on every core (the first touch of fresh pages is
// most of its cost, and a pageable cudaMemcpy would pay it on one thread).
class TableCopier {
 public:
  static constexpr std::size_t kChunk = std::size_t(16) << 20;

  explicit TableCopier(std::size_t largest) : chunk_(std::clamp<std::size_t>(largest, 1, kChunk)), stage_{PinnedBuffer(chunk_), PinnedBuffer(chunk_)} {}

  // After `ready` (recorded on the stream that finished the table), bytes from device to host.
  void copy(const void* device, void* host, std::size_t bytes, cudaEvent_t ready) {
    GEMMKIT_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), ready, 0));
    const auto* src = static_cast<const char*>(device);
    auto* dst = static_cast<char*>(host);
    const std::size_t chunks = (bytes + chunk_ - 1) / chunk_;
    auto issue = [&](std::size_t i) {
      const std::size_t at = i * chunk_, size = std::min(chunk_, bytes - at);
      GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(stage_[i % 2].data(), src + at, size, cudaMemcpyDeviceToHost,
                                         stream_.get()));
      GEMMKIT_CUDA_CHECK(cudaEventRecord(landed_[i % 2].get(), stream_.get()));
    };
    if (chunks > 0) issue(0);
    for (std::size_t i = 0; i < chunks; ++i) {
      // Buffer (i + 1) % 2 was emptied by the host copy of chunk i - 1, finished below.
      if (i + 1 < chunks) issue(i + 1);
      GEMMKIT_CUDA_CHECK(cudaEventSynchronize(landed_[i % 2].get()));
      const std::size_t at = i * chunk_;
      parallel_copy(dst + at, stage_[i % 2].data(), std::min(chunk_, bytes - at));
    }
  }

 private:
  std::size_t chunk_;
  OwnStream stream_;
  PinnedBuffer stage_[2];
  Event landed_[2];
};

// GPU time of pieces of work, read once the work is done (reading a timer waits for its
// work, which would stall the queue between steps).
class GpuTimes {
 public:
  void start(cudaStream_t s) {
    spans_.push_back({std::make_unique<cuda::StreamTimer>(s), nullptr});
    spans_.back().timer->start();
  }
  void stop(double& sink) {
    spans_.back().sink = &sink;
    spans_.back().timer->stop();
  }
  void collect() {
    for (Span& span : spans_) *span.sink += span.timer->seconds();
    spans_.clear();
  }

 private:
  struct Span {
    std::unique_ptr<cuda::StreamTimer> timer;
    double* sink;
  };
  std::vector<Span> spans_;
};

// A copy of `host` on the device, ordered on stream s (a non-blocking stream does not wait
// for the legacy stream, whose pageable cudaMemcpy may return before its DMA is done).
template <class T>
cuda::DeviceBuffer<T> upload(const std::vector<T>& host, cudaStream_t s) {
  cuda::DeviceBuffer<T> d(host.size());
  if (!host.empty())
    GEMMKIT_CUDA_CHECK(cudaMemcpyAsync(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

bool is_identity(const std::vector<std::int64_t>& index, std::int64_t n) {
  if (std::int64_t(index.size()) != n) return false;
  for (std::int64_t i = 0; i < n; ++i)
    if (index[i] != i) return false;
  return true;
}

int cuda_device_of(const Context& ctx) {
  if (ctx.backend() != Backend::cuda)
    fail(ErrorCategory::usage, "the GPU walk engine needs a CUDA context, not a CPU one");
  return ctx.device();
}

// The power steps on ctx's device, on a stream of their own, modulo `primes` a batch
// (`group`) at a time. Device memory: the graph (CSR), and per modulus of a batch A
// (column-major) and R in both layouts twice (the product's operands and its result): 5
// bytes per entry, plus modular_gemm's workspace. The batch is the largest that fits beside
// what the caller keeps on the device, extra(group) bytes (`keeps` says what, for the error
// when not even one modulus fits).
class PowerSteps {
 public:
  using Record = std::function<void(int first, int batch, const std::int8_t* r_row, int length_index)>;

  PowerSteps(Context& ctx, const Graph& g, const std::vector<std::uint32_t>& primes, int max_batch,
             const std::function<std::size_t(int group)>& extra, const std::string& keeps,
             Int8PowersReport& report)
      : wall_start_(Clock::now()), ctx_(ctx), g_(g), primes_(primes), report_(report),
        device_(cuda_device_of(ctx)) {
    // The device's context is made by the first call that needs it: here, so that it is
    // timed on its own.
    GEMMKIT_CUDA_CHECK(cudaFree(nullptr));
    report.context_seconds = seconds_since(wall_start_);
    stream_.emplace();
    const std::int64_t n = g.n;
    ld_ = leading_dimension(n);
    if (ld_ > int8_k_limit())  // the products run on the padded order
      fail(ErrorCategory::usage, "the GPU walk engine takes at most " + std::to_string(int8_k_limit()) +
                                     " vertices (int32 sums of int8 products), not " + std::to_string(n));
    const int nq = int(primes.size());
    if (nq < 1 || nq > kCrtMaxModuli)
      fail(ErrorCategory::internal, "the GPU walk engine takes 1 to " + std::to_string(kCrtMaxModuli) + " moduli");
    const std::size_t plane = std::size_t(ld_ * ld_);
    const std::size_t graph_bytes = std::size_t(n + 1) * 8 + g.target.size() * 4 + g.weight.size() * 8;
    auto needed = [&](int group) {
      return graph_bytes + extra(group) + std::size_t(group) * plane * 5 +
             modular_gemm_workspace_bytes(ctx, problem(0, group));
    };
    std::size_t free_bytes = 0, total_bytes = 0;
    GEMMKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t budget = std::size_t(0.9 * double(free_bytes));
    group_ = max_batch > 0 ? std::min(nq, max_batch) : nq;
    while (group_ > 0 && needed(group_) > budget) --group_;
    if (group_ < 1)
      fail(ErrorCategory::out_of_memory,
           "the GPU walk engine needs " + std::to_string(needed(1)) + " bytes of device memory for a " +
               std::to_string(n) + "-vertex graph" + keeps + "; " + std::to_string(free_bytes) + " of " +
               std::to_string(total_bytes) + " are free");
    const cudaStream_t s = stream();
    row_start_ = upload(g.row_start, s);
    target_ = upload(g.target, s);
    weight_ = upload(g.weight, s);
    a_col_ = cuda::DeviceBuffer<std::int8_t>(plane * group_);
    for (int i = 0; i < 2; ++i) {
      r_row_[i] = cuda::DeviceBuffer<std::int8_t>(plane * group_);
      r_col_[i] = cuda::DeviceBuffer<std::int8_t>(plane * group_);
    }
    workspace_ = cuda::DeviceBuffer<std::byte>(modular_gemm_workspace_bytes(ctx, problem(0, group_)));
    report.batches = (nq + group_ - 1) / group_;
  }

  int group() const { return group_; }
  std::int64_t ld() const { return ld_; }
  cudaStream_t stream() const { return stream_->get(); }
  GpuTimes& timer() { return timer_; }
  double seconds() const { return seconds_since(wall_start_); }

  // Runs `steps` for every batch of moduli, queued on stream(); at each record step,
  // record(first, batch, r_row, length_index) queues what the caller does with the residues
  // of moduli first .. first + batch - 1: plane b of the batch at r_row + b ld^2, row-major
  // with leading dimension ld(), valid until the next batch's steps are queued.
  void run(const std::vector<PowerStep>& steps, const Record& record,
           const std::function<void(const std::string&)>& progress) {
    const std::int64_t n = g_.n, ld = ld_;
    const std::size_t plane = std::size_t(ld * ld);
    const int nq = int(primes_.size());
    const cudaStream_t s = stream();
    const Workspace ws{workspace_.data(), workspace_.bytes()};
    const int products_per_batch = int(
        std::count_if(steps.begin(), steps.end(), [](const PowerStep& st) { return st.kind != PowerStep::record; }));
    for (int q0 = 0; q0 < nq; q0 += group_) {
      const int batch = std::min(group_, nq - q0);
      int cur = 0;
      // A mod p for the batch's moduli, centred, in both layouts (padding zero); R starts as A.
      BatchModuli moduli{};
      for (int b = 0; b < batch; ++b) moduli.p[b] = primes_[q0 + b];
      const std::size_t batch_bytes = plane * std::size_t(batch);
      timer_.start(s);
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(a_col_.data(), 0, batch_bytes, s));
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(r_row_[cur].data(), 0, batch_bytes, s));
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(r_col_[cur].data(), 0, batch_bytes, s));
      if (n > 0) {
        const cuda::Geometry geometry{dim3(unsigned(std::min<std::int64_t>((n + 7) / 8, 65535)), unsigned(batch)),
                                      dim3(256)};
        cuda::launch_geometry<scatter_residues>(ctx_, s, geometry, row_start_.data(), target_.data(),
                                                g_.weighted() ? weight_.data() : nullptr, n, ld, moduli,
                                                r_row_[cur].data(), r_col_[cur].data(), a_col_.data());
      }
      timer_.stop(report_.build_seconds);
      if (q0 == 0) {
        // Untimed warm-up on one modulus: a GEMM library picks and loads its kernel on first use.
        ModularGemmProblem w = problem(0, 1);
        w.a = r_row_[cur].data();
        w.b = a_col_.data();
        w.c = r_row_[1 - cur].data();
        modular_gemm(ctx_, w, s, ws);
        GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(s));
        report_.setup_seconds += seconds_since(wall_start_) - report_.context_seconds;
      }
      int done = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const PowerStep& step = steps[i];
        if (step.kind == PowerStep::record) {
          record(q0, batch, r_row_[cur].data(), step.length_index);
          continue;
        }
        if (progress)
          progress("primes " + std::to_string(q0 + 1) + "-" + std::to_string(q0 + batch) + "/" +
                   std::to_string(nq) + ": int8 product " + std::to_string(++done) + "/" +
                   std::to_string(products_per_batch));
        // The column-major copy of the result is only read by a later squaring.
        bool column_read = false;
        for (std::size_t j = i + 1; j < steps.size(); ++j)
          if (steps[j].kind != PowerStep::record) {
            column_read = steps[j].kind == PowerStep::square;
            break;
          }
        ModularGemmProblem p = problem(q0, batch);
        p.a = r_row_[cur].data();
        p.b = step.kind == PowerStep::square ? r_col_[cur].data() : a_col_.data();
        p.c = r_row_[1 - cur].data();
        p.ct = column_read ? r_col_[1 - cur].data() : nullptr;
        timer_.start(s);
        modular_gemm(ctx_, p, s, ws);
        timer_.stop(report_.gemm_seconds);
        cur = 1 - cur;
        ++report_.gemms;
      }
    }
  }

 private:
  ModularGemmProblem problem(int first, int batch) const {
    ModularGemmProblem p;
    p.m = p.n = p.k = ld_;
    p.moduli.assign(primes_.begin() + first, primes_.begin() + first + batch);
    p.lda = p.ldb = p.ldc = p.ldct = ld_;
    p.stride_a = p.stride_b = p.stride_c = p.stride_ct = ld_ * ld_;
    return p;
  }

  Clock::time_point wall_start_;
  Context& ctx_;
  const Graph& g_;
  const std::vector<std::uint32_t>& primes_;
  Int8PowersReport& report_;
  cuda::DeviceScope device_;
  std::optional<OwnStream> stream_;  // made on the device, after its context
  std::int64_t ld_ = 0;
  int group_ = 0;
  cuda::DeviceBuffer<std::int64_t> row_start_, weight_;
  cuda::DeviceBuffer<std::int32_t> target_;
  cuda::DeviceBuffer<std::int8_t> a_col_, r_row_[2], r_col_[2];
  cuda::DeviceBuffer<std::byte> workspace_;  // cudaMalloc: 256-byte aligned
  GpuTimes timer_;
};

// Queues the rebuild of the counts R(rows, cols) from residue planes (plane q of modulus q at
// residues + q plane_stride, leading dimension res_ld; row_index / col_index: device gathers
// or null) into `limbs` words each at out, row by row (ld_out = cols).
void queue_rebuild(Context& ctx, const std::vector<std::uint32_t>& moduli, const std::int8_t* residues,
                   std::int64_t res_ld, std::int64_t plane_stride, const std::int64_t* row_index,
                   const std::int64_t* col_index, std::int64_t rows, std::int64_t cols, int limbs,
                   std::uint64_t* out, cudaStream_t s) {
  CrtProblem p;
  p.rows = rows;
  p.cols = cols;
  p.moduli = moduli;
  p.residues = residues;
  p.ld = res_ld;
  p.plane_stride = plane_stride;
  p.row_index = row_index;
  p.col_index = col_index;
  p.out = out;
  p.ld_out = cols;
  p.limbs = limbs;
  crt_rebuild(ctx, p, s);
}

}  // namespace

Int8PowersReport gpu_int8_powers(Context& ctx, const Graph& g, const std::vector<std::uint32_t>& primes,
                                 const std::vector<PowerStep>& steps,
                                 const std::vector<std::int64_t>& rows,
                                 const std::vector<std::int64_t>& cols, int limbs, std::uint64_t* out,
                                 const std::function<void(const std::string&)>& progress, int max_batch) {
  const std::int64_t n = g.n;
  const int nq = int(primes.size());
  if (limbs < 1) fail(ErrorCategory::internal, "the GPU walk engine writes at least one limb per count");
  int lengths = 0;
  for (const PowerStep& s : steps)
    if (s.kind == PowerStep::record) lengths = std::max(lengths, s.length_index + 1);
  const std::int64_t row_count = std::int64_t(rows.size()), col_count = std::int64_t(cols.size());
  const std::size_t per_length = std::size_t(row_count * col_count);
  const std::size_t table_words = per_length * std::size_t(limbs);
  const bool gather = !is_identity(rows, n) || !is_identity(cols, n);

  // Device memory besides the power steps': the gathers, the finished table (two when
  // lengths overlap), and when the moduli take several batches the residues of every count
  // asked for, kept for the rebuild after the last batch.
  const std::size_t table_count = lengths > 1 ? 2 : 1;
  auto extra = [&](int group) {
    const std::size_t kept = group < nq ? std::size_t(lengths) * std::size_t(nq) * per_length : 0;
    return (rows.size() + cols.size()) * 8 + table_count * table_words * 8 + kept;
  };
  Int8PowersReport report;
  PowerSteps engine(ctx, g, primes, max_batch, extra,
                    " and a " + std::to_string(row_count) + " x " + std::to_string(col_count) + " table of " +
                        std::to_string(lengths) + " length(s)",
                    report);
  const cudaStream_t s = engine.stream();
  const int group = engine.group();
  const std::int64_t ld = engine.ld();
  GpuTimes& timer = engine.timer();
  // Row and column indices: read by the rebuild's gathers, and by the residue gathers of
  // several batches (which read them even when they are every vertex in order).
  const bool indexed = gather || group < nq;
  const cuda::DeviceBuffer<std::int64_t> d_rows = indexed ? upload(rows, s) : cuda::DeviceBuffer<std::int64_t>();
  const cuda::DeviceBuffer<std::int64_t> d_cols = indexed ? upload(cols, s) : cuda::DeviceBuffer<std::int64_t>();
  cuda::DeviceBuffer<std::uint64_t> table[2];
  for (std::size_t i = 0; i < table_count; ++i) table[i] = cuda::DeviceBuffer<std::uint64_t>(table_words);
  cuda::DeviceBuffer<std::int8_t> kept(group < nq ? std::size_t(lengths) * std::size_t(nq) * per_length : 0);

  // Made at the first copy, after the work is queued: pinning its buffers overlaps the GPU's.
  std::optional<TableCopier> copier;
  Event table_ready[2];
  int pending = -1;  // a length whose table is rebuilt on the device and not yet copied
  // Copies the pending table to the host (waiting for its rebuild, not counted as copying).
  auto drain = [&] {
    if (pending < 0) return;
    const int buffer = pending % int(table_count);
    if (!copier) {
      const auto t = Clock::now();
      copier.emplace(table_words * 8);
      report.setup_seconds += seconds_since(t);
    }
    GEMMKIT_CUDA_CHECK(cudaEventSynchronize(table_ready[buffer].get()));
    const auto t = Clock::now();
    if (progress) progress("copying the counts of length index " + std::to_string(pending) + " to the host");
    copier->copy(table[buffer].data(), out + std::size_t(pending) * table_words, table_words * 8,
                 table_ready[buffer].get());
    report.copy_seconds += seconds_since(t);
    pending = -1;
  };
  // Rebuilds the counts of length index li from residue planes into a table on the device,
  // after copying the one before it out of the buffer it reuses.
  auto rebuild = [&](int li, const std::int8_t* residues, std::int64_t res_ld, std::int64_t plane_stride,
                     const std::int64_t* row_index, const std::int64_t* col_index) {
    if (progress) progress("rebuilding the counts of length index " + std::to_string(li));
    drain();
    const int buffer = li % int(table_count);
    timer.start(s);
    queue_rebuild(ctx, primes, residues, res_ld, plane_stride, row_index, col_index, row_count, col_count, limbs,
                  table[buffer].data(), s);
    timer.stop(report.crt_seconds);
    GEMMKIT_CUDA_CHECK(cudaEventRecord(table_ready[buffer].get(), s));
    pending = li;
  };

  engine.run(
      steps,
      [&](int q0, int batch, const std::int8_t* r_row, int li) {
        if (group == nq) {
          rebuild(li, r_row, ld, ld * ld, gather ? d_rows.data() : nullptr, gather ? d_cols.data() : nullptr);
          return;
        }
        timer.start(s);
        cuda::launch_geometry<gather_residues>(
            ctx, s, cuda::Geometry{dim3(1024), dim3(256)}, r_row, ld, batch, d_rows.data(), row_count,
            d_cols.data(), col_count,
            kept.data() + (std::size_t(li) * std::size_t(nq) + std::size_t(q0)) * per_length);
        timer.stop(report.crt_seconds);
      },
      progress);
  if (group < nq)
    for (int li = 0; li < lengths; ++li)
      rebuild(li, kept.data() + std::size_t(li) * std::size_t(nq) * per_length, col_count,
              std::int64_t(per_length), nullptr, nullptr);
  drain();
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  timer.collect();
  report.total_seconds = engine.seconds();
  return report;
}

Int8PowersReport gpu_int8_power_planes(Context& ctx, const Graph& g, const std::vector<std::uint32_t>& primes,
                                       int length, std::int8_t* planes, PlanesIn where,
                                       const std::function<void(const std::string&)>& progress, int max_batch) {
  if (length < 1)
    fail(ErrorCategory::usage, "walk length " + std::to_string(length) + ": must be at least 1");
  Int8PowersReport report;
  PowerSteps engine(ctx, g, primes, max_batch, [](int) { return std::size_t(0); }, "", report);
  const cudaStream_t s = engine.stream();
  const std::int64_t n = g.n, ld = engine.ld();
  const cudaMemcpyKind kind = where == PlanesIn::host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  engine.run(
      power_steps(length),
      [&](int q0, int batch, const std::int8_t* r_row, int) {
        if (n == 0) return;
        // Each plane's n x n corner, without the padding, as plane q0 + b of the caller's.
        for (int b = 0; b < batch; ++b)
          GEMMKIT_CUDA_CHECK(cudaMemcpy2DAsync(planes + std::size_t(q0 + b) * std::size_t(n * n), std::size_t(n),
                                               r_row + std::size_t(b) * std::size_t(ld * ld), std::size_t(ld),
                                               std::size_t(n), std::size_t(n), kind, s));
      },
      progress);
  GEMMKIT_CUDA_CHECK(cudaStreamSynchronize(s));
  engine.timer().collect();
  report.total_seconds = engine.seconds();
  return report;
}

Int8PowersReport gpu_counts_from_planes(Context& ctx, const std::vector<std::uint32_t>& primes,
                                        const ResiduePlanes& planes, int limbs, std::uint64_t* out) {
  const auto wall_start = Clock::now();
  Int8PowersReport report;
  const cuda::DeviceScope device(cuda_device_of(ctx));
  const std::size_t words = std::size_t(planes.rows * planes.cols) * std::size_t(limbs);
  if (words == 0) return report;
  const OwnStream stream;
  const cudaStream_t s = stream.get();
  const cuda::DeviceBuffer<std::uint64_t> table(words);
  GpuTimes timer;
  timer.start(s);
  queue_rebuild(ctx, primes, planes.data, planes.ld, planes.plane_stride, nullptr, nullptr, planes.rows, planes.cols,
                limbs, table.data(), s);
  timer.stop(report.crt_seconds);
  const Event ready;
  GEMMKIT_CUDA_CHECK(cudaEventRecord(ready.get(), s));
  TableCopier copier(words * 8);
  const auto t = Clock::now();
  copier.copy(table.data(), out, words * 8, ready.get());
  report.copy_seconds = seconds_since(t);
  timer.collect();
  report.total_seconds = seconds_since(wall_start);
  return report;
}

GemmReferenceTimes gpu_reference_gemm_times(std::int64_t n) {
  // Like the engine's work: back-to-back GEMMs over several sets of operands (more than L2
  // holds), so that the card runs as hot as it does there; seconds per GEMM, the median of
  // three such runs.
  const std::int64_t ld = leading_dimension(n);
  const std::size_t count = std::size_t(ld * ld);
  constexpr int kSets = 4, kGemms = 24;
  cuda::DeviceBuffer<std::int8_t> a(count * kSets), b(count * kSets);
  cuda::DeviceBuffer<int> c(count * kSets);
  // Residue-like random data: the card's clock, and so the speed, depends on the data.
  fill_residue_like<<<1024, 256>>>(a.data(), std::int64_t(a.size()), 1);
  fill_residue_like<<<1024, 256>>>(b.data(), std::int64_t(b.size()), 2);
  cuda::check_launch("fill_residue_like");
  auto per_gemm = [&](auto&& launch) {
    const auto gemms = [&] {
      for (int i = 0; i < kGemms; ++i) launch(std::size_t(i % kSets));
    };
    return median_of(cuda::time_on_device(nullptr, fixed_runs(1, 3), gemms)) / kGemms;
  };
  GemmReferenceTimes t;
  // The references' own context: its cuBLAS handle on the default stream, with a workspace.
  Context ctx(Backend::cuda);
  const cuda::CublasCall cublas(ctx, nullptr, ctx.workspace(nullptr, cuda::cublas_workspace_bytes(ctx)));
  cublasHandle_t h = cublas.get();
  t.int8_seconds = per_gemm([&](std::size_t set) {
    int8_gemm(h, a.data() + set * count, b.data() + set * count, c.data() + set * count, ld);
  });
  cuda::DeviceBuffer<double> da(count), db(count), dc(count);
  fill_residue_like<<<1024, 256>>>(da.data(), std::int64_t(count), 3);
  fill_residue_like<<<1024, 256>>>(db.data(), std::int64_t(count), 4);
  const double one = 1.0, zero = 0.0;
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetMathMode)(h, CUBLAS_DEFAULT_MATH));
  t.fp64_seconds = per_gemm([&](std::size_t) {
    GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasDgemm)(h, CUBLAS_OP_N, CUBLAS_OP_N, int(ld), int(ld), int(ld), &one,
                                     da.data(), int(ld), db.data(), int(ld), &zero, dc.data(), int(ld)));
  });
  return t;
}

}  // namespace gemmkit::walks_detail

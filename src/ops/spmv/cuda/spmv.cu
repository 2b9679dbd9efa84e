// The SpMV ladder on the device: launchers for every rung on the caller's stream and
// workspace (nothing allocated, nothing kept between calls), the host API's device path
// (upload with row offsets narrowed to 32 bits when nnz fits), and the benchmark that times
// every rung beside cuSPARSE and the device copy in one process.
#include <algorithm>
#include <cmath>
#include <limits>
#include <functional>
#include <memory>
#include <optional>

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/device_timing.hpp"
#include "launch/explain_launch.hpp"
#include "ops/spmv/cuda/01_scalar.cuh"
#include "ops/spmv/cuda/02_vector.cuh"
#include "ops/spmv/cuda/03_vector_groups.cuh"
#include "ops/spmv/cuda/04_merge_path.cuh"
#include "ops/spmv/cuda/spmv_cusparse.hpp"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/sparse.hpp"
#include "ops/cuda_entry.hpp"
#include "ops/spmv/spmv_device.hpp"

namespace gemmkit {
namespace {

using cuda::DeviceBuffer;
using cuda::LaunchEmit;
using cuda::PlanEmit;
constexpr int kBlock = 256;           // threads per block of every rung
constexpr int kDefaultItems = 9;      // merge_path items per thread (odd: fewer bank conflicts)

// The matrix as the launchers see it: typed views of device arrays.
template <class T, class Offset>
struct Csr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  const Offset* offsets = nullptr;
  const std::int32_t* col_indices = nullptr;
  const T* values = nullptr;
  const T* x = nullptr;
  T* y = nullptr;
};

template <class T, class Offset>
Csr<T, Offset> typed(const SpmvProblem& p) {
  return {p.rows, p.cols, p.nnz, static_cast<const Offset*>(p.row_offsets), p.col_indices,
          static_cast<const T*>(p.values), static_cast<const T*>(p.x), static_cast<T*>(p.y)};
}

// Calls f(T{}, Offset{}) for the problem's value and offset types.
template <class F>
decltype(auto) with_types(const SpmvProblem& p, F&& f) {
  if (p.dtype == DType::f32)
    return p.offsets_64bit ? f(float{}, std::int64_t{}) : f(float{}, std::int32_t{});
  return p.offsets_64bit ? f(double{}, std::int64_t{}) : f(double{}, std::int32_t{});
}

struct Variant {
  enum class Kind { scalar, vector, groups, merge, cusparse } kind = Kind::scalar;
  std::string name;
  int group = 0;                  // groups: threads per row
  int items = kDefaultItems;      // merge: items per thread
  bool streaming = false;         // merge: values and columns loaded evict-first
  bool partition_timed = false;   // merge (benchmark): the partition counted in every run
  bool alg2 = false;              // cusparse: CSR_ALG2 instead of the default
};

unsigned grid_for(std::int64_t threads) {
  const std::int64_t blocks = (threads + kBlock - 1) / kBlock;
  if (blocks > std::numeric_limits<int>::max())
    fail(ErrorCategory::usage, "spmv: the matrix has too many rows for one launch of this kernel");
  return unsigned(std::max<std::int64_t>(blocks, 1));
}

// merge_path's workspace: the partition (tiles + 1 rows and nonzeros) and the carries.
struct MergeLayout {
  std::int64_t tiles = 0;
  std::size_t tile_row = 0, tile_nz = 0, carry_row = 0, carry_sum = 0, bytes = 0;  // offsets
  MergeLayout(std::int64_t rows, std::int64_t nnz, int items, std::size_t value_size) {
    const std::int64_t tile_items = std::int64_t(kBlock) * items;
    tiles = (rows + nnz + tile_items - 1) / tile_items;
    const std::size_t edges = std::size_t(tiles + 1) * sizeof(std::int64_t);
    const std::size_t carries = std::size_t(std::max<std::int64_t>(tiles, 1));
    tile_nz = workspace_aligned(edges);
    carry_row = tile_nz + workspace_aligned(edges);
    carry_sum = carry_row + workspace_aligned(carries * sizeof(std::int64_t));
    bytes = carry_sum + workspace_aligned(carries * value_size);
  }
};

template <class T>
MergeLayout merge_layout(const SpmvProblem& p, const Variant& v) {
  return MergeLayout(p.rows, p.nnz, v.items, sizeof(T));
}

// After a launch that is run, not described.
template <class Emit>
void check_emitted() {
  if constexpr (std::is_same_v<Emit, LaunchEmit>) GEMMKIT_CUDA_CHECK(cudaGetLastError());
}

// The launches below go through `emit`: LaunchEmit queues them, PlanEmit describes them
// (launch/explain_launch.hpp).
template <class T, class Offset, class Emit>
void merge_partition(const Csr<T, Offset>& a, const MergeLayout& m, int items, unsigned char* ws, const Emit& emit) {
  const std::int64_t tile_items = std::int64_t(kBlock) * items;
  emit.template launch<cuda::spmv::merge_path_partition_kernel<Offset>>(
      grid_for(m.tiles + 1), kBlock, 0, "the partition of the merge path",
      "thread i = blockIdx.x * blockDim.x + threadIdx.x finds, by binary search, the row and nonzero where tile i "
      "(256 x items items of row ends and nonzeros) starts",
      a.rows, a.nnz, a.offsets, tile_items, m.tiles, reinterpret_cast<std::int64_t*>(ws + m.tile_row),
      reinterpret_cast<std::int64_t*>(ws + m.tile_nz));
  check_emitted<Emit>();
}

template <class T, class Offset, int ITEMS, bool kStreaming, class Emit>
void merge_launch(const Csr<T, Offset>& a, const MergeLayout& m, unsigned char* ws, const Emit& emit) {
  if (m.tiles > std::numeric_limits<int>::max())
    fail(ErrorCategory::usage, "spmv: the matrix has too many nonzeros for one merge_path launch");
  auto* tile_row = reinterpret_cast<std::int64_t*>(ws + m.tile_row);
  auto* tile_nz = reinterpret_cast<std::int64_t*>(ws + m.tile_nz);
  auto* carry_row = reinterpret_cast<std::int64_t*>(ws + m.carry_row);
  auto* carry_sum = reinterpret_cast<T*>(ws + m.carry_sum);
  emit.template launch<cuda::spmv::merge_path_kernel<T, Offset, kBlock, ITEMS, kStreaming>>(
      unsigned(m.tiles), kBlock, 0, "the product, tile by tile",
      "block b consumes tile b of the merge path: 256 x items consecutive items (row ends and nonzeros), thread t "
      "the items t * items .. of it; rows that end inside the tile are written to y, the sum of the row the tile "
      "ends in is carried",
      a.rows, a.nnz, a.offsets, a.col_indices, a.values, a.x, a.y, tile_row, tile_nz, carry_row, carry_sum);
  check_emitted<Emit>();
  emit.template launch<cuda::spmv::merge_path_fixup_kernel<T>>(
      grid_for(m.tiles), kBlock, 0, "the carries into y",
      "thread i = blockIdx.x * blockDim.x + threadIdx.x adds tile i's carried sum into y at its row",
      m.tiles, a.rows, carry_row, carry_sum, a.y);
}

template <class T, class Offset, class Emit>
void merge_run(const Csr<T, Offset>& a, const MergeLayout& m, const Variant& v, unsigned char* ws, const Emit& emit) {
  if (m.tiles == 0) return;
  switch (v.items * 2 + v.streaming) {
    case 5 * 2: return merge_launch<T, Offset, 5, false>(a, m, ws, emit);
    case 7 * 2: return merge_launch<T, Offset, 7, false>(a, m, ws, emit);
    case 7 * 2 + 1: return merge_launch<T, Offset, 7, true>(a, m, ws, emit);
    case 9 * 2: return merge_launch<T, Offset, 9, false>(a, m, ws, emit);
    case 9 * 2 + 1: return merge_launch<T, Offset, 9, true>(a, m, ws, emit);
    default: fail(ErrorCategory::internal, "merge_path: no instance for " + std::to_string(v.items) + " items");
  }
}

template <class T, class Offset, class Emit>
void launch_groups(const Csr<T, Offset>& a, int g, const Emit& emit) {
  const unsigned grid = grid_for(a.rows * g);
  const std::string text = "a group of " + std::to_string(g) + " threads per row: row = (blockIdx.x * blockDim.x + "
                           "threadIdx.x) / " + std::to_string(g) + ", the group's threads take the row's nonzeros in "
                           "turn, add by shuffles, and the first writes y[row]";
  const auto args = [&](auto kernel) {
    emit.template launch<decltype(kernel)::value>(grid, kBlock, 0, "the product", text.c_str(), a.rows, a.offsets,
                                                  a.col_indices, a.values, a.x, a.y);
  };
  using cuda::spmv::vector_groups_kernel;
  switch (g) {
    case 2: args(std::integral_constant<decltype(&vector_groups_kernel<T, Offset, 2>), vector_groups_kernel<T, Offset, 2>>{}); break;
    case 4: args(std::integral_constant<decltype(&vector_groups_kernel<T, Offset, 4>), vector_groups_kernel<T, Offset, 4>>{}); break;
    case 8: args(std::integral_constant<decltype(&vector_groups_kernel<T, Offset, 8>), vector_groups_kernel<T, Offset, 8>>{}); break;
    case 16: args(std::integral_constant<decltype(&vector_groups_kernel<T, Offset, 16>), vector_groups_kernel<T, Offset, 16>>{}); break;
    case 32: args(std::integral_constant<decltype(&vector_groups_kernel<T, Offset, 32>), vector_groups_kernel<T, Offset, 32>>{}); break;
    default: fail(ErrorCategory::usage, "vector_groups: group size " + std::to_string(g) + " is not 2, 4, 8, 16 or 32");
  }
}

// cuSPARSE's workspace: the column indices widened to 64 bits when the offsets are (it
// wants one index type), then its own buffer.
struct CusparseLayout {
  std::size_t wide_cols = 0, buffer = 0, buffer_bytes = 0, bytes = 0;  // offsets and sizes
};

bool cusparse_runs(const SpmvProblem& p) { return p.rows > 0 && p.cols > 0 && p.nnz > 0; }

// The descriptors of the problem; `cols` is what cuSPARSE reads as column indices.
std::unique_ptr<cuda::CusparseSpmv> cusparse_product(const SpmvProblem& p, const void* cols, bool alg2) {
  return std::make_unique<cuda::CusparseSpmv>(p.rows, p.cols, p.nnz, p.row_offsets, cols, p.offsets_64bit,
                                              p.values, p.dtype == DType::f64, p.x, p.y, alg2);
}

CusparseLayout cusparse_layout(const SpmvProblem& p, bool alg2, const Context& ctx) {
  CusparseLayout l;
  if (!cusparse_runs(p)) return l;
  l.buffer = p.offsets_64bit ? workspace_aligned(std::size_t(p.nnz) * sizeof(std::int64_t)) : 0;
  const auto product = cusparse_product(p, p.col_indices, alg2);
  // The size query needs the context's handle, made on first use: a cache, logically const.
  const cuda::CusparseCall call(const_cast<Context&>(ctx), nullptr);
  l.buffer_bytes = product->buffer_bytes(call.get());
  l.bytes = l.buffer + workspace_aligned(l.buffer_bytes);
  return l;
}

__global__ void widen_kernel(const std::int32_t* narrow, std::int64_t* wide, std::int64_t count) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    wide[i] = narrow[i];
}

// The column indices cuSPARSE reads: the matrix's own, or with 64-bit offsets a widened copy
// made in the workspace on `s`.
const void* cusparse_columns(const SpmvProblem& p, const CusparseLayout& l, unsigned char* ws, cudaStream_t s) {
  if (!p.offsets_64bit) return p.col_indices;
  auto* wide = reinterpret_cast<std::int64_t*>(ws + l.wide_cols);
  widen_kernel<<<unsigned(std::min<std::int64_t>((p.nnz + kBlock - 1) / kBlock, 4096)), kBlock, 0, s>>>(
      p.col_indices, wide, p.nnz);
  GEMMKIT_CUDA_CHECK(cudaGetLastError());
  return wide;
}

// y = A x through `emit` (merge_path partitions first when the variant says so); cuSPARSE,
// whose launches are its own, only when run.
template <class T, class Offset, class Emit>
void launch_variant(const SpmvProblem& p, const Variant& v, const Context* ctx, unsigned char* ws, const Emit& emit) {
  const Csr<T, Offset> a = typed<T, Offset>(p);
  if (a.rows == 0) return;
  switch (v.kind) {
    case Variant::Kind::scalar:
      emit.template launch<cuda::spmv::scalar_kernel<T, Offset>>(
          grid_for(a.rows), kBlock, 0, "the product",
          "one row per thread: row = blockIdx.x * blockDim.x + threadIdx.x, y[row] = its nonzeros times x at their "
          "columns, summed in order",
          a.rows, a.offsets, a.col_indices, a.values, a.x, a.y);
      break;
    case Variant::Kind::vector:
      emit.template launch<cuda::spmv::vector_kernel<T, Offset>>(
          grid_for(a.rows * 32), kBlock, 0, "the product",
          "a warp per row: row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane l takes the row's nonzeros l, "
          "l + 32, ..., the warp adds by shuffles and lane 0 writes y[row]",
          a.rows, a.offsets, a.col_indices, a.values, a.x, a.y);
      break;
    case Variant::Kind::groups: launch_groups(a, v.group, emit); break;
    case Variant::Kind::merge: {
      const MergeLayout m = merge_layout<T>(p, v);
      if (v.partition_timed) merge_partition(a, m, v.items, ws, emit);
      merge_run(a, m, v, ws, emit);
      break;
    }
    case Variant::Kind::cusparse: {
      if constexpr (std::is_same_v<Emit, LaunchEmit>) {
        const cudaStream_t s = emit.stream;
        if (!cusparse_runs(p)) {  // nothing to multiply: y = 0
          GEMMKIT_CUDA_CHECK(cudaMemsetAsync(a.y, 0, std::size_t(a.rows) * sizeof(T), s));
          return;
        }
        const CusparseLayout l = cusparse_layout(p, v.alg2, *ctx);
        const void* cols = cusparse_columns(p, l, ws, s);
        const auto product = cusparse_product(p, cols, v.alg2);
        const cuda::CusparseCall call(const_cast<Context&>(*ctx), s);
        product->run(call.get(), ws + l.buffer);
      }
      return;
    }
  }
  check_emitted<Emit>();
}

std::size_t variant_workspace(const SpmvProblem& p, const Variant& v, const Context& ctx) {
  if (v.kind == Variant::Kind::merge)
    return p.dtype == DType::f32 ? merge_layout<float>(p, v).bytes : merge_layout<double>(p, v).bytes;
  if (v.kind == Variant::Kind::cusparse) return cusparse_layout(p, v.alg2, ctx).bytes;
  return 0;
}

Variant variant_for(std::string_view kernel, double mean_row_length, int group_size) {
  Variant v;
  v.name = std::string(kernel);
  if (kernel == "scalar") v.kind = Variant::Kind::scalar;
  else if (kernel == "vector") v.kind = Variant::Kind::vector;
  else if (kernel == "vector_groups") {
    v.kind = Variant::Kind::groups;
    v.group = group_size ? group_size : spmv_group_size(mean_row_length);
  } else if (kernel == "merge_path") {
    v.kind = Variant::Kind::merge;
    v.streaming = true;  // measured: 9 items, evict-first loads (docs/spmv.md)
    v.partition_timed = true;  // a call partitions its matrix
  }
  else if (kernel == "cusparse") v.kind = Variant::Kind::cusparse;
  else if (kernel == "cusparse_alg2") {
    v.kind = Variant::Kind::cusparse;
    v.alg2 = true;
  } else {
    fail(ErrorCategory::usage, "unknown spmv kernel '" + std::string(kernel) + "' (see gemmkit list --operation spmv)");
  }
  return v;
}

Variant variant_for(std::string_view kernel, const SpmvProblem& p) {
  return variant_for(kernel, p.rows ? double(p.nnz) / double(p.rows) : 0.0, p.group_size);
}

template <class T>
void check_x(const CsrMatrix<T>& a, const std::vector<T>& x) {
  if (std::int64_t(x.size()) != a.cols)
    fail(ErrorCategory::usage, "spmv: x has " + std::to_string(x.size()) + " entries but the matrix has " +
                                   std::to_string(a.cols) + " columns");
}

// The CSR arrays on the device, row offsets narrowed to Offset.
template <class T, class Offset>
struct DeviceCsr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer<Offset> offsets;
  DeviceBuffer<std::int32_t> col_indices;
  DeviceBuffer<T> values;
  explicit DeviceCsr(const CsrMatrix<T>& a)
      : rows(a.rows), cols(a.cols), nnz(a.nnz()), offsets(a.row_offsets.size()),
        col_indices(a.col_indices.size()), values(a.values.size()) {
    const std::vector<Offset> narrow(a.row_offsets.begin(), a.row_offsets.end());
    offsets.copy_from_host(narrow.data(), narrow.size());
    if (nnz) {
      col_indices.copy_from_host(a.col_indices.data(), a.col_indices.size());
      values.copy_from_host(a.values.data(), a.values.size());
    }
  }
  std::int64_t bytes() const { return std::int64_t(offsets.bytes() + col_indices.bytes() + values.bytes()); }
  SpmvProblem problem(const T* x, T* y) const {
    SpmvProblem p;
    p.dtype = dtype_of<T>;
    p.rows = rows;
    p.cols = cols;
    p.nnz = nnz;
    p.row_offsets = offsets.data();
    p.offsets_64bit = sizeof(Offset) == 8;
    p.col_indices = col_indices.data();
    p.values = values.data();
    p.x = x;
    p.y = y;
    return p;
  }
};

template <class T, class Offset>
SpmvHostResult<T> run_once(Context& ctx, const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o) {
  const cuda::DeviceScope scope(ctx.device());
  const DeviceCsr<T, Offset> d(a);
  DeviceBuffer<T> dx(x.size()), dy(std::size_t(a.rows));
  if (!x.empty()) dx.copy_from_host(x.data(), x.size());
  SpmvProblem p = d.problem(dx.data(), dy.data());
  p.stats = csr_stats(a);
  p.group_size = o.group_size;
  SpmvHostResult<T> out;
  out.kernel = spmv(ctx, p, nullptr, o.kernel).name;
  out.backend = Backend::cuda;
  out.y.resize(std::size_t(a.rows));
  if (!out.y.empty()) dy.copy_to_host(out.y.data(), out.y.size());  // waits: a fault surfaces here
  return out;
}

// max_i |y_i - ref_i| / ((len_i + 1) eps sum_j |a_ij x_j|); an exact zero row must be exactly 0.
template <class T>
double max_scaled_error(const CsrMatrix<T>& a, const std::vector<T>& y, const std::vector<T>& ref,
                        const std::vector<long double>& abs_sums) {
  double worst = 0;
  const long double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const long double diff = std::fabs(static_cast<long double>(y[r]) - static_cast<long double>(ref[r]));
    const long double bound = (a.row_length(r) + 1) * eps * abs_sums[r];
    double e;
    if (!(diff == diff)) e = std::numeric_limits<double>::infinity();  // NaN
    else if (bound == 0) e = diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
    else e = double(diff / bound);
    worst = std::max(worst, e);
  }
  return worst;
}

template <class T, class Offset>
BenchReport bench_impl(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& ref,
                       int warmup, int reps, bool tune) {
  BenchReport report;
  report.operation = "spmv";
  report.backend = Backend::cuda;
  report.dtype = dtype_of<T>;
  const CsrStats stats = csr_stats(a);
  report.spmv = SpmvBenchFacts{sizeof(Offset) == 8, choose_spmv_kernel(stats)};
  const std::vector<long double> abs_sums = spmv_abs_row_sums(a, x);
  const DeviceCsr<T, Offset> d(a);
  DeviceBuffer<T> dx(x.size()), dy(std::size_t(a.rows));
  if (!x.empty()) dx.copy_from_host(x.data(), x.size());
  report.bytes = double(d.bytes() + std::int64_t(dx.bytes() + dy.bytes()));
  const auto row = [&](const std::string& kernel) {
    BenchRow r;
    r.operation = report.operation;
    r.kernel = kernel;
    r.size = std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", " + std::to_string(a.nnz()) + " nonzeros";
    r.dtype = report.dtype;
    r.unit = RateUnit::gbs;
    return r;
  };
  const SpmvProblem problem = d.problem(dx.data(), dy.data());
  Context ctx(Backend::cuda);

  const auto variant = [&](const char* kernel) { return variant_for(kernel, stats.mean_row_length, 0); };
  std::vector<Variant> variants;
  for (const char* k : {"scalar", "vector", "vector_groups", "merge_path"}) variants.push_back(variant(k));
  if (tune) {
    for (int g : {2, 4, 8, 16, 32}) {
      Variant v = variant_for("vector_groups", stats.mean_row_length, g);
      v.name = "vector_groups/g" + std::to_string(g);
      variants.push_back(v);
    }
    for (int items : {5, 7, 9})
      for (bool streaming : {false, true}) {
        if (items == 5 && streaming) continue;
        Variant v = variant("merge_path");
        v.items = items;
        v.streaming = streaming;
        v.name = "merge_path/i" + std::to_string(items) + (streaming ? "cs" : "");
        variants.push_back(v);
      }
  }
  // merge_path timed without its partition (done once per matrix, like cuSPARSE's
  // preprocess), and with it: what one device-API call costs.
  for (Variant& v : variants)
    if (v.kind == Variant::Kind::merge) v.partition_timed = false;
  if (tune) {
    Variant v = variant("merge_path");
    v.name = "merge_path+partition";
    variants.push_back(v);
  }
  variants.push_back(variant("cusparse"));
  variants.push_back(variant("cusparse_alg2"));

  std::vector<T> y(std::size_t(a.rows));
  for (const Variant& v : variants) {
    BenchRow e = row(v.name);
    e.reference = v.kind == Variant::Kind::cusparse;
    if (v.kind == Variant::Kind::groups) e.note = std::to_string(v.group) + " threads per row";
    try {
      DeviceBuffer<unsigned char> workspace(variant_workspace(problem, v, ctx));
      unsigned char* ws = workspace.data();
      // Outside the timing: the merge partition, cuSPARSE's analysis.
      if (v.kind == Variant::Kind::merge) {
        const MergeLayout m = merge_layout<T>(problem, v);
        if (m.tiles > 0) merge_partition(typed<T, Offset>(problem), m, v.items, ws, LaunchEmit{nullptr});
      }
      // cuSPARSE timed as before: one set of descriptors, analysed once, then the multiply.
      std::function<void()> launch = [&] { launch_variant<T, Offset>(problem, v, &ctx, ws, LaunchEmit{nullptr}); };
      std::unique_ptr<cuda::CusparseSpmv> product;
      if (v.kind == Variant::Kind::cusparse && cusparse_runs(problem)) {
        const CusparseLayout l = cusparse_layout(problem, v.alg2, ctx);
        product = cusparse_product(problem, cusparse_columns(problem, l, ws, nullptr), v.alg2);
        product->preprocess(cuda::CusparseCall(ctx, nullptr).get(), ws + l.buffer);
        launch = [&, l] { product->run(cuda::CusparseCall(ctx, nullptr).get(), ws + l.buffer); };
      }
      if (!y.empty()) GEMMKIT_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));  // NaN: unwritten rows show
      launch();
      GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
      if (!y.empty()) dy.copy_to_host(y.data(), y.size());
      e.check.error = max_scaled_error(a, y, ref, abs_sums);
      e.check.tolerance = 1;
      e.check.passed = e.check.error <= 1.0;
      e.check.check = "max over rows of |y - ref| / ((len + 1) eps sum|a x|)";
      int w = warmup, n = reps;
      if (v.kind == Variant::Kind::scalar && stats.max_row_length > 50000) {
        w = 0;
        n = std::min(reps, 3);
        e.note = std::to_string(n) + " reps only: one thread walks each row, up to " +
                 std::to_string(stats.max_row_length) + " entries";
      }
      record_runs(e, {cuda::time_on_device(nullptr, fixed_runs(w, n), launch), {}}, report.bytes, false);
    } catch (const Error& err) {
      if (err.category() != ErrorCategory::device) throw;
      e.skipped = true;
      e.note = err.what();
      cudaGetLastError();
    }
    report.rows.push_back(e);
  }
  // The reference: the faster cuSPARSE algorithm.
  const BenchRow* reference = nullptr;
  for (const BenchRow& e : report.rows)
    if (e.reference && !e.skipped && (!reference || e.timing.median_s < reference->timing.median_s)) reference = &e;
  if (reference) report.percent_of = reference->kernel;
  BenchRow& copy = report.copy.emplace(row("device_copy"));
  const std::size_t copy_bytes = std::size_t(std::max(report.bytes / 2, 1.0));
  record_runs(copy, {cuda::time_device_copy(nullptr, copy_bytes, fixed_runs(warmup, reps)), {}}, report.bytes, false);
  set_ratios(report.rows.begin(), report.rows.end(), reference, copy.timing.median_s);
  return report;
}

}  // namespace

namespace spmv_detail {

namespace {


std::size_t cuda_workspace_bytes(std::string_view kernel, const SpmvProblem& problem, const Context& ctx) {
  const cuda::DeviceScope scope(ctx.device());
  return variant_workspace(problem, variant_for(kernel, problem), ctx);
}

void cuda_run(std::string_view kernel, const SpmvProblem& problem, const KernelLaunch& launch) {
  const cuda::DeviceScope scope(launch.context.device());
  const Variant v = variant_for(kernel, problem);
  auto* ws = static_cast<unsigned char*>(launch.workspace.data);
  with_types(problem, [&](auto t, auto offset) {
    launch_variant<decltype(t), decltype(offset)>(problem, v, &launch.context, ws, LaunchEmit{launch.stream});
  });
}

std::vector<LaunchPlan> cuda_plans(std::string_view kernel, const SpmvProblem& problem, const LaunchQueries&) {
  const Variant v = variant_for(kernel, problem);
  std::vector<LaunchPlan> out;
  auto* ws = reinterpret_cast<unsigned char*>(std::uintptr_t(1) << 40);  // never dereferenced
  with_types(problem, [&](auto t, auto offset) {
    launch_variant<decltype(t), decltype(offset)>(problem, v, nullptr, ws, PlanEmit{&out});
  });
  return out;
}

SpmvKernel cuda_entry(std::string name, int rung, std::string summary, int auto_priority = 0,
                      KernelRole role = KernelRole::ladder) {
  return detail::cuda_operation_entry<SpmvProblem>(std::move(name), rung, std::move(summary), auto_priority,
                                                   role, 50, cuda_workspace_bytes, cuda_run, cuda_plans);
}

}  // namespace

void register_cuda_kernels(Registry<SpmvProblem>& r) {
  r.add(cuda_entry("scalar", 1, "the teaching texts' kernel: one thread per row"));
  r.add(cuda_entry("vector", 2, "a warp per row, shuffle reduction"));
  r.add(cuda_entry("vector_groups", 3,
                   "2-32 threads per row, chosen from the mean row length (about 4 nonzeros per lane)"));
  // Without statistics "auto" runs merge_path: load-balanced, no row pattern defeats it.
  r.add(cuda_entry("merge_path", 4,
                   "the merged sequence of row ends and nonzeros split evenly over blocks; carries "
                   "fixed up after",
                   10));
  r.add(cuda_entry("cusparse", 0, "reference: cusparseSpMV, CUSPARSE_SPMV_ALG_DEFAULT", 0,
                   KernelRole::reference));
  r.add(cuda_entry("cusparse_alg2", 0, "reference: cusparseSpMV, CUSPARSE_SPMV_CSR_ALG2", 0,
                   KernelRole::reference));
}

template <class T>
SpmvHostResult<T> run_host_on_device(const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o) {
  check_x(a, x);
  if (o.kernel != "auto") spmv_registry().get(o.kernel);  // an unknown name before any device work
  if (a.rows == 0) return {{}, o.kernel == "auto" ? choose_spmv_kernel(csr_stats(a)) : o.kernel, Backend::cuda};
  std::optional<Context> own;
  Context& ctx = o.context ? *o.context : own.emplace(Backend::cuda);
  const bool wide = o.force_64bit_offsets || a.nnz() > std::numeric_limits<std::int32_t>::max();
  return wide ? run_once<T, std::int64_t>(ctx, a, x, o) : run_once<T, std::int32_t>(ctx, a, x, o);
}

template <class T>
BenchReport bench_on_device(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& reference,
                            int warmup, int reps, bool tune) {
  check_x(a, x);
  const bool wide = a.nnz() > std::numeric_limits<std::int32_t>::max();
  return wide ? bench_impl<T, std::int64_t>(a, x, reference, warmup, reps, tune)
              : bench_impl<T, std::int32_t>(a, x, reference, warmup, reps, tune);
}

template SpmvHostResult<float> run_host_on_device<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                                        const SpmvRunOptions&);
template SpmvHostResult<double> run_host_on_device<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                                          const SpmvRunOptions&);
template BenchReport bench_on_device<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                            const std::vector<float>&, int, int, bool);
template BenchReport bench_on_device<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                             const std::vector<double>&, int, int, bool);

}  // namespace spmv_detail
}  // namespace gemmkit

// The SpMV ladder on the device: upload (row offsets narrowed to 32 bits when nnz fits),
// launchers for every rung, one-shot y = A x, and the benchmark that times every rung beside
// cuSPARSE and the device copy in one process.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "cuda/device_buffer.hpp"
#include "cuda/device_timing.hpp"
#include "cuda/kernels/spmv/01_scalar.cuh"
#include "cuda/kernels/spmv/02_vector.cuh"
#include "cuda/kernels/spmv/03_vector_groups.cuh"
#include "cuda/kernels/spmv/04_merge_path.cuh"
#include "cuda/spmv_cusparse.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit {
namespace {

using cuda::DeviceBuffer;
constexpr int kBlock = 256;           // threads per block of every rung
constexpr int kDefaultItems = 9;      // merge_path items per thread (odd: fewer bank conflicts)

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
};

struct Variant {
  enum class Kind { scalar, vector, groups, merge, cusparse } kind = Kind::scalar;
  std::string name;
  int group = 0;                  // groups: threads per row
  int items = kDefaultItems;      // merge: items per thread
  bool streaming = false;         // merge: values and columns loaded evict-first
  bool partition_timed = false;   // merge: the partition counted in every run
  bool alg2 = false;              // cusparse: CSR_ALG2 instead of the default
};

unsigned grid_for(std::int64_t threads) {
  const std::int64_t blocks = (threads + kBlock - 1) / kBlock;
  if (blocks > std::numeric_limits<int>::max())
    fail(ErrorCategory::usage, "spmv: the matrix has too many rows for one launch of this kernel");
  return unsigned(std::max<std::int64_t>(blocks, 1));
}

template <class T, class Offset>
class Runner {
 public:
  Runner(const DeviceCsr<T, Offset>& a, const T* x, T* y) : a_(a), x_(x), y_(y) {}

  // Everything that depends on the matrix alone, outside the timed region: the merge-path
  // partition, cuSPARSE's handle, buffer and preprocess.
  void prepare(const Variant& v) {
    if (v.kind == Variant::Kind::merge) plan(v.items);
    if (v.kind == Variant::Kind::cusparse && a_.nnz > 0 && a_.cols > 0 && !cusparse_[v.alg2]) {
      const void* cols = a_.col_indices.data();
      const bool wide = sizeof(Offset) == 8;
      if (wide && !wide_cols_.size()) {  // cuSPARSE wants one index type: widen the columns
        std::vector<std::int32_t> narrow(std::size_t(a_.nnz));
        a_.col_indices.copy_to_host(narrow.data(), narrow.size());
        const std::vector<std::int64_t> widened(narrow.begin(), narrow.end());
        wide_cols_ = DeviceBuffer<std::int64_t>(widened.size());
        wide_cols_.copy_from_host(widened.data(), widened.size());
      }
      if (wide) cols = wide_cols_.data();
      cusparse_[v.alg2] = std::make_unique<cuda::CusparseSpmv>(
          a_.rows, a_.cols, a_.nnz, a_.offsets.data(), cols, wide, a_.values.data(), sizeof(T) == 8, x_, y_, v.alg2);
    }
  }

  void launch(const Variant& v) {
    if (a_.rows == 0) return;
    const std::int64_t rows = a_.rows;
    const Offset* off = a_.offsets.data();
    const std::int32_t* cols = a_.col_indices.data();
    const T* vals = a_.values.data();
    switch (v.kind) {
      case Variant::Kind::scalar:
        cuda::spmv::scalar_kernel<T, Offset><<<grid_for(rows), kBlock>>>(rows, off, cols, vals, x_, y_);
        break;
      case Variant::Kind::vector:
        cuda::spmv::vector_kernel<T, Offset><<<grid_for(rows * 32), kBlock>>>(rows, off, cols, vals, x_, y_);
        break;
      case Variant::Kind::groups:
        launch_groups(v.group, rows, off, cols, vals);
        break;
      case Variant::Kind::merge: {
        auto& p = plan(v.items);
        if (v.partition_timed) partition(p);
        launch_merge(p, v.streaming);
        break;
      }
      case Variant::Kind::cusparse:
        if (!cusparse_[v.alg2]) {  // nothing to multiply: y = 0
          GEMMKIT_CUDA_CHECK(cudaMemsetAsync(y_, 0, std::size_t(rows) * sizeof(T)));
          return;
        }
        cusparse_[v.alg2]->run();
        return;
    }
    GEMMKIT_CUDA_CHECK(cudaGetLastError());
  }

 private:
  struct MergePlan {
    int items = 0;
    std::int64_t tiles = 0;
    DeviceBuffer<std::int64_t> tile_row, tile_nz, carry_row;
    DeviceBuffer<T> carry_sum;
  };

  MergePlan& plan(int items) {
    auto& p = plans_[items];
    if (!p) {
      p = std::make_unique<MergePlan>();
      p->items = items;
      const std::int64_t tile_items = std::int64_t(kBlock) * items;
      p->tiles = (a_.rows + a_.nnz + tile_items - 1) / tile_items;
      p->tile_row = DeviceBuffer<std::int64_t>(std::size_t(p->tiles) + 1);
      p->tile_nz = DeviceBuffer<std::int64_t>(std::size_t(p->tiles) + 1);
      p->carry_row = DeviceBuffer<std::int64_t>(std::size_t(std::max<std::int64_t>(p->tiles, 1)));
      p->carry_sum = DeviceBuffer<T>(std::size_t(std::max<std::int64_t>(p->tiles, 1)));
      partition(*p);
    }
    return *p;
  }

  void partition(MergePlan& p) {
    const std::int64_t tile_items = std::int64_t(kBlock) * p.items;
    cuda::spmv::merge_path_partition_kernel<Offset><<<grid_for(p.tiles + 1), kBlock>>>(
        a_.rows, a_.nnz, a_.offsets.data(), tile_items, p.tiles, p.tile_row.data(), p.tile_nz.data());
    GEMMKIT_CUDA_CHECK(cudaGetLastError());
  }

  template <int ITEMS, bool kStreaming>
  void merge_launch(MergePlan& p) {
    if (p.tiles > std::numeric_limits<int>::max())
      fail(ErrorCategory::usage, "spmv: the matrix has too many nonzeros for one merge_path launch");
    cuda::spmv::merge_path_kernel<T, Offset, kBlock, ITEMS, kStreaming><<<unsigned(p.tiles), kBlock>>>(
        a_.rows, a_.nnz, a_.offsets.data(), a_.col_indices.data(), a_.values.data(), x_, y_,
        p.tile_row.data(), p.tile_nz.data(), p.carry_row.data(), p.carry_sum.data());
    GEMMKIT_CUDA_CHECK(cudaGetLastError());
    cuda::spmv::merge_path_fixup_kernel<T><<<grid_for(p.tiles), kBlock>>>(
        p.tiles, a_.rows, p.carry_row.data(), p.carry_sum.data(), y_);
  }

  void launch_merge(MergePlan& p, bool streaming) {
    if (p.tiles == 0) return;
    switch (p.items * 2 + streaming) {
      case 5 * 2: return merge_launch<5, false>(p);
      case 7 * 2: return merge_launch<7, false>(p);
      case 7 * 2 + 1: return merge_launch<7, true>(p);
      case 9 * 2: return merge_launch<9, false>(p);
      case 9 * 2 + 1: return merge_launch<9, true>(p);
      default: fail(ErrorCategory::internal, "merge_path: no instance for " + std::to_string(p.items) + " items");
    }
  }

  void launch_groups(int g, std::int64_t rows, const Offset* off, const std::int32_t* cols, const T* vals) {
    const unsigned grid = grid_for(rows * g);
    switch (g) {
      case 2: cuda::spmv::vector_groups_kernel<T, Offset, 2><<<grid, kBlock>>>(rows, off, cols, vals, x_, y_); break;
      case 4: cuda::spmv::vector_groups_kernel<T, Offset, 4><<<grid, kBlock>>>(rows, off, cols, vals, x_, y_); break;
      case 8: cuda::spmv::vector_groups_kernel<T, Offset, 8><<<grid, kBlock>>>(rows, off, cols, vals, x_, y_); break;
      case 16: cuda::spmv::vector_groups_kernel<T, Offset, 16><<<grid, kBlock>>>(rows, off, cols, vals, x_, y_); break;
      case 32: cuda::spmv::vector_groups_kernel<T, Offset, 32><<<grid, kBlock>>>(rows, off, cols, vals, x_, y_); break;
      default: fail(ErrorCategory::usage, "vector_groups: group size " + std::to_string(g) + " is not 2, 4, 8, 16 or 32");
    }
  }

  const DeviceCsr<T, Offset>& a_;
  const T* x_;
  T* y_;
  std::map<int, std::unique_ptr<MergePlan>> plans_;
  std::unique_ptr<cuda::CusparseSpmv> cusparse_[2];
  DeviceBuffer<std::int64_t> wide_cols_;
};

Variant variant_for(const std::string& kernel, const CsrStats& stats, int group_size) {
  Variant v;
  v.name = kernel;
  if (kernel == "scalar") v.kind = Variant::Kind::scalar;
  else if (kernel == "vector") v.kind = Variant::Kind::vector;
  else if (kernel == "vector_groups") {
    v.kind = Variant::Kind::groups;
    v.group = group_size ? group_size : spmv_group_size(stats.mean_row_length);
  } else if (kernel == "merge_path") {
    v.kind = Variant::Kind::merge;
    v.streaming = true;  // measured: 9 items, evict-first loads (docs/spmv.md)
  }
  else if (kernel == "cusparse") v.kind = Variant::Kind::cusparse;
  else if (kernel == "cusparse_alg2") {
    v.kind = Variant::Kind::cusparse;
    v.alg2 = true;
  } else {
    fail(ErrorCategory::usage, "unknown spmv kernel '" + kernel + "' (see gemmkit spmv --list)");
  }
  return v;
}

template <class T>
void check_x(const CsrMatrix<T>& a, const std::vector<T>& x) {
  if (std::int64_t(x.size()) != a.cols)
    fail(ErrorCategory::usage, "spmv: x has " + std::to_string(x.size()) + " entries but the matrix has " +
                                   std::to_string(a.cols) + " columns");
}

template <class T, class Offset>
std::vector<T> run_once(const CsrMatrix<T>& a, const std::vector<T>& x, const Variant& v) {
  const DeviceCsr<T, Offset> d(a);
  DeviceBuffer<T> dx(x.size()), dy(std::size_t(a.rows));
  if (!x.empty()) dx.copy_from_host(x.data(), x.size());
  Runner<T, Offset> runner(d, dx.data(), dy.data());
  runner.prepare(v);
  runner.launch(v);
  GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> y(std::size_t(a.rows));
  if (!y.empty()) dy.copy_to_host(y.data(), y.size());
  return y;
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
SpmvBenchResult bench_impl(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& ref,
                           int warmup, int reps, bool tune) {
  SpmvBenchResult result;
  const CsrStats stats = csr_stats(a);
  result.offsets_64bit = sizeof(Offset) == 8;
  result.auto_kernel = choose_spmv_kernel(stats);
  const std::vector<long double> abs_sums = spmv_abs_row_sums(a, x);
  const DeviceCsr<T, Offset> d(a);
  DeviceBuffer<T> dx(x.size()), dy(std::size_t(a.rows));
  if (!x.empty()) dx.copy_from_host(x.data(), x.size());
  result.device_bytes = d.bytes() + std::int64_t(dx.bytes() + dy.bytes());
  Runner<T, Offset> runner(d, dx.data(), dy.data());

  std::vector<Variant> variants;
  for (const char* k : {"scalar", "vector", "vector_groups", "merge_path"}) variants.push_back(variant_for(k, stats, 0));
  if (tune) {
    for (int g : {2, 4, 8, 16, 32}) {
      Variant v = variant_for("vector_groups", stats, g);
      v.name = "vector_groups/g" + std::to_string(g);
      variants.push_back(v);
    }
    for (int items : {5, 7, 9})
      for (bool streaming : {false, true}) {
        if (items == 5 && streaming) continue;
        Variant v = variant_for("merge_path", stats, 0);
        v.items = items;
        v.streaming = streaming;
        v.name = "merge_path/i" + std::to_string(items) + (streaming ? "cs" : "");
        variants.push_back(v);
      }
    Variant v = variant_for("merge_path", stats, 0);
    v.partition_timed = true;
    v.name = "merge_path+partition";
    variants.push_back(v);
  }
  variants.push_back(variant_for("cusparse", stats, 0));
  variants.push_back(variant_for("cusparse_alg2", stats, 0));

  std::vector<T> y(std::size_t(a.rows));
  for (const Variant& v : variants) {
    SpmvBenchEntry e;
    e.kernel = v.name;
    if (v.kind == Variant::Kind::groups) e.note = std::to_string(v.group) + " threads per row";
    try {
      runner.prepare(v);
      if (!y.empty()) GEMMKIT_CUDA_CHECK(cudaMemset(dy.data(), 0xff, dy.bytes()));  // NaN: unwritten rows show
      runner.launch(v);
      GEMMKIT_CUDA_CHECK(cudaDeviceSynchronize());
      if (!y.empty()) dy.copy_to_host(y.data(), y.size());
      e.max_scaled_error = max_scaled_error(a, y, ref, abs_sums);
      int w = warmup, n = reps;
      if (v.kind == Variant::Kind::scalar && stats.max_row_length > 50000) {
        w = 0;
        n = std::min(reps, 3);
        e.note = std::to_string(n) + " reps only: one thread walks each row, up to " +
                 std::to_string(stats.max_row_length) + " entries";
      }
      const cuda::DeviceTiming t = cuda::time_on_device([&] { runner.launch(v); }, w, n);
      e.median_s = t.median_s;
      e.min_s = t.min_s;
      e.reps = t.reps;
    } catch (const Error& err) {
      if (err.category() != ErrorCategory::device) throw;
      e.skipped = true;
      e.note = err.what();
      cudaGetLastError();
    }
    result.entries.push_back(e);
  }
  const std::size_t copy_bytes = std::size_t(std::max<std::int64_t>(result.device_bytes / 2, 1));
  result.copy_median_s = cuda::time_device_copy(copy_bytes, warmup, reps).median_s;
  return result;
}

}  // namespace

bool spmv_cuda_available() { return cuda_device_available(); }

template <class T>
std::vector<T> spmv_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const SpmvRunOptions& o) {
  check_x(a, x);
  const CsrStats stats = csr_stats(a);
  const std::string kernel = o.kernel == "auto" ? choose_spmv_kernel(stats) : o.kernel;
  const Variant v = variant_for(kernel, stats, o.group_size);
  if (a.rows == 0) return {};
  const bool wide = o.force_64bit_offsets || a.nnz() > std::numeric_limits<std::int32_t>::max();
  return wide ? run_once<T, std::int64_t>(a, x, v) : run_once<T, std::int32_t>(a, x, v);
}

template <class T>
SpmvBenchResult spmv_bench_cuda(const CsrMatrix<T>& a, const std::vector<T>& x, const std::vector<T>& reference,
                                int warmup, int reps, bool tune) {
  check_x(a, x);
  const bool wide = a.nnz() > std::numeric_limits<std::int32_t>::max();
  return wide ? bench_impl<T, std::int64_t>(a, x, reference, warmup, reps, tune)
              : bench_impl<T, std::int32_t>(a, x, reference, warmup, reps, tune);
}

template std::vector<float> spmv_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&, const SpmvRunOptions&);
template std::vector<double> spmv_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&, const SpmvRunOptions&);
template SpmvBenchResult spmv_bench_cuda<float>(const CsrMatrix<float>&, const std::vector<float>&,
                                                const std::vector<float>&, int, int, bool);
template SpmvBenchResult spmv_bench_cuda<double>(const CsrMatrix<double>&, const std::vector<double>&,
                                                 const std::vector<double>&, int, int, bool);

}  // namespace gemmkit

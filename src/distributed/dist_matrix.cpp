// MPI environment, agreed errors, process grids, the block-cyclic distribution, and scatter
// and gather between rank 0 and the grid.
#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <vector>

#include "distributed/dist_common.hpp"
#include "runtime/host_matrix_type.hpp"

namespace gemmkit::dist {

Environment::Environment() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    owned_ = true;
  }
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized) MPI_Finalize();
}

void collective(MPI_Comm comm, const std::function<void()>& step) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ErrorCategory category = ErrorCategory::internal;
  std::string message;
  bool failed = true;
  try {
    step();
    failed = false;
  } catch (const RankError& e) {  // already agreed (a nested step): passed on as it is
    category = e.category();
    message = e.what();
  } catch (const Error& e) {
    category = e.category();
    message = "rank " + std::to_string(rank) + ": " + e.what();
  } catch (const std::bad_alloc&) {
    category = ErrorCategory::out_of_memory;
    message = "rank " + std::to_string(rank) + ": out of host memory";
  } catch (const std::exception& e) {
    message = "rank " + std::to_string(rank) + ": internal: " + e.what();
  }
  // The lowest failing rank (size: none), then its category and message from it.
  int first = failed ? rank : size;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  long long header[2] = {static_cast<long long>(category), static_cast<long long>(message.size())};
  MPI_Bcast(header, 2, MPI_LONG_LONG, first, comm);
  message.resize(static_cast<std::size_t>(header[1]));
  MPI_Bcast(message.data(), static_cast<int>(header[1]), MPI_CHAR, first, comm);
  throw RankError(static_cast<ErrorCategory>(header[0]), message, first);
}

// ---- process grid -----------------------------------------------------------------------
GridShape square_grid(int ranks) {
  int p = 1;
  for (int d = 1; d * d <= ranks; ++d)
    if (ranks % d == 0) p = d;
  return {p, ranks / p};
}

GridShape parse_grid(std::string_view text) {
  const auto x = text.find('x');
  const auto number = [](std::string_view digits) {
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return 0;
    return std::stoi(std::string(digits));
  };
  if (x != std::string_view::npos) {
    const int p = number(text.substr(0, x)), q = number(text.substr(x + 1));
    if (p > 0 && q > 0) return {p, q};
  }
  fail(ErrorCategory::usage, "grid '" + std::string(text) + "' is not PxQ (e.g. 2x2) with P, Q >= 1");
}

std::string grid_name(GridShape shape) {
  return std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
}

ProcessGrid::ProcessGrid(MPI_Comm comm, std::optional<GridShape> shape) : comm_(comm) {
  int size = 1;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size);
  collective(comm, [&] {
    shape_ = shape ? *shape : square_grid(size);
    if (std::int64_t(shape_.rows) * shape_.cols != size)
      fail(ErrorCategory::usage, "grid " + grid_name(shape_) + " needs " +
                                     std::to_string(std::int64_t(shape_.rows) * shape_.cols) +
                                     " processes, but there are " + std::to_string(size));
  });
  MPI_Comm_split(comm, row(), col(), &row_comm_);
  MPI_Comm_split(comm, col(), row(), &col_comm_);
}

ProcessGrid::~ProcessGrid() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (row_comm_ != MPI_COMM_NULL) MPI_Comm_free(&row_comm_);
  if (col_comm_ != MPI_COMM_NULL) MPI_Comm_free(&col_comm_);
}

// ---- block-cyclic distribution ------------------------------------------------------------
std::int64_t block_cyclic_extent(std::int64_t n, std::int64_t b, int procs, int p) {
  const std::int64_t blocks = n / b;  // full blocks; then one partial block of n % b
  std::int64_t extent = (blocks / procs) * b;
  const std::int64_t extra = blocks % procs;
  if (p < extra) extent += b;
  else if (p == extra) extent += n % b;
  return extent;
}

std::int64_t BlockCyclic::local_rows(int prow) const { return block_cyclic_extent(rows, mb, grid.rows, prow); }
std::int64_t BlockCyclic::local_cols(int pcol) const { return block_cyclic_extent(cols, nb, grid.cols, pcol); }
std::int64_t BlockCyclic::global_row(int prow, std::int64_t li) const {
  return ((li / mb) * grid.rows + prow) * mb + li % mb;
}
std::int64_t BlockCyclic::global_col(int pcol, std::int64_t lj) const {
  return ((lj / nb) * grid.cols + pcol) * nb + lj % nb;
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f64: return MPI_DOUBLE;
    case DType::f32: return MPI_FLOAT;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::f16:
    case DType::bf16: return MPI_UINT16_T;  // moved, never computed on, by MPI
    default: break;
  }
  fail(ErrorCategory::usage, "distributed matrices hold f64, f32, i32, i64, f16 or bf16, not " +
                                 std::string(dtype_name(dtype)));
}

void check_host_dtype(DType dtype) {
  if (dtype != DType::f64 && dtype != DType::f32 && dtype != DType::i32 && dtype != DType::i64)
    fail(ErrorCategory::usage, "distributed matrices hold f64, f32, i32 or i64 in host memory (f16, bf16 "
                               "and i8 in device memory, on the CUDA backend), not " +
                                   std::string(dtype_name(dtype)));
}

int mpi_count(std::int64_t elements, const std::string& what) {
  if (elements > INT_MAX)
    fail(ErrorCategory::usage, what + " of " + std::to_string(elements) +
                                   " elements is more than one MPI message holds (2^31 - 1): use more "
                                   "processes or smaller blocks");
  return static_cast<int>(elements);
}

AnyMatrix zero_matrix(DType dtype, std::int64_t rows, std::int64_t cols) {
  if (dtype == DType::tf32) fail(ErrorCategory::usage, "no host matrix holds tf32 (an f32 matrix computed in tf32)");
  return detail::make_host_matrix(dtype, [&]<class T>(std::type_identity<T>) -> AnyMatrix { return Matrix<T>(rows, cols); });
}

void check_blocks(std::int64_t rows, std::int64_t cols, std::int64_t mb, std::int64_t nb) {
  if (rows < 0 || cols < 0 || mb < 1 || nb < 1)
    fail(ErrorCategory::usage, "distributed matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                                   " in blocks of " + std::to_string(mb) + "x" + std::to_string(nb) +
                                   ": sizes must be >= 0 and blocks >= 1");
}

int node_rank(MPI_Comm comm) {
  int rank = 0, local = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

int default_device(int node_rank, int devices) { return devices > 0 ? node_rank % devices : 0; }

DistMatrix::DistMatrix(const ProcessGrid& grid, DType dtype, std::int64_t rows, std::int64_t cols,
                       std::int64_t mb, std::int64_t nb)
    : grid_(&grid), dtype_(dtype), dist_{rows, cols, mb, nb, grid.shape()} {
  collective(grid.comm(), [&] {
    check_blocks(rows, cols, mb, nb);
    check_host_dtype(dtype);
    const std::int64_t lr = dist_.local_rows(grid.row()), lc = dist_.local_cols(grid.col());
    mpi_count(lr * lc, "a local part");
    local_ = zero_matrix(dtype, lr, lc);
  });
}

namespace {

// Rank r's part of `whole` (or of its transpose), packed row-major.
template <class T>
void pack(const Matrix<T>& whole, const BlockCyclic& d, int prow, int pcol, bool transpose, T* out) {
  const std::int64_t lr = d.local_rows(prow), lc = d.local_cols(pcol);
  for (std::int64_t i = 0; i < lr; ++i) {
    const std::int64_t gi = d.global_row(prow, i);
    for (std::int64_t j = 0; j < lc; ++j) {
      const std::int64_t gj = d.global_col(pcol, j);
      out[i * lc + j] = transpose ? whole(gj, gi) : whole(gi, gj);
    }
  }
}

template <class T>
void unpack(const T* in, const BlockCyclic& d, int prow, int pcol, Matrix<T>& whole) {
  const std::int64_t lr = d.local_rows(prow), lc = d.local_cols(pcol);
  for (std::int64_t i = 0; i < lr; ++i) {
    const std::int64_t gi = d.global_row(prow, i);
    for (std::int64_t j = 0; j < lc; ++j) whole(gi, d.global_col(pcol, j)) = in[i * lc + j];
  }
}

constexpr int kTagBlocks = 7201;

}  // namespace

namespace {

// scatter() into host blocks (gpus null) or into gpus' device blocks, through a host copy of
// this rank's part.
DistMatrix scatter_to(const ProcessGrid& grid, const GpuGrid* gpus, const AnyMatrix* whole, std::int64_t mb,
                      std::int64_t nb, bool transpose) {
  // Rank 0 says what it distributes: rows, cols, dtype.
  long long header[3] = {0, 0, 0};
  collective(grid.comm(), [&] {
    if (grid.rank() != 0) return;
    if (!whole) fail(ErrorCategory::usage, "scatter: rank 0 has no matrix to distribute");
    if (gpus) mpi_type(dtype_of_any(*whole));
    else check_host_dtype(dtype_of_any(*whole));
    header[0] = transpose ? cols_of(*whole) : rows_of(*whole);
    header[1] = transpose ? rows_of(*whole) : cols_of(*whole);
    header[2] = static_cast<long long>(dtype_of_any(*whole));
  });
  MPI_Bcast(header, 3, MPI_LONG_LONG, 0, grid.comm());
  const auto dtype = static_cast<DType>(header[2]);
  DistMatrix m = gpus ? DistMatrix(*gpus, dtype, header[0], header[1], mb, nb)
                      : DistMatrix(grid, dtype, header[0], header[1], mb, nb);
  const BlockCyclic& d = m.distribution();
  const MPI_Datatype type = mpi_type(dtype);
  // Rank 0's send buffer holds the largest part of another rank.
  std::int64_t largest = 0;
  for (int r = 1; r < grid.size(); ++r)
    largest = std::max(largest, d.local_rows(r / d.grid.cols) * d.local_cols(r % d.grid.cols));
  std::vector<unsigned char> buffer;
  AnyMatrix staged;  // device matrices: this rank's part on its way to the device
  collective(grid.comm(), [&] {
    if (grid.rank() == 0) buffer.resize(std::size_t(largest) * dtype_size(dtype));
    if (gpus) staged = zero_matrix(dtype, m.local_rows(), m.local_cols());
  });
  AnyMatrix& local_part = gpus ? staged : m.local();
  std::visit(
      [&](auto& local) {
        using T = typename std::decay_t<decltype(local)>::value_type;
        if (grid.rank() == 0) {
          const auto& src = std::get<Matrix<T>>(*whole);
          pack(src, d, 0, 0, transpose, local.data());
          T* out = reinterpret_cast<T*>(buffer.data());
          for (int r = 1; r < grid.size(); ++r) {
            const int prow = r / d.grid.cols, pcol = r % d.grid.cols;
            pack(src, d, prow, pcol, transpose, out);
            MPI_Send(out, int(d.local_rows(prow) * d.local_cols(pcol)), type, r, kTagBlocks, grid.comm());
          }
        } else {
          MPI_Recv(local.data(), int(local.size()), type, 0, kTagBlocks, grid.comm(), MPI_STATUS_IGNORE);
        }
      },
      local_part);
  if (gpus) collective(grid.comm(), [&] { upload_local(m, staged); });
  return m;
}

}  // namespace

DistMatrix scatter(const ProcessGrid& grid, const AnyMatrix* whole, std::int64_t mb, std::int64_t nb,
                   bool transpose) {
  return scatter_to(grid, nullptr, whole, mb, nb, transpose);
}

DistMatrix scatter(const GpuGrid& gpus, const AnyMatrix* whole, std::int64_t mb, std::int64_t nb,
                   bool transpose) {
  return scatter_to(gpus.grid(), &gpus, whole, mb, nb, transpose);
}

AnyMatrix gather(const DistMatrix& m) {
  const ProcessGrid& grid = m.grid();
  const BlockCyclic& d = m.distribution();
  AnyMatrix whole;
  MPI_Datatype type = MPI_BYTE;
  collective(grid.comm(), [&] {
    type = mpi_type(m.dtype());  // device i8 has no host matrix
    whole = zero_matrix(m.dtype(), 0, 0);
  });
  std::vector<unsigned char> buffer;
  AnyMatrix staged;  // device matrices: this rank's part, copied from the device
  // Rank 0 makes room first: no rank sends before it can receive.
  collective(grid.comm(), [&] {
    if (m.backend() == Backend::cuda) staged = download_local(m);
    if (grid.rank() != 0) return;
    whole = zero_matrix(m.dtype(), m.rows(), m.cols());
    std::int64_t largest = 0;
    for (int r = 1; r < grid.size(); ++r)
      largest = std::max(largest, d.local_rows(r / d.grid.cols) * d.local_cols(r % d.grid.cols));
    buffer.resize(std::size_t(largest) * dtype_size(m.dtype()));
  });
  std::visit(
      [&](const auto& local) {
        using T = typename std::decay_t<decltype(local)>::value_type;
        if (grid.rank() == 0) {
          auto& out = std::get<Matrix<T>>(whole);
          unpack(local.data(), d, 0, 0, out);
          T* in = reinterpret_cast<T*>(buffer.data());
          for (int r = 1; r < grid.size(); ++r) {
            const int prow = r / d.grid.cols, pcol = r % d.grid.cols;
            MPI_Recv(in, int(d.local_rows(prow) * d.local_cols(pcol)), type, r, kTagBlocks, grid.comm(),
                     MPI_STATUS_IGNORE);
            unpack(in, d, prow, pcol, out);
          }
        } else {
          MPI_Send(local.data(), int(local.size()), type, 0, kTagBlocks, grid.comm());
        }
      },
      m.backend() == Backend::cuda ? staged : m.local());
  return whole;
}

}  // namespace gemmkit::dist

// The collective parallel read of a .npy file into a distributed matrix: rank 0 reads and
// checks the header, then every rank reads only its own blocks through an MPI-IO file view
// made by MPI_Type_create_darray, which describes exactly the 2-D block-cyclic layout
// (block (I, J) on process (I mod P, J mod Q), processes numbered row-major).
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "dist/dist_common.hpp"
#include "gemmkit/io.hpp"

namespace gemmkit::dist {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, std::size_t(length));
}

// A file opened by every rank of a communicator, closed by all of them together. Every step
// on it is agreed (collective()), so that all ranks reach the close.
class MpiFile {
 public:
  MpiFile(MPI_Comm comm, const std::string& path) {
    const int code = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file_);
    collective(comm, [&] {
      if (code != MPI_SUCCESS)
        fail(ErrorCategory::input, "cannot open " + quoted_path(path) + " for the parallel read: " +
                                       mpi_error_text(code));
    });
  }
  ~MpiFile() {
    if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  }
  MpiFile(const MpiFile&) = delete;
  MpiFile& operator=(const MpiFile&) = delete;
  MPI_File get() const { return file_; }

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

// The type of this rank's elements in an order-`order` rows x cols array in blocks of mb x nb.
MPI_Datatype block_cyclic_type(const ProcessGrid& grid, std::int64_t rows, std::int64_t cols, std::int64_t mb,
                               std::int64_t nb, int order, MPI_Datatype element) {
  const int sizes[2] = {int(rows), int(cols)};
  const int distributions[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
  // A block as large as the matrix is the matrix: the same layout, and the argument fits an int.
  const int blocks[2] = {int(std::min(mb, rows)), int(std::min(nb, cols))};
  const int processes[2] = {grid.shape().rows, grid.shape().cols};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_create_darray(grid.size(), grid.rank(), 2, sizes, distributions, blocks, processes, order, element,
                         &type);
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

DistMatrix read_npy(const ProcessGrid& grid, const std::string& path, std::int64_t mb, std::int64_t nb,
                    bool transpose) {
  // Rank 0's look at the header: rows, cols, dtype, Fortran order, data offset.
  long long header[5] = {0, 0, 0, 0, 0};
  collective(grid.comm(), [&] {
    if (grid.rank() != 0) return;
    const NpyLayout layout = read_npy_layout(path);
    const bool held = layout.dtype == DType::f64 || layout.dtype == DType::f32 || layout.dtype == DType::i32 ||
                      layout.dtype == DType::i64;
    if (!held || layout.widened)
      fail(ErrorCategory::input,
           quoted_path(path) + ": its dtype (" +
               (layout.widened ? "a narrower type read as " : std::string()) + std::string(dtype_name(layout.dtype)) +
               ") cannot be read in parallel into a distributed matrix, which reads <f8, <f4, <i8 or <i4 as "
               "stored (read it on rank 0 and scatter it)");
    if (layout.rows > INT_MAX || layout.cols > INT_MAX)
      fail(ErrorCategory::usage, quoted_path(path) + ": " + std::to_string(layout.rows) + "x" +
                                     std::to_string(layout.cols) + " has a dimension above 2^31 - 1, more "
                                     "than an MPI-IO view describes");
    header[0] = layout.rows, header[1] = layout.cols, header[2] = static_cast<long long>(layout.dtype);
    header[3] = layout.fortran_order, header[4] = layout.data_offset;
  });
  MPI_Bcast(header, 5, MPI_LONG_LONG, 0, grid.comm());
  const DType dtype = static_cast<DType>(header[2]);
  DistMatrix m(grid, dtype, transpose ? header[1] : header[0], transpose ? header[0] : header[1], mb, nb);
  if (m.rows() == 0 || m.cols() == 0) return m;
  // The distributed matrix's entries lie row by row in a C-ordered file, column by column in a
  // Fortran-ordered one; transposing swaps the two.
  const bool column_major = bool(header[3]) != transpose;
  const MPI_Datatype element = mpi_type(dtype);
  const std::size_t size = dtype_size(dtype);
  const std::int64_t lr = m.distribution().local_rows(grid.row()), lc = m.distribution().local_cols(grid.col());
  void* local = std::visit([](auto& x) -> void* { return x.data(); }, m.local());
  // Column-major parts arrive column by column, into a buffer transposed afterwards.
  std::vector<unsigned char> columns;
  collective(grid.comm(), [&] {
    if (column_major) columns.resize(std::size_t(lr * lc) * size);
  });
  MpiFile file(grid.comm(), path);
  MPI_Datatype view = block_cyclic_type(grid, m.rows(), m.cols(), mb, nb,
                                        column_major ? MPI_ORDER_FORTRAN : MPI_ORDER_C, element);
  int code = MPI_File_set_view(file.get(), MPI_Offset(header[4]), element, view, "native", MPI_INFO_NULL);
  MPI_Type_free(&view);
  collective(grid.comm(), [&] {
    if (code != MPI_SUCCESS)
      fail(ErrorCategory::input, "cannot read " + quoted_path(path) + " in parallel: " + mpi_error_text(code));
  });
  MPI_Status status;
  code = MPI_File_read_all(file.get(), column_major ? static_cast<void*>(columns.data()) : local, int(lr * lc),
                           element, &status);
  collective(grid.comm(), [&] {
    int got = 0;
    if (code == MPI_SUCCESS) MPI_Get_count(&status, element, &got);
    if (code != MPI_SUCCESS || got != lr * lc)
      fail(ErrorCategory::input, "reading " + quoted_path(path) + " in parallel: " +
                                     (code != MPI_SUCCESS ? mpi_error_text(code)
                                                          : std::to_string(got) + " of " + std::to_string(lr * lc) +
                                                                " elements read (did the file change?)"));
  });
  if (column_major) {
    auto* out = static_cast<unsigned char*>(local);
    for (std::int64_t j = 0; j < lc; ++j)
      for (std::int64_t i = 0; i < lr; ++i)
        std::memcpy(out + std::size_t(i * lc + j) * size, columns.data() + std::size_t(j * lr + i) * size, size);
  }
  return m;
}

}  // namespace gemmkit::dist

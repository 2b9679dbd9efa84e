// .npy files read and written in parallel: rank 0 handles the header (read and checked, or
// written through AtomicFile), and every rank transfers only its own blocks through an MPI-IO
// file view made by MPI_Type_create_darray, which describes exactly the 2-D block-cyclic
// layout (block (I, J) on process (I mod P, J mod Q), processes numbered row-major).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "distributed/dist_common.hpp"
#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit::dist {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, std::size_t(length));
}

// The hint of every error where a rank does not see the file that rank 0 does.
constexpr const char* kSameFile = "every rank must see the same file (one machine or a shared file system)";

// A file opened by every rank of a communicator, closed by all of them together. Every step
// on it is agreed (collective()), so that all ranks reach the close. Failures are `category`
// errors: input for a read, output for a write; `shown` names the file in them.
class MpiFile {
 public:
  MpiFile(MPI_Comm comm, const std::string& path, const std::string& shown, int mode, ErrorCategory category)
      : category_(category) {
    const std::string doing = std::string(" for parallel ") + (category_ == ErrorCategory::input ? "reading" : "writing");
    // Each rank opens it by itself first, agreed: MPI_File_open (Open MPI's OMPIO) waits for
    // ever on the ranks that opened the file when another rank could not.
    collective(comm, [&] {
      const int fd = ::open(path.c_str(), ((mode & MPI_MODE_RDONLY) ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      if (fd < 0) fail(category_, "cannot open " + shown + doing + ": " + std::strerror(errno) + "; " + kSameFile);
      ::close(fd);
    });
    const int code = MPI_File_open(comm, path.c_str(), mode, MPI_INFO_NULL, &file_);
    collective(comm, [&] {
      if (code != MPI_SUCCESS) fail(category_, "cannot open " + shown + doing + ": " + mpi_error_text(code));
    });
  }
  ~MpiFile() {
    if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  }
  MpiFile(const MpiFile&) = delete;
  MpiFile& operator=(const MpiFile&) = delete;
  MPI_File get() const { return file_; }
  ErrorCategory category() const { return category_; }

 private:
  MPI_File file_ = MPI_FILE_NULL;
  ErrorCategory category_;
};

// Reads (write false) or writes this rank's `count` elements of an order-`order` rows x cols
// matrix in blocks of mb x nb, stored from byte `offset` of the file, to or from `buffer` (the
// rank's part as the local array of that order). One collective call; agreed.
void transfer_blocks(const ProcessGrid& grid, const MpiFile& file, const std::string& path, std::int64_t offset,
                     DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t mb, std::int64_t nb,
                     int order, void* buffer, std::int64_t count, bool write) {
  const MPI_Datatype element = mpi_type(dtype);
  const int sizes[2] = {int(rows), int(cols)};
  const int distributions[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
  // A block as large as the matrix is the matrix: the same layout, and the argument fits an int.
  const int blocks[2] = {int(std::min(mb, rows)), int(std::min(nb, cols))};
  const int processes[2] = {grid.shape().rows, grid.shape().cols};
  MPI_Datatype view = MPI_DATATYPE_NULL;
  MPI_Type_create_darray(grid.size(), grid.rank(), 2, sizes, distributions, blocks, processes, order, element,
                         &view);
  MPI_Type_commit(&view);
  int code = MPI_File_set_view(file.get(), MPI_Offset(offset), element, view, "native", MPI_INFO_NULL);
  MPI_Type_free(&view);
  const std::string doing = std::string(write ? "writing " : "reading ") + quoted_path(path) + " in parallel: ";
  collective(grid.comm(), [&] {
    if (code != MPI_SUCCESS) fail(file.category(), doing + mpi_error_text(code));
  });
  MPI_Status status;
  code = write ? MPI_File_write_all(file.get(), buffer, int(count), element, &status)
               : MPI_File_read_all(file.get(), buffer, int(count), element, &status);
  if (write && code == MPI_SUCCESS) code = MPI_File_sync(file.get());  // collective too
  collective(grid.comm(), [&] {
    int done = 0;
    if (code == MPI_SUCCESS) MPI_Get_count(&status, element, &done);
    if (code != MPI_SUCCESS || done != count)
      fail(file.category(), doing + (code != MPI_SUCCESS ? mpi_error_text(code)
                                                         : std::to_string(done) + " of " + std::to_string(count) +
                                                               " elements transferred (did the file change?)"));
  });
}

void check_view_extent(const std::string& path, std::int64_t rows, std::int64_t cols) {
  if (rows > INT_MAX || cols > INT_MAX)
    fail(ErrorCategory::usage, quoted_path(path) + ": " + std::to_string(rows) + "x" + std::to_string(cols) +
                                   " has a dimension above 2^31 - 1, more than an MPI-IO view describes");
}

}  // namespace

DistMatrix read_npy(const ProcessGrid& grid, const std::string& path, std::int64_t mb, std::int64_t nb,
                    bool transpose) {
  // Every rank reads the header of the file it sees (a missing or bad file on any rank is
  // agreed here, before any MPI-IO); rank 0's says the rows, cols, dtype, Fortran order and
  // data offset, and every other rank's must say the same.
  long long header[5] = {0, 0, 0, 0, 0};
  NpyLayout layout;
  collective(grid.comm(), [&] {
    layout = read_npy_layout(path);
    if (grid.rank() != 0) return;
    const bool held = layout.dtype == DType::f64 || layout.dtype == DType::f32 || layout.dtype == DType::i32 ||
                      layout.dtype == DType::i64;
    if (!held || layout.widened)
      fail(ErrorCategory::input,
           quoted_path(path) + ": its dtype (" +
               (layout.widened ? "a narrower type read as " : std::string()) + std::string(dtype_name(layout.dtype)) +
               ") cannot be read in parallel into a distributed matrix, which reads <f8, <f4, <i8 or <i4 as "
               "stored (read it on rank 0 and scatter it)");
    check_view_extent(path, layout.rows, layout.cols);
    header[0] = layout.rows, header[1] = layout.cols, header[2] = static_cast<long long>(layout.dtype);
    header[3] = layout.fortran_order, header[4] = layout.data_offset;
  });
  MPI_Bcast(header, 5, MPI_LONG_LONG, 0, grid.comm());
  collective(grid.comm(), [&] {
    const long long mine[5] = {layout.rows, layout.cols, static_cast<long long>(layout.dtype), layout.fortran_order,
                               layout.data_offset};
    if (std::equal(mine, mine + 5, header) && !layout.widened) return;
    const auto describe = [](const long long* h, bool widened) {
      return std::to_string(h[0]) + "x" + std::to_string(h[1]) + " " + (widened ? "a narrower type read as " : "") +
             std::string(dtype_name(static_cast<DType>(h[2]))) + (h[3] ? " in Fortran order" : "") + ", data from byte " +
             std::to_string(h[4]);
    };
    fail(ErrorCategory::input, quoted_path(path) + " is " + describe(mine, layout.widened) + " here but " +
                                   describe(header, false) + " on rank 0: " + kSameFile);
  });
  const DType dtype = static_cast<DType>(header[2]);
  DistMatrix m(grid, dtype, transpose ? header[1] : header[0], transpose ? header[0] : header[1], mb, nb);
  if (m.rows() == 0 || m.cols() == 0) return m;
  // The distributed matrix's entries lie row by row in a C-ordered file, column by column in a
  // Fortran-ordered one; transposing swaps the two.
  const bool column_major = bool(header[3]) != transpose;
  const std::int64_t lr = m.distribution().local_rows(grid.row()), lc = m.distribution().local_cols(grid.col());
  void* local = std::visit([](auto& x) -> void* { return x.data(); }, m.local());
  // Column-major parts arrive column by column, into a buffer transposed afterwards.
  std::vector<unsigned char> columns;
  collective(grid.comm(), [&] {
    if (column_major) columns.resize(std::size_t(lr * lc) * dtype_size(dtype));
  });
  {
    const MpiFile file(grid.comm(), path, quoted_path(path), MPI_MODE_RDONLY, ErrorCategory::input);
    transfer_blocks(grid, file, path, header[4], dtype, m.rows(), m.cols(), mb, nb,
                    column_major ? MPI_ORDER_FORTRAN : MPI_ORDER_C, column_major ? columns.data() : local, lr * lc,
                    false);
  }
  if (column_major)
    std::visit(
        [&](auto& out) {
          using T = typename std::decay_t<decltype(out)>::value_type;
          const T* in = reinterpret_cast<const T*>(columns.data());
#pragma omp parallel for schedule(static)
          for (std::int64_t i = 0; i < lr; ++i)
            for (std::int64_t j = 0; j < lc; ++j) out.data()[i * lc + j] = in[j * lr + i];
        },
        m.local());
  return m;
}

void write_npy(const DistMatrix& m, const std::string& path) {
  const ProcessGrid& grid = m.grid();
  // Rank 0: the temporary file with the header, flushed before the other ranks write after it.
  std::optional<AtomicFile> out;
  std::string temp;
  long long header_bytes = 0;
  collective(grid.comm(), [&] {
    if (m.backend() != Backend::cpu)
      fail(ErrorCategory::usage, "writing " + quoted_path(path) + " in parallel: the blocks are in device "
                                 "memory; gather() them and write them on rank 0");
    mpi_type(m.dtype());
    check_view_extent(path, m.rows(), m.cols());
    if (grid.rank() != 0) return;
    const std::string header = io::npy_header(io::npy_descr(m.dtype(), path), {m.rows(), m.cols()});
    out.emplace(path);
    if (out->temporary_path().empty())
      fail(ErrorCategory::usage, "writing " + quoted_path(path) + " in parallel: it is a stream, not a file "
                                 "(gather the matrix and write it on rank 0)");
    out->write(header);
    if (std::fflush(out->stream()) != 0)
      fail(ErrorCategory::output, "cannot write " + quoted_path(path) + ": " + std::strerror(errno));
    // Named from the root, so that a rank working in another folder reaches this file.
    temp = out->temporary_path();
    if (temp.front() != '/') temp = std::filesystem::current_path().string() + "/" + temp;
    header_bytes = static_cast<long long>(header.size());
  });
  long long sizes[2] = {header_bytes, static_cast<long long>(temp.size())};
  MPI_Bcast(sizes, 2, MPI_LONG_LONG, 0, grid.comm());
  temp.resize(std::size_t(sizes[1]));
  MPI_Bcast(temp.data(), int(sizes[1]), MPI_CHAR, 0, grid.comm());
  if (m.rows() > 0 && m.cols() > 0) {
    const MpiFile file(grid.comm(), temp, "rank 0's temporary file " + quoted_path(temp) + " of " + quoted_path(path),
                       MPI_MODE_WRONLY, ErrorCategory::output);
    const std::int64_t count = std::visit([](const auto& x) { return x.size(); }, m.local());
    void* local = const_cast<void*>(std::visit([](const auto& x) -> const void* { return x.data(); }, m.local()));
    transfer_blocks(grid, file, path, sizes[0], m.dtype(), m.rows(), m.cols(), m.distribution().mb,
                    m.distribution().nb, MPI_ORDER_C, local, count, true);
  }
  // Every rank's part is in the file: rank 0 puts it in place (or hands it to its batch).
  collective(grid.comm(), [&] {
    if (grid.rank() == 0) out->commit();
  });
}

}  // namespace gemmkit::dist

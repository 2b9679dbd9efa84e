// Matrix files. The format is chosen by extension: .npy, .mtx, .csv/.txt. Readers check
// everything before allocating and throw ErrorCategory::input errors that name the file and
// the place (byte offset or line). Writers go through AtomicFile (below): a failed write
// leaves nothing behind. See docs/formats.md for what each format supports.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/matrix.hpp"

namespace gemmkit {

namespace io {
// 'text' in single quotes, control characters escaped and text past `max_shown` cut, so
// that messages stay on one line whatever a file holds. Paths are shown whole.
std::string quoted(std::string_view text, std::size_t max_shown = 60);
inline std::string quoted_path(std::string_view path) { return quoted(path, path.size()); }
// A CSV field: the text itself, or in double quotes (quotes doubled) when it holds a comma,
// a quote or a line break.
std::string csv_field(std::string_view text);
// The decimal text of an integer of `limbs` 64-bit words of two's complement, least
// significant first (the words of an exact table, see LimbTableView).
std::string decimal_text(const std::uint64_t* words, int limbs);
}  // namespace io
using io::quoted_path;  // every message names files this way, the command line's too

enum class FileFormat { npy, mtx, csv };

// From the extension (case-insensitive); usage error for anything else.
FileFormat format_from_path(const std::string& path);
// "npy", "mtx" or "csv" (an output's --format); nullopt for anything else.
std::optional<FileFormat> parse_file_format(std::string_view name);

// What the caller means to compute in. Readers of text use it where the text leaves a choice:
// a floating-point dtype lets a CSV file of integers hold integers too large for int64 (the
// file then reads as f64); without one such a value is an input error naming it.
struct ReadOptions {
  std::optional<DType> dtype;
};

// Every reader reads its file once, from the start, so pipes, FIFOs and /dev/stdin work.
AnyMatrix read_matrix(const std::string& path, const ReadOptions& options = {});
// In output_format(path, format): `format` when given, else by the path.
void write_matrix(const std::string& path, const AnyMatrix& matrix,
                  std::optional<FileFormat> format = std::nullopt);

// NumPy .npy, versions 1.0, 2.0 and 3.0. Reads <f8 <f4 <i8 <i4 as themselves, and widens
// <f2, bfloat16, |i1 |u1 |b1 <i2 <u2 (to f32 / i32) and <u4 (to i64); fortran_order is
// honoured; a 1-D array of length n reads as an n x 1 column. Writes version 1.0 (2.0 if the
// header needs it), C order.
AnyMatrix read_npy(const std::string& path);
void write_npy(const std::string& path, const AnyMatrix& matrix);
// A matrix .npy file's header, checked as read_npy checks it (the data's length against the
// shape included), for readers that read the data themselves at data_offset (the distributed
// parallel read, gemmkit::dist::read_npy). A regular file only: a pipe is an input error.
struct NpyLayout {
  DType dtype = DType::f64;    // what read_npy gives
  bool widened = false;        // stored in another type that read_npy widens to dtype
  int itemsize = 8;            // bytes per stored element
  bool fortran_order = false;  // stored column by column
  std::int64_t rows = 0, cols = 0;
  std::int64_t data_offset = 0;  // bytes before the first element
};
NpyLayout read_npy_layout(const std::string& path);
// An array of any rank that a matrix cannot hold (walk counts of every length: shape
// (lengths, rows, cols)): the C-ordered elements of `dtype` at `data`, written as they are
// in memory with the header write_npy writes. Read it with NumPy; read_npy takes matrices only.
void write_npy_array(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                     const void* data);

// Matrix Market. Coordinate entries as read, with symmetric and skew-symmetric entries
// mirrored (the mirror of a skew entry negated) and 0-based indices. Duplicates are kept
// (densifying sums them). real/double give f64 values; integer and pattern give i64 (pattern
// entries are 1).
struct SparseEntries {
  std::int64_t rows = 0, cols = 0;
  DType dtype = DType::f64;  // f64 or i64
  std::vector<std::int64_t> row, col;
  std::vector<double> real_values;        // used when dtype == f64
  std::vector<std::int64_t> int_values;   // used when dtype == i64
  std::size_t size() const { return row.size(); }
};
SparseEntries read_mtx_entries(const std::string& path);  // coordinate or array files
AnyMatrix read_mtx(const std::string& path);               // dense, f64 or i64
// Writes "matrix array real general" (f32/f64) or "... integer general" (i32/i64),
// with values that read back exactly.
void write_mtx(const std::string& path, const AnyMatrix& matrix);

// CSV/text: rows of numbers separated by commas and/or whitespace, '#' starts a comment,
// blank lines are skipped. All-integer files read as i64, anything else as f64, unless a
// "# dtype: NAME" line before the first row names the dtype (written for f32, i32, f16 and
// bf16 matrices, so that they read back as themselves).
AnyMatrix read_csv(const std::string& path, const ReadOptions& options = {});
void write_csv(const std::string& path, const AnyMatrix& matrix);

// ---- Exact integer tables ----------------------------------------------------------------
// rows x cols integers of `limbs` 64-bit two's-complement words each (row-major, least
// significant word first): exact walk counts, exact GEMM results.
struct LimbTableView {
  const std::uint64_t* words;
  std::int64_t rows, cols;
  int limbs;
};
// CSV labels: a header line of the `corner` fields then one field per column (no header line
// when both are empty), and before each row's numbers that row's leading fields (none when
// `rows` is empty; otherwise one entry per row). Fields holding a comma, a quote or a line
// break are quoted.
struct LimbTableLabels {
  std::vector<std::string> corner;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
// By output_format(path, format):
//   .csv  decimal integers, comma-separated, a line per row, with the labels if given;
//         streamed in blocks of rows formatted in parallel (no whole-table text in memory);
//   .npy  the words themselves: a '<u8' array of shape (rows, cols, limbs), C order, read
//         back by read_limb_table (labels are not stored).
// Through AtomicFile: nothing partial is left on failure. .mtx is a usage error.
void write_limb_table(const std::string& path, const LimbTableView& t,
                      const LimbTableLabels* labels = nullptr,
                      std::optional<FileFormat> format = std::nullopt);
struct LimbTable {
  std::vector<std::uint64_t> words;
  std::int64_t rows = 0, cols = 0;
  int limbs = 1;
  LimbTableView view() const { return {words.data(), rows, cols, limbs}; }
};
// A .npy file of that shape (any other dtype, order or rank is an input error naming it).
LimbTable read_limb_table(const std::string& path);

// A sequence of `tables` tables of one shape stored one after another from first.words
// (walk counts of every length 1..K: first is length 1's table), by output_format(path, format):
//   .csv  the tables' rows one after another, as write_limb_table writes one table of
//         tables * rows rows (labels->rows: one entry per row of every table, or none);
//   .npy  one '<u8' array of shape (tables, rows, cols, limbs), C order: table i is
//         [i, :, :, :]. Read back by read_limb_tables.
void write_limb_tables(const std::string& path, const LimbTableView& first, std::int64_t tables,
                       const LimbTableLabels* labels = nullptr,
                       std::optional<FileFormat> format = std::nullopt);
struct LimbTables {
  std::vector<std::uint64_t> words;
  std::int64_t tables = 1, rows = 0, cols = 0;
  int limbs = 1;
  bool stacked = false;  // the file has the leading axis (rank 4); false: one table (rank 3)
  LimbTableView table(std::int64_t i) const {
    return {words.data() + std::size_t(i) * std::size_t(rows * cols) * std::size_t(limbs), rows, cols, limbs};
  }
};
// A .npy file of shape (tables, rows, cols, limbs), or of one table's shape (rows, cols,
// limbs), read as tables = 1 with stacked false; anything else is an input error naming it.
LimbTables read_limb_tables(const std::string& path);

// ---- Output ------------------------------------------------------------------------------
// Every writer goes through AtomicFile, which first looks at what the output path is:
//   "-" (or /dev/stdout)          standard output: the data is written there at commit
//   /dev/stderr, /dev/fd/N        that open descriptor, written at commit
//   a character device or a FIFO  (/dev/null, a terminal, a named pipe) opened and written at
//                                 commit, with no temporary file and no rename (the data
//                                 is held in memory until then)
//   a regular file or a new name  a temporary file `.gemmkit-XXXXXX.tmp` in its folder,
//                                 synced and renamed onto it at commit, with the replaced
//                                 file's permission bits (and, as root, its owner)
//   a symbolic link               as above for the file it leads to; the link stays a link
// Folders, sockets, block devices and links that lead nowhere are refused (usage errors).
// A failed write (full disk, file-size limit, closed device) is an `output` error.

// The format of a matrix output: `requested` when given (the command line's --format);
// else by extension (format_from_path); a stream ("-", a descriptor, a character device
// such as /dev/null, a FIFO) whose name has no known extension gets CSV text.
FileFormat output_format(const std::string& path, std::optional<FileFormat> requested = std::nullopt);

// Checks, before any work, that `path` can be written as above (its kind; a file's folder
// exists and is writable), throwing the error writing it would. With an OutputBatch open,
// "-" also claims standard output for the data: text printed to stdout from then on goes to
// stderr, so that the two do not mix. Two outputs cannot both be "-".
void check_output(const std::string& path);

// A path as a run names it, for messages: {"--json", "r.json"}, {"input A", "A.npy"}.
struct NamedPath {
  std::string name;
  std::string path;  // empty: not given, skipped
};

// Before any work (after check_output of each output): a usage error when an output is the
// same file as another output or as an input, however it is named: "--json 'x' is the same
// file as -o 'x'". Existing files are compared by device and inode (links, hard links,
// other spellings); names that do not exist yet by their folder's real path and their own
// name. "-" and /dev/fd/N count as the file they are open on, where that is a regular file;
// two such descriptors may share one (both are written through, in turn, nothing replaced).
// Character devices (/dev/null) and FIFOs replace no file and may be named any number of times.
void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// One output being written. commit() finishes it: renames the temporary file onto the
// target (or writes a stream's data), or, while an OutputBatch is open, hands it to the
// batch. Without commit() the temporary file is removed and the target left untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() { return stream_; }
  void write(const void* data, std::size_t bytes);  // throws on a short write
  void write(const std::string& text) { write(text.data(), text.size()); }
  void commit();
  // The temporary file being written (empty for a stream), for writers that also fill it by
  // other means: the processes of an MPI job writing their parts of it (gemmkit::dist::write_npy).
  const std::string& temporary_path() const { return temp_; }

 private:
  std::string target_;            // as given, for messages
  std::string file_;              // the regular file renamed onto; empty for a stream
  std::string temp_;              // its temporary file
  int temp_slot_ = -1;            // the temporary's entry in the table signals clean up
  std::FILE* stream_ = nullptr;   // the temporary file, or a memory buffer for a stream
  char* buffer_ = nullptr;        // a stream's data, held until commit
  std::size_t buffer_size_ = 0;
  bool committed_ = false;
};

// Every output of one run, committed together, so that a failed run changes no file. While
// a batch is open, AtomicFile::commit() only finishes a temporary file (written, synced,
// closed) or keeps a stream's data; commit() then writes every stream and renames every
// file; destroying the batch uncommitted removes them all. One batch at a time (the command
// line opens one per run).
class OutputBatch {
 public:
  OutputBatch();
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  void commit();
};

// SIGINT, SIGTERM, SIGHUP and SIGPIPE remove every temporary file still live, then end the
// process by the same signal; SIGXFSZ is ignored, so that a write past the file-size limit
// fails with EFBIG (an error) instead of killing the process. Signals already ignored stay
// ignored. For programs (the command line); the library installs no handler itself.
void remove_temporary_files_on_signals();

}  // namespace gemmkit

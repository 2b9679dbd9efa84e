// Matrix files. The format is chosen by extension: .npy, .mtx, .csv/.txt. Readers check
// everything before allocating and throw ErrorCategory::input errors that name the file and
// the place (byte offset or line). Writers write a temporary file in the same folder and
// rename it over the target only when complete, so a failed write leaves nothing behind.
// See docs/formats.md for what each format supports.
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
}  // namespace io

enum class FileFormat { npy, mtx, csv };

// From the extension (case-insensitive); usage error for anything else.
FileFormat format_from_path(const std::string& path);

// What the caller means to compute in. Readers of text use it where the text leaves a choice:
// a floating-point dtype lets a CSV file of integers hold integers too large for int64 (the
// file then reads as f64); without one such a value is an input error naming it.
struct ReadOptions {
  std::optional<DType> dtype;
};

// Every reader reads its file once, from the start, so pipes, FIFOs and /dev/stdin work.
AnyMatrix read_matrix(const std::string& path, const ReadOptions& options = {});
void write_matrix(const std::string& path, const AnyMatrix& matrix);

// NumPy .npy, versions 1.0, 2.0 and 3.0. Reads <f8 <f4 <i8 <i4 as themselves, and widens
// <f2, bfloat16, |i1 |u1 |b1 <i2 <u2 (to f32 / i32) and <u4 (to i64); fortran_order is
// honoured; a 1-D array of length n reads as an n x 1 column. Writes version 1.0 (2.0 if the
// header needs it), C order.
AnyMatrix read_npy(const std::string& path);
void write_npy(const std::string& path, const AnyMatrix& matrix);

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

// A file written under a temporary name in the target's folder and renamed over the target
// by commit(). If commit() is never reached the temporary file is removed, and the target,
// if it existed, is untouched.
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

 private:
  std::string target_, temp_;
  std::FILE* stream_ = nullptr;
  bool committed_ = false;
};

}  // namespace gemmkit

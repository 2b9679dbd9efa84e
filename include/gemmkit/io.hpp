// Matrix files. The format is chosen by extension: .npy, .mtx, .csv/.txt. Readers check
// everything before allocating and throw ErrorCategory::input errors that name the file and
// the place (byte offset or line). Writers write a temporary file in the same folder and
// rename it over the target only when complete, so a failed write leaves nothing behind.
// See docs/formats.md for what each format supports.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/matrix.hpp"

namespace gemmkit {

enum class FileFormat { npy, mtx, csv };

// From the extension (case-insensitive); usage error for anything else.
FileFormat format_from_path(const std::string& path);

// A file name as every message shows it: in single quotes, control characters escaped, so
// that the message stays on one line whatever the name holds.
std::string quoted_path(std::string_view path);

AnyMatrix read_matrix(const std::string& path);
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
// blank lines are skipped. All-integer files read as i64, anything else as f64.
AnyMatrix read_csv(const std::string& path);
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

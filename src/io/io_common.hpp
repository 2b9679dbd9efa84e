// Pieces shared by the file-format readers and writers: input errors that name the file and
// the place, files that close themselves, line reading, and strict number parsing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/error.hpp"
#include "gemmkit/io.hpp"

namespace gemmkit::io {

// quoted() and quoted_path() are declared in gemmkit/io.hpp.

// Whether text is well-formed UTF-8 (what JSON output can carry): no stray continuation
// byte, truncated or overlong sequence, surrogate, or code point past U+10FFFF.
bool valid_utf8(std::string_view text);

// The format a path's extension names (case-insensitive), nullopt for none or an unknown one.
std::optional<FileFormat> format_of_extension(const std::string& path);

// Throws an input error "'path' <where>: <what>"; `where` may be empty.
[[noreturn]] void input_error(const std::string& path, const std::string& where,
                              const std::string& what);

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Opens for reading; "cannot open 'path': <strerror>" if that fails or path is a folder.
FilePtr open_for_reading(const std::string& path);

// The size of a regular file, nullopt for pipes and other streams.
std::optional<std::int64_t> regular_file_size(std::FILE* file);

// Runs `read`, turning running out of host memory into an out_of_memory error naming `path`.
template <class F>
auto reporting_memory(const std::string& path, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    fail(ErrorCategory::out_of_memory, "not enough host memory to read " + quoted_path(path));
  }
}

// Reads a text file line by line, once, from the start: pipes, FIFOs and /dev/stdin work as
// well as regular files. A line ends at "\n", "\r\n" or a lone "\r" (not returned); a
// UTF-8 byte order mark at the very start is skipped. A read error, a NUL byte (binary data
// is not text), a line longer than max_line_bytes, or too little memory for a long line is
// an error naming the file and the line, never an end of file.
class LineReader {
 public:
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t(1) << 30;

  explicit LineReader(const std::string& path, std::size_t max_line_bytes = kDefaultMaxLineBytes);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, or nullopt at the end of the file. The view lives until the next call.
  std::optional<std::string_view> next();
  std::int64_t line_number() const { return line_number_; }             // of the line last returned
  std::optional<std::int64_t> file_size() const { return file_size_; }  // nullopt for pipes

 private:
  bool fill();  // reads more after end_; false at the end of the file
  void make_room();
  std::string where(std::size_t at) const;

  std::string path_;
  FilePtr file_;
  std::size_t max_line_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0, begin_ = 0, end_ = 0;  // unread bytes are [begin_, end_)
  std::int64_t buffer_offset_ = 0;                  // file offset of buffer_[0]
  bool eof_ = false, started_ = false;
  std::int64_t line_number_ = 0;
  std::optional<std::int64_t> file_size_;
};

enum class ParseStatus { ok, invalid, out_of_range };

// An optional sign followed by decimal digits and nothing else.
bool is_integer_literal(std::string_view token);
// Integer literal to int64; out_of_range when it does not fit.
ParseStatus parse_int64(std::string_view token, std::int64_t& value);
// Decimal floating point, inf, infinity or nan (any case), with an optional leading sign;
// out_of_range when the magnitude overflows or underflows a double.
ParseStatus parse_double(std::string_view token, double& value);
// The same, rounded once to a float.
ParseStatus parse_float(std::string_view token, float& value);

// Shortest text that reads back as exactly `value`.
std::string format_double(double value);

// .npy pieces shared by the matrix files (npy.cpp) and the exact integer tables
// (limb_table.cpp). The magic, version and header of C-ordered data of this descr and shape
// (version 1.0, or 2.0 when the header outgrows it; padded so that the data is 64-byte aligned).
std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape);
// The descr of a dtype a .npy file stores ("<f8", ...); a usage error naming `path` for others.
const char* npy_descr(DType dtype, const std::string& path);
// A shape as Python writes it: "(2, 3)", "(5,)", "()".
std::string shape_text(const std::vector<std::int64_t>& shape);
// Reads and checks the header of an array of '<u8' in C order of any shape, leaving the file
// at the data.
struct NpyU64Header {
  std::vector<std::int64_t> shape;
  std::int64_t data_offset = 0;  // bytes before the first element
};
NpyU64Header read_npy_u64_header(std::FILE* file, const std::string& path,
                                 std::optional<std::int64_t> file_size);

}  // namespace gemmkit::io

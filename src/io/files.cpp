// Format dispatch and the helpers in io_common.hpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace io {

std::string quoted(std::string_view text, std::size_t max_shown) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_shown) out += "...";
  return out + "'";
}

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    // The sequence's length and its smallest code point (shorter forms are overlong).
    const int length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    std::uint32_t point = length == 1 ? c : c & (0x7fu >> length);
    for (int k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next >> 6) != 0x2) return false;
      point = point << 6 | (next & 0x3fu);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (point < kSmallest[length] || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return false;
    i += length;
  }
  return true;
}

void input_error(const std::string& path, const std::string& where, const std::string& what) {
  fail(ErrorCategory::input, quoted_path(path) + (where.empty() ? "" : " " + where) + ": " + what);
}

FilePtr open_for_reading(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file)
    fail(ErrorCategory::input, "cannot open " + quoted_path(path) + ": " + std::strerror(errno));
  struct stat st {};
  // fopen happily opens a folder; reading it would fail later with a vaguer message.
  if (fstat(fileno(file.get()), &st) == 0 && S_ISDIR(st.st_mode))
    fail(ErrorCategory::input, "cannot open " + quoted_path(path) + ": " + std::strerror(EISDIR));
  return file;
}

std::optional<std::int64_t> regular_file_size(std::FILE* file) {
  struct stat st {};
  if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::int64_t>(st.st_size);
}

LineReader::LineReader(const std::string& path, std::size_t max_line_bytes)
    : path_(path),
      file_(open_for_reading(path)),
      max_line_(max_line_bytes),
      file_size_(regular_file_size(file_.get())) {}

std::string LineReader::where(std::size_t at) const {
  return "line " + std::to_string(line_number_ + 1) + " (byte " +
         std::to_string(buffer_offset_ + static_cast<std::int64_t>(at)) + ")";
}

bool LineReader::fill() {
  while (true) {
    const ssize_t n = ::read(fileno(file_.get()), buffer_.get() + end_, capacity_ - end_);
    if (n > 0) {
      end_ += static_cast<std::size_t>(n);
      return true;
    }
    if (n == 0) return false;
    if (errno != EINTR)
      fail(ErrorCategory::input, "cannot read " + quoted_path(path_) + " " + where(end_) + ": " +
                                     std::strerror(errno));
  }
}

// Moves the unread bytes to the front, and grows the buffer if they fill it.
void LineReader::make_room() {
  const std::size_t kept = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, kept);
    buffer_offset_ += static_cast<std::int64_t>(begin_);
    begin_ = 0;
    end_ = kept;
  }
  if (end_ < capacity_) return;
  if (kept > max_line_)
    input_error(path_, where(0),
                "the line is longer than " + std::to_string(max_line_) +
                    " bytes, the most a text file's line may hold");
  const std::size_t grown = std::max<std::size_t>(64 * 1024, std::min(2 * capacity_, max_line_ + 2));
  try {
    std::unique_ptr<char[]> bigger(new char[grown]);
    if (kept) std::memcpy(bigger.get(), buffer_.get(), kept);
    buffer_ = std::move(bigger);
    capacity_ = grown;
  } catch (const std::bad_alloc&) {
    fail(ErrorCategory::out_of_memory, "not enough host memory to read " + quoted_path(path_) +
                                           " " + where(0) + ": a line of more than " +
                                           std::to_string(kept) + " bytes");
  }
}

std::optional<std::string_view> LineReader::next() {
  std::size_t scan = begin_;  // bytes before scan hold no line end
  while (true) {
    if (!started_ && (end_ - begin_ >= 3 || eof_)) {
      started_ = true;
      if (end_ - begin_ >= 3 && std::memcmp(buffer_.get() + begin_, "\xef\xbb\xbf", 3) == 0)
        scan = begin_ += 3;  // a UTF-8 byte order mark
    }
    if (started_) {
      const char* data = buffer_.get();
      while (scan < end_ && data[scan] != '\n' && data[scan] != '\r' && data[scan] != '\0') ++scan;
      if (scan < end_ && data[scan] == '\0')
        input_error(path_, where(scan), "a NUL byte: this is not a text file");
      // A '\r' last in the buffer may be the first half of "\r\n": read on to see.
      const bool complete = scan < end_ && (data[scan] == '\n' || scan + 1 < end_ || eof_);
      if (complete || (eof_ && begin_ < end_)) {
        const std::string_view line(data + begin_, scan - begin_);
        if (line.size() > max_line_)
          input_error(path_, where(begin_),
                      "the line is longer than " + std::to_string(max_line_) +
                          " bytes, the most a text file's line may hold");
        std::size_t after = scan;
        if (after < end_ && data[after++] == '\r' && after < end_ && data[after] == '\n') ++after;
        begin_ = after;
        ++line_number_;
        return line;
      }
      if (eof_) return std::nullopt;
    }
    scan -= begin_;
    make_room();
    if (!fill()) eof_ = true;
  }
}

bool is_integer_literal(std::string_view token) {
  if (!token.empty() && (token[0] == '+' || token[0] == '-')) token.remove_prefix(1);
  return !token.empty() &&
         std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

ParseStatus parse_int64(std::string_view token, std::int64_t& value) {
  if (!is_integer_literal(token)) return ParseStatus::invalid;
  if (token[0] == '+') token.remove_prefix(1);  // from_chars takes '-' but not '+'
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
  return ec == std::errc{} && end == token.data() + token.size() ? ParseStatus::ok
                                                                 : ParseStatus::invalid;
}

namespace {
template <class F>
ParseStatus parse_floating(std::string_view token, F& value) {
  if (!token.empty() && token[0] == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token[0] == '-') return ParseStatus::invalid;
  }
  if (token.empty()) return ParseStatus::invalid;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size()) return ParseStatus::invalid;
  if (ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
  return ec == std::errc{} ? ParseStatus::ok : ParseStatus::invalid;
}
}  // namespace

ParseStatus parse_double(std::string_view token, double& value) { return parse_floating(token, value); }
ParseStatus parse_float(std::string_view token, float& value) { return parse_floating(token, value); }

std::string format_double(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace io

// ---- format dispatch -------------------------------------------------------------------

std::optional<FileFormat> parse_file_format(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "npy") return FileFormat::npy;
  if (lower == "mtx") return FileFormat::mtx;
  if (lower == "csv" || lower == "txt") return FileFormat::csv;
  return std::nullopt;
}

std::optional<FileFormat> io::format_of_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos) return std::nullopt;
  return parse_file_format(std::string_view(name).substr(dot + 1));
}

FileFormat format_from_path(const std::string& path) {
  constexpr const char* kSupported = "supported: .npy, .mtx, .csv, .txt";
  if (const auto format = io::format_of_extension(path)) return *format;
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot + 1 == name.size())
    fail(ErrorCategory::usage, io::quoted_path(path) +
                                   " has no file extension to choose a format by (" + kSupported +
                                   ")");
  std::string extension = ".";  // built in place: "." + substr trips GCC 12's -Wrestrict
  extension.append(name, dot + 1);
  fail(ErrorCategory::usage, "unsupported file extension " + io::quoted(extension) + " of " +
                                 io::quoted_path(path) + " (" + kSupported + ")");
}

AnyMatrix read_matrix(const std::string& path, const ReadOptions& options) {
  switch (format_from_path(path)) {
    case FileFormat::npy:
      return read_npy(path);
    case FileFormat::mtx:
      return read_mtx(path);
    case FileFormat::csv:
      return read_csv(path, options);
  }
  fail(ErrorCategory::internal, "unhandled file format");
}

void write_matrix(const std::string& path, const AnyMatrix& matrix, std::optional<FileFormat> format) {
  switch (output_format(path, format)) {
    case FileFormat::npy:
      return write_npy(path, matrix);
    case FileFormat::mtx:
      return write_mtx(path, matrix);
    case FileFormat::csv:
      return write_csv(path, matrix);
  }
  fail(ErrorCategory::internal, "unhandled file format");
}

}  // namespace gemmkit

// Format dispatch and the helpers in io_common.hpp.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
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

LineReader::LineReader(const std::string& path)
    : path_(path), file_(open_for_reading(path)), file_size_(regular_file_size(file_.get())) {}

LineReader::~LineReader() { std::free(buffer_); }

std::optional<std::string_view> LineReader::next() {
  errno = 0;
  const ssize_t n = getline(&buffer_, &capacity_, file_.get());
  if (n < 0) {
    if (std::ferror(file_.get()))
      fail(ErrorCategory::input, "cannot read " + quoted_path(path_) + ": " + std::strerror(errno));
    return std::nullopt;
  }
  ++line_number_;
  std::string_view line(buffer_, static_cast<std::size_t>(n));
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
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

ParseStatus parse_double(std::string_view token, double& value) {
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

std::string format_double(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace io

// ---- format dispatch -------------------------------------------------------------------

FileFormat format_from_path(const std::string& path) {
  constexpr const char* kSupported = "supported: .npy, .mtx, .csv, .txt";
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot + 1 == name.size())
    fail(ErrorCategory::usage, io::quoted_path(path) +
                                   " has no file extension to choose a format by (" + kSupported +
                                   ")");
  std::string ext = name.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "npy") return FileFormat::npy;
  if (ext == "mtx") return FileFormat::mtx;
  if (ext == "csv" || ext == "txt") return FileFormat::csv;
  fail(ErrorCategory::usage, "unsupported file extension " +
                                 io::quoted("." + name.substr(dot + 1)) + " of " +
                                 io::quoted_path(path) + " (" + kSupported + ")");
}

AnyMatrix read_matrix(const std::string& path) {
  switch (format_from_path(path)) {
    case FileFormat::npy:
      return read_npy(path);
    case FileFormat::mtx:
      return read_mtx(path);
    case FileFormat::csv:
      return read_csv(path);
  }
  fail(ErrorCategory::internal, "unhandled file format");
}

void write_matrix(const std::string& path, const AnyMatrix& matrix) {
  switch (output_format(path)) {
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

// NumPy .npy files (format versions 1.0, 2.0 and 3.0). Everything about the header is
// checked, and the data length compared with the shape, before anything is allocated.
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "gemmkit/io.hpp"
#include "runtime/host_matrix_type.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

// The writer copies memory straight into '<' data, and the reader takes '=' (native) as '<'.
static_assert(std::endian::native == std::endian::little,
              "the .npy code assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr std::int64_t kMaxHeaderBytes = 64 * 1024;

std::string at_byte(std::int64_t offset) { return "at byte " + std::to_string(offset); }

// The element types a file may hold, before widening.
enum class Stored { f8, f4, f2, bf16, i8, i4, i2, i1, u8, u4, u2, u1, b1 };

struct StoredInfo {
  Stored stored;
  DType loads_as;
  int itemsize;
};

struct NpyHeader {
  StoredInfo type{};
  bool fortran_order = false;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> shape;  // every dimension (for arrays of any rank: limb tables)
  std::int64_t data_offset = 0;     // bytes before the first element
};

// Parses the header dictionary, a Python literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
// Offsets in messages count from the start of the file.
class HeaderParser {
 public:
  // any_rank: shapes of any number of dimensions (only `shape` is set); otherwise a matrix's.
  HeaderParser(const std::string& path, std::string_view text, std::int64_t base, bool any_rank = false)
      : path_(path), text_(text), base_(base), any_rank_(any_rank) {}

  NpyHeader parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::int64_t key_pos = pos_;
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &have_descr;
        header.type = descr();
      } else if (key == "fortran_order") {
        seen = &have_order;
        header.fortran_order = boolean();
      } else if (key == "shape") {
        seen = &have_shape;
        shape(header);
      } else {
        error(key_pos, "unexpected key " + io::quoted(key) + " in the header");
      }
      if (*seen) error(key_pos, "key " + io::quoted(key) + " appears twice in the header");
      *seen = true;
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        error(pos_, "expected ',' or '}' in the header, found " + found());
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != static_cast<std::int64_t>(text_.size()))
      error(pos_, "unexpected text after the header dictionary: " + found());
    const char* missing = !have_descr   ? "descr"
                          : !have_order ? "fortran_order"
                          : !have_shape ? "shape"
                                        : nullptr;
    if (missing) error(0, "the header has no '" + std::string(missing) + "' key");
    return header;
  }

 private:
  [[noreturn]] void error(std::int64_t pos, const std::string& what) const {
    io::input_error(path_, at_byte(base_ + pos), what);
  }
  char peek() const { return pos_ < static_cast<std::int64_t>(text_.size()) ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= static_cast<std::int64_t>(text_.size()); }
  std::string found() const {
    return at_end() ? "the end of the header" : io::quoted(text_.substr(pos_, 20));
  }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c || at_end())
      error(pos_, "expected '" + std::string(1, c) + "' in the header, found " + found());
    ++pos_;
  }

  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"')
      error(pos_, "expected a quoted string in the header, found " + found());
    const std::int64_t start = ++pos_;
    while (!at_end() && peek() != quote) {
      if (peek() == '\\') error(pos_, "escape sequences in header strings are not supported");
      ++pos_;
    }
    if (at_end()) error(start - 1, "unterminated string in the header");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool boolean() {
    for (const std::string_view word : {"True", "False"}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += static_cast<std::int64_t>(word.size());
        return word == "True";
      }
    }
    error(pos_, "fortran_order must be True or False, found " + found());
  }

  StoredInfo descr() {
    const std::int64_t pos = pos_;
    if (peek() == '[' || peek() == '{')
      error(pos, "structured dtypes (a list or dict as descr) are not supported");
    const std::string d = string_literal();
    // ml_dtypes' bfloat16 has no type code of its own: np.save writes it as a 2-byte void
    // ('<V2'), and the usual workaround writes str(dtype), 'bfloat16'.
    if (d == "bfloat16" || d == "<V2" || d == "|V2") return {Stored::bf16, DType::bf16, 2};
    if (d.size() < 3) error(pos, "unsupported dtype " + io::quoted(d));
    const char order = d[0];
    const std::string code = d.substr(1);
    struct Code {
      const char* code;
      StoredInfo info;
    };
    static constexpr Code kCodes[] = {
        {"f8", {Stored::f8, DType::f64, 8}}, {"f4", {Stored::f4, DType::f32, 4}},
        {"f2", {Stored::f2, DType::f16, 2}}, {"i8", {Stored::i8, DType::i64, 8}},
        {"i4", {Stored::i4, DType::i32, 4}}, {"i2", {Stored::i2, DType::i32, 2}},
        {"i1", {Stored::i1, DType::i32, 1}}, {"u8", {Stored::u8, DType::i64, 8}},
        {"u4", {Stored::u4, DType::i64, 4}}, {"u2", {Stored::u2, DType::i32, 2}},
        {"u1", {Stored::u1, DType::i32, 1}}, {"b1", {Stored::b1, DType::i32, 1}},
    };
    const Code* match = nullptr;
    for (const auto& c : kCodes)
      if (code == c.code) match = &c;
    if (!match || (order != '<' && order != '>' && order != '=' && order != '|' && order != '!'))
      error(pos, "unsupported dtype " + io::quoted(d) +
                     " (supported: f8 f4 f2 i8 i4 i2 i1 u8 u4 u2 u1 b1, bfloat16)");
    // Byte order means nothing for one-byte types; for wider ones only little-endian
    // ('<', or '=' native on this little-endian host) is read.
    if (match->info.itemsize > 1) {
      if (order == '>' || order == '!')
        error(pos, "big-endian dtype " + io::quoted(d) + " is not supported (save it as '<" + code +
                       "')");
      if (order == '|')
        error(pos, "dtype " + io::quoted(d) + " has no byte order ('|') but needs one");
    }
    return match->info;
  }

  std::int64_t dimension() {
    const std::int64_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    const std::string_view digits = text_.substr(start, pos_ - start);
    if (digits.empty())
      error(pos_, "expected a non-negative dimension in the shape, found " + found());
    std::int64_t value = 0;
    if (io::parse_int64(digits, value) != io::ParseStatus::ok)
      error(start, "shape dimension " + io::quoted(digits) + " is too large");
    if (peek() == 'L') ++pos_;  // Python 2 long literal, as old numpy wrote
    return value;
  }

  void shape(NpyHeader& header) {
    const std::int64_t start = pos_;
    expect('(');
    std::vector<std::int64_t> dims;
    skip_space();
    while (peek() != ')') {
      dims.push_back(dimension());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        error(pos_, "expected ',' or ')' in the shape, found " + found());
      }
    }
    ++pos_;
    header.shape = dims;
    if (any_rank_) return;
    if (dims.empty())
      error(start,
            "0-dimensional arrays (shape ()) are not supported; a matrix needs 1 or 2 dimensions");
    if (dims.size() > 2)
      error(start, std::to_string(dims.size()) + "-dimensional shape " +
                       io::quoted(text_.substr(start, pos_ - start)) +
                       " is not supported; a matrix needs 1 or 2 dimensions");
    header.rows = dims[0];
    header.cols = dims.size() == 2 ? dims[1] : 1;
  }

  const std::string& path_;
  std::string_view text_;
  std::int64_t base_;
  bool any_rank_;
  std::int64_t pos_ = 0;
};

std::uint64_t load_unsigned(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

template <class T>
T decode(Stored stored, const unsigned char* p, const std::string& path, std::int64_t offset) {
  // f2 and bf16 files load as themselves, bit for bit.
  if constexpr (is_half_v<T>) {
    return T::from_bits(static_cast<std::uint16_t>(load_unsigned(p, 2)));
  } else {
    switch (stored) {
      case Stored::f8:
        return static_cast<T>(std::bit_cast<double>(load_unsigned(p, 8)));
      case Stored::f4:
        return static_cast<T>(std::bit_cast<float>(static_cast<std::uint32_t>(load_unsigned(p, 4))));
      case Stored::f2:
        return static_cast<T>(half_bits_to_float(static_cast<std::uint16_t>(load_unsigned(p, 2))));
      case Stored::bf16:
        return static_cast<T>(bfloat16_bits_to_float(static_cast<std::uint16_t>(load_unsigned(p, 2))));
      case Stored::i8:
        return static_cast<T>(static_cast<std::int64_t>(load_unsigned(p, 8)));
      case Stored::i4:
        return static_cast<T>(static_cast<std::int32_t>(load_unsigned(p, 4)));
      case Stored::i2:
        return static_cast<T>(static_cast<std::int16_t>(load_unsigned(p, 2)));
      case Stored::i1:
        return static_cast<T>(static_cast<std::int8_t>(p[0]));
      case Stored::u8: {
        const std::uint64_t v = load_unsigned(p, 8);
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          io::input_error(path, at_byte(offset),
                          "uint64 value " + std::to_string(v) + " does not fit an i64");
        return static_cast<T>(v);
      }
      case Stored::u4:
        return static_cast<T>(load_unsigned(p, 4));
      case Stored::u2:
        return static_cast<T>(load_unsigned(p, 2));
      case Stored::u1:
        return static_cast<T>(p[0]);
      case Stored::b1:
        return static_cast<T>(p[0] != 0);
    }
  }
  return T{};
}

// Reads exactly `bytes` bytes or reports the file as truncated at `offset`.
void read_exactly(std::FILE* file, void* buffer, std::size_t bytes, const std::string& path,
                  std::int64_t offset, const char* what) {
  const std::size_t got = std::fread(buffer, 1, bytes, file);
  if (got == bytes) return;
  if (std::ferror(file))
    io::input_error(path, at_byte(offset + static_cast<std::int64_t>(got)), std::strerror(errno));
  io::input_error(path, at_byte(offset + static_cast<std::int64_t>(got)),
                  std::string("the file ends inside the ") + what + " (" +
                      std::to_string(bytes - got) + " more bytes expected)");
}

NpyHeader read_header(std::FILE* file, const std::string& path,
                      std::optional<std::int64_t> file_size, bool any_rank = false) {
  unsigned char preamble[12];
  const std::size_t got = std::fread(preamble, 1, 8, file);
  if (got < kMagicSize || std::memcmp(preamble, kMagic, kMagicSize) != 0)
    io::input_error(path, at_byte(0),
                    "not a .npy file: it does not start with the magic \\x93NUMPY");
  if (got < 8)
    io::input_error(path, at_byte(static_cast<std::int64_t>(got)),
                    "the file ends inside the format version");
  const int major = preamble[6], minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0)
    io::input_error(path, at_byte(6),
                    "unsupported .npy format version " + std::to_string(major) + "." +
                        std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const int length_bytes = major == 1 ? 2 : 4;
  read_exactly(file, preamble + 8, static_cast<std::size_t>(length_bytes), path, 8,
               "header length");
  const auto header_length = static_cast<std::int64_t>(load_unsigned(preamble + 8, length_bytes));
  const std::int64_t header_start = 8 + length_bytes;
  if (header_length > kMaxHeaderBytes)
    io::input_error(path, at_byte(8),
                    "header length " + std::to_string(header_length) + " exceeds the " +
                        std::to_string(kMaxHeaderBytes) + "-byte limit");
  if (file_size && header_start + header_length > *file_size)
    io::input_error(path, at_byte(8),
                    "header length " + std::to_string(header_length) +
                        " runs past the end of the " + std::to_string(*file_size) + "-byte file");
  std::string text(static_cast<std::size_t>(header_length), '\0');
  read_exactly(file, text.data(), text.size(), path, header_start, "header");
  if (text.empty() || text.back() != '\n')
    io::input_error(path, at_byte(header_start + header_length - 1),
                    "the header is not terminated by a newline");
  // Version 1.0 and 2.0 headers are latin-1, 3.0 utf-8; every byte the parser accepts is
  // ASCII, so one byte-wise parser serves all three.
  NpyHeader header = HeaderParser(path, text, header_start, any_rank).parse();
  header.data_offset = header_start + header_length;
  return header;
}

// A pipe's length is unknown until it ends, so its data is read into a buffer that grows
// only as bytes really arrive: a short stream that declares a huge shape fails at its end
// without the huge allocation.
std::vector<unsigned char> read_stream_data(std::FILE* file, const std::string& path,
                                            const NpyHeader& h, std::int64_t data_bytes,
                                            const std::string& shape) {
  std::vector<unsigned char> raw;
  std::size_t got = 0;
  const auto want = static_cast<std::size_t>(data_bytes);
  while (got < want) {
    raw.resize(std::min(want, std::max<std::size_t>(2 * got, 1 << 20)));
    const std::size_t n = std::fread(raw.data() + got, 1, raw.size() - got, file);
    got += n;
    if (got == raw.size()) continue;
    const std::int64_t at = h.data_offset + static_cast<std::int64_t>(got);
    if (std::ferror(file)) io::input_error(path, at_byte(at), std::strerror(errno));
    io::input_error(path, at_byte(at),
                    "truncated: shape " + shape + " of " + std::to_string(h.type.itemsize) +
                        "-byte elements needs " + std::to_string(data_bytes) +
                        " bytes of data, but the stream ends after " + std::to_string(got));
  }
  return raw;
}

// `raw`: the data already read (from a pipe), or empty to read it from `file` in chunks.
template <class T>
Matrix<T> read_data(std::FILE* file, const std::string& path, const NpyHeader& h,
                    const std::vector<unsigned char>& raw) {
  Matrix<T> m(h.rows, h.cols);
  const std::int64_t count = h.rows * h.cols;
  const int itemsize = h.type.itemsize;
  constexpr std::int64_t kChunkElements = 1 << 16;
  std::vector<unsigned char> chunk(
      raw.empty() ? static_cast<std::size_t>(std::min(count, kChunkElements) * itemsize) : 0);
  // Elements arrive in file order: row by row (C), or column by column (Fortran).
  std::int64_t i = 0, j = 0;
  for (std::int64_t done = 0; done < count;) {
    const std::int64_t n = std::min(count - done, kChunkElements);
    const std::int64_t offset = h.data_offset + done * itemsize;
    const unsigned char* bytes = chunk.data();
    if (raw.empty())
      read_exactly(file, chunk.data(), static_cast<std::size_t>(n * itemsize), path, offset,
                   "data");
    else
      bytes = raw.data() + done * itemsize;
    for (std::int64_t k = 0; k < n; ++k) {
      m(i, j) = decode<T>(h.type.stored, bytes + k * itemsize, path, offset + k * itemsize);
      if (h.fortran_order) {
        if (++i == h.rows) i = 0, ++j;
      } else if (++j == h.cols) {
        j = 0, ++i;
      }
    }
    done += n;
  }
  if (std::fgetc(file) != EOF)
    io::input_error(path, at_byte(h.data_offset + count * itemsize),
                    "unexpected bytes after the data of shape (" + std::to_string(h.rows) + ", " +
                        std::to_string(h.cols) + ")");
  return m;
}

template <class T>
const char* descr_of() {
  if constexpr (std::is_same_v<T, double>)
    return "<f8";
  else if constexpr (std::is_same_v<T, float>)
    return "<f4";
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return "<i4";
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return "<i8";
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return "|i1";
  else if constexpr (std::is_same_v<T, Half>)
    return "<f2";
  else  // bfloat16 as np.save writes ml_dtypes' bfloat16: an untyped 2-byte void
    return "<V2";
}

}  // namespace

namespace io {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (const std::int64_t extent : shape) {
    if (text.size() > 1) text += ", ";
    text += std::to_string(extent);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

const char* npy_descr(DType dtype, const std::string& path) {
  // tf32 is an f32 matrix computed in tf32, and no host matrix holds i8.
  if (dtype != DType::tf32 && dtype != DType::i8)
    return detail::visit_storage(dtype, []<class T>(std::type_identity<T>) { return descr_of<T>(); });
  fail(ErrorCategory::usage, "writing " + io::quoted_path(path) + ": " + std::string(dtype_name(dtype)) +
                                 " has no .npy form");
}

std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': ";
  dict += shape_text(shape) + ", }";
  // Pad with spaces and a final newline so that the data starts 64-byte aligned, as numpy
  // does; version 2.0 only when the header outgrows the 2-byte length field.
  const auto padded = [&](std::size_t preamble) { return (preamble + dict.size() + 1 + 63) / 64 * 64 - preamble; };
  const bool v1 = padded(10) <= 65535;
  dict.append(padded(v1 ? 10 : 12) - dict.size() - 1, ' ');
  dict += '\n';
  std::string head(kMagic, kMagicSize);
  head += static_cast<char>(v1 ? 1 : 2);
  head += '\0';
  for (std::size_t b = 0; b < (v1 ? 2u : 4u); ++b) head += static_cast<char>(dict.size() >> (8 * b) & 0xff);
  return head + dict;
}

NpyU64Header read_npy_u64_header(std::FILE* file, const std::string& path,
                                 std::optional<std::int64_t> file_size) {
  const NpyHeader h = read_header(file, path, file_size, true);
  if (h.type.stored != Stored::u8)
    input_error(path, at_byte(0), "expected an array of little-endian 64-bit unsigned integers ('<u8')");
  if (h.fortran_order)
    input_error(path, at_byte(0), "expected C order (fortran_order False)");
  return {h.shape, h.data_offset};
}

}  // namespace io

namespace {

// The bytes of data the header's shape needs, checked against a regular file's length.
std::int64_t checked_data_bytes(const std::string& path, const NpyHeader& h,
                                std::optional<std::int64_t> file_size, const std::string& shape) {
  const std::int64_t count = checked_element_count(
      h.rows, h.cols, io::quoted_path(path) + " " + at_byte(h.data_offset) + ": shape");
  const std::int64_t data_bytes = count * h.type.itemsize;  // cannot overflow: count is capped
  if (file_size && *file_size - h.data_offset != data_bytes) {
    const std::int64_t have = *file_size - h.data_offset;
    io::input_error(
        path, at_byte(h.data_offset),
        "shape " + shape + " of " + std::to_string(h.type.itemsize) + "-byte elements needs " +
            std::to_string(data_bytes) + " bytes of data, but the file holds " +
            std::to_string(have) +
            (have < data_bytes ? " (truncated)" : " (unexpected bytes after the data)"));
  }
  return data_bytes;
}

// Appended piecewise: GCC 12's -Wrestrict misfires on "(" + std::to_string(...).
std::string matrix_shape_text(const NpyHeader& h) {
  std::string shape = "(";
  shape += std::to_string(h.rows) + ", " + std::to_string(h.cols) + ")";
  return shape;
}

}  // namespace

NpyLayout read_npy_layout(const std::string& path) {
  io::FilePtr file = io::open_for_reading(path);
  const std::optional<std::int64_t> file_size = io::regular_file_size(file.get());
  if (!file_size) io::input_error(path, "", "not a regular file (reading it in parallel needs one)");
  const NpyHeader h = read_header(file.get(), path, file_size);
  checked_data_bytes(path, h, file_size, matrix_shape_text(h));
  const bool as_is = h.type.stored == Stored::f8 || h.type.stored == Stored::f4 || h.type.stored == Stored::i8 ||
                     h.type.stored == Stored::i4 || h.type.stored == Stored::f2 || h.type.stored == Stored::bf16;
  return {h.type.loads_as, !as_is, h.type.itemsize, h.fortran_order, h.rows, h.cols, h.data_offset};
}

AnyMatrix read_npy(const std::string& path) {
  io::FilePtr file = io::open_for_reading(path);
  const std::optional<std::int64_t> file_size = io::regular_file_size(file.get());
  const NpyHeader h = read_header(file.get(), path, file_size);
  const std::string shape = matrix_shape_text(h);
  const std::int64_t data_bytes = checked_data_bytes(path, h, file_size, shape);
  std::vector<unsigned char> raw;
  if (!file_size)
    raw = io::reporting_memory(path, [&] { return read_stream_data(file.get(), path, h, data_bytes, shape); });
  switch (h.type.loads_as) {
    case DType::f64:
      return read_data<double>(file.get(), path, h, raw);
    case DType::f32:
      return read_data<float>(file.get(), path, h, raw);
    case DType::i32:
      return read_data<std::int32_t>(file.get(), path, h, raw);
    case DType::f16:
      return read_data<Half>(file.get(), path, h, raw);
    case DType::bf16:
      return read_data<BFloat16>(file.get(), path, h, raw);
    default:
      return read_data<std::int64_t>(file.get(), path, h, raw);
  }
}

void write_npy(const std::string& path, const AnyMatrix& matrix) {
  std::visit(
      [&](const auto& m) {
        using T = typename std::decay_t<decltype(m)>::value_type;
        const std::string head = io::npy_header(descr_of<T>(), {m.rows(), m.cols()});
        AtomicFile out(path);
        out.write(head);
        const auto row_bytes = static_cast<std::size_t>(m.cols()) * sizeof(T);
        if (m.ld() == m.cols()) {
          out.write(m.data(), row_bytes * static_cast<std::size_t>(m.rows()));
        } else if (row_bytes > 0) {  // an empty matrix has no rows to address
          for (std::int64_t i = 0; i < m.rows(); ++i) out.write(&m(i, 0), row_bytes);
        }
        out.commit();
      },
      matrix);
}

void write_npy_array(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                     const void* data) {
  std::int64_t count = 1;
  bool valid = true;
  for (const std::int64_t extent : shape) valid = valid && extent >= 0 && !__builtin_mul_overflow(count, extent, &count);
  std::int64_t bytes = 0;
  if (!valid || __builtin_mul_overflow(count, std::int64_t(dtype_size(dtype)), &bytes) || (bytes > 0 && !data))
    fail(ErrorCategory::usage, "writing " + io::quoted_path(path) + ": an array of shape " + io::shape_text(shape) +
                                   " is not valid");
  const char* descr = io::npy_descr(dtype, path);
  AtomicFile out(path);
  out.write(io::npy_header(descr, shape));
  out.write(data, std::size_t(bytes));
  out.commit();
}

}  // namespace gemmkit

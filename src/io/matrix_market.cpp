// Matrix Market exchange format: "matrix coordinate|array real|double|integer|pattern
// general|symmetric|skew-symmetric". Sizes and counts are checked before anything is
// allocated, every index against the size line, and the number of entries against it.
#include <algorithm>
#include <cctype>
#include <limits>
#include <type_traits>
#include <vector>

#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };

struct MtxHeader {
  bool coordinate = true;
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::int64_t rows = 0, cols = 0;
  std::int64_t count = 0;      // stored entries (coordinate) or values (array) the file promises
  std::int64_t size_line = 0;  // line number of the size line, for messages
};

// One parsed value: `integer` for integer and pattern files, `real` otherwise.
struct MtxValue {
  double real = 0;
  std::int64_t integer = 0;
};

std::string line_at(std::int64_t line) { return "line " + std::to_string(line); }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> split_whitespace(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i == line.size()) return tokens;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    tokens.push_back(line.substr(start, i - start));
  }
}

bool is_blank_or_comment(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t\r\f\v");
  return first == std::string_view::npos || line[first] == '%';
}

class MtxParser {
 public:
  explicit MtxParser(const std::string& path) : in_(path), path_(path) {}

  // Calls sink.begin(header) once, then sink.add(i, j, value, line) for every entry with
  // 0-based indices, mirrored entries of symmetric and skew-symmetric files included.
  template <class Sink>
  void parse(Sink& sink) {
    read_banner();
    read_size_line();
    sink.begin(h_);
    if (h_.coordinate)
      read_coordinate(sink);
    else
      read_array(sink);
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    io::input_error(path_, line_at(in_.line_number()), what);
  }

  void read_banner() {
    const auto first = in_.next();
    if (!first) io::input_error(path_, "", "the file is empty (no %%MatrixMarket banner)");
    const auto words = split_whitespace(*first);
    if (words.empty() || lower(words[0]) != "%%matrixmarket")
      error("not a Matrix Market file: the first line must start with %%MatrixMarket, found " +
            io::quoted(*first));
    if (words.size() != 5)
      error(
          "the banner needs 4 words after %%MatrixMarket (object, format, field, symmetry), "
          "found " +
          std::to_string(words.size() - 1));
    const std::string object = lower(words[1]), format = lower(words[2]), field = lower(words[3]),
                      symmetry = lower(words[4]);
    if (object != "matrix")
      error("unsupported object " + io::quoted(words[1]) + " (only 'matrix')");

    if (format == "coordinate")
      h_.coordinate = true;
    else if (format == "array")
      h_.coordinate = false;
    else
      error("unknown format " + io::quoted(words[2]) + " (expected coordinate or array)");

    if (field == "real" || field == "double")
      h_.field = Field::real;
    else if (field == "integer")
      h_.field = Field::integer;
    else if (field == "pattern")
      h_.field = Field::pattern;
    else if (field == "complex")
      error("complex matrices are not supported (field 'complex')");
    else
      error("unknown field " + io::quoted(words[3]) +
            " (expected real, double, integer or pattern)");

    if (symmetry == "general")
      h_.symmetry = Symmetry::general;
    else if (symmetry == "symmetric")
      h_.symmetry = Symmetry::symmetric;
    else if (symmetry == "skew-symmetric")
      h_.symmetry = Symmetry::skew;
    else if (symmetry == "hermitian")
      error("hermitian matrices are not supported");
    else
      error("unknown symmetry " + io::quoted(words[4]) +
            " (expected general, symmetric or skew-symmetric)");

    if (h_.field == Field::pattern && !h_.coordinate)
      error("a pattern matrix must use the coordinate format, not array");
    if (h_.field == Field::pattern && h_.symmetry == Symmetry::skew)
      error("a pattern matrix cannot be skew-symmetric (its entries have no sign)");
  }

  std::int64_t size_field(std::string_view token, const char* name) {
    std::int64_t v = 0;
    const io::ParseStatus status = io::parse_int64(token, v);
    if (status == io::ParseStatus::out_of_range)
      error(std::string(name) + " " + io::quoted(token) + " does not fit a 64-bit integer");
    if (status != io::ParseStatus::ok || v < 0)
      error(std::string(name) + " " + io::quoted(token) + " is not a non-negative integer");
    return v;
  }

  void read_size_line() {
    std::optional<std::string_view> line;
    while ((line = in_.next()) && is_blank_or_comment(*line)) {
    }
    if (!line) error("the file ends before the size line");
    h_.size_line = in_.line_number();
    const auto words = split_whitespace(*line);
    const std::size_t expected = h_.coordinate ? 3 : 2;
    if (words.size() != expected)
      error(std::string("the size line needs ") +
            (h_.coordinate ? "3 numbers (rows, columns, entries)" : "2 numbers (rows, columns)") +
            ", found " + io::quoted(*line));
    h_.rows = size_field(words[0], "row count");
    h_.cols = size_field(words[1], "column count");
    if (h_.symmetry != Symmetry::general && h_.rows != h_.cols)
      error("a " + std::string(h_.symmetry == Symmetry::skew ? "skew-symmetric" : "symmetric") +
            " matrix must be square, not " + std::to_string(h_.rows) + "x" +
            std::to_string(h_.cols));

    // How many entries fit: the lower triangle (with or without the diagonal) for
    // symmetric and skew files, everything for general ones; nullopt when rows*cols
    // overflows, which only a coordinate file can afford.
    std::optional<std::int64_t> positions;
    std::int64_t product = 0;
    if (!__builtin_mul_overflow(h_.rows, h_.cols, &product)) {
      const std::int64_t n = h_.rows;
      // n(n+1)/2 and n(n-1)/2, halving the even factor first so nothing exceeds n*n.
      const std::int64_t m = h_.symmetry == Symmetry::symmetric ? n + 1 : n - 1;
      positions = h_.symmetry == Symmetry::general ? product : n % 2 == 0 ? n / 2 * m : m / 2 * n;
    }
    if (h_.coordinate) {
      h_.count = size_field(words[2], "entry count");
      if (positions && h_.count > *positions)
        error("entry count " + std::to_string(h_.count) + " exceeds the " +
              std::to_string(*positions) + " positions a " + std::to_string(h_.rows) + "x" +
              std::to_string(h_.cols) +
              (h_.symmetry == Symmetry::general ? "" : " (lower triangle)") + " matrix has");
    } else {
      checked_element_count(h_.rows, h_.cols,
                            io::quoted_path(path_) + " " + line_at(h_.size_line) + ": array size");
      h_.count = *positions;
    }
    // Every entry takes a few bytes ("1\n", "1 1\n", "1 1 1\n"), so the file size bounds the
    // count: a size line promising more is refused before a dense matrix is allocated.
    const std::int64_t min_bytes = !h_.coordinate ? 2 : h_.field == Field::pattern ? 4 : 6;
    if (const auto size = in_.file_size(); size && h_.count > 0 && h_.count - 1 > *size / min_bytes)
      error(std::to_string(h_.count) + (h_.coordinate ? " entries" : " values") +
            " cannot fit in the rest of a " + std::to_string(*size) + "-byte file");
  }

  MtxValue value(std::string_view token) {
    MtxValue v;
    if (h_.field == Field::pattern) {
      v.integer = 1;
    } else if (h_.field == Field::integer) {
      const io::ParseStatus status = io::parse_int64(token, v.integer);
      if (status == io::ParseStatus::out_of_range)
        error("integer value " + io::quoted(token) + " does not fit a 64-bit integer");
      if (status != io::ParseStatus::ok) error("value " + io::quoted(token) + " is not an integer");
    } else {
      const io::ParseStatus status = io::parse_double(token, v.real);
      if (status == io::ParseStatus::out_of_range)
        error("value " + io::quoted(token) + " is out of the range of a double");
      if (status != io::ParseStatus::ok) error("value " + io::quoted(token) + " is not a number");
    }
    return v;
  }

  MtxValue negated(const MtxValue& v) {
    if (v.integer == std::numeric_limits<std::int64_t>::min())
      error("the mirrored entry -(" + std::to_string(v.integer) +
            ") of a skew-symmetric matrix does not fit a 64-bit integer");
    return {-v.real, -v.integer};
  }

  std::int64_t index(std::string_view token, std::int64_t limit, const char* name) {
    std::int64_t v = 0;
    const io::ParseStatus status = io::parse_int64(token, v);
    if (status == io::ParseStatus::invalid)
      error(std::string(name) + " index " + io::quoted(token) + " is not an integer");
    if (status == io::ParseStatus::out_of_range || v < 1 || v > limit)
      error(std::string(name) + " index " + io::quoted(token) + " is outside 1.." +
            std::to_string(limit) + " (the size line says " + std::to_string(h_.rows) + "x" +
            std::to_string(h_.cols) + ")");
    return v - 1;
  }

  template <class Sink>
  void add(Sink& sink, std::int64_t i, std::int64_t j, const MtxValue& v) {
    const std::int64_t line = in_.line_number();
    sink.add(i, j, v, line);
    if (i == j) return;
    if (h_.symmetry == Symmetry::symmetric) sink.add(j, i, v, line);
    if (h_.symmetry == Symmetry::skew) sink.add(j, i, negated(v), line);
  }

  std::string promise() const {
    return "the size line (" + line_at(h_.size_line) + ") promises " + std::to_string(h_.count);
  }

  template <class Sink>
  void read_coordinate(Sink& sink) {
    const std::size_t fields = h_.field == Field::pattern ? 2 : 3;
    std::int64_t seen = 0;
    while (const auto line = in_.next()) {
      if (is_blank_or_comment(*line)) continue;
      if (seen == h_.count) error("more entries than " + promise());
      const auto words = split_whitespace(*line);
      if (words.size() != fields)
        error(std::string("an entry needs ") +
              (fields == 2 ? "2 fields (row, column)" : "3 fields (row, column, value)") +
              ", found " + std::to_string(words.size()) + ": " + io::quoted(*line));
      const std::int64_t i = index(words[0], h_.rows, "row");
      const std::int64_t j = index(words[1], h_.cols, "column");
      if (h_.symmetry == Symmetry::symmetric && i < j)
        error("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
              ") lies above the diagonal; a symmetric file stores only the lower triangle");
      if (h_.symmetry == Symmetry::skew && i <= j)
        error("entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") " +
              (i == j ? "is on the diagonal, which is zero in" : "lies above the diagonal of") +
              " a skew-symmetric file (only the strict lower triangle is stored)");
      add(sink, i, j, value(fields == 3 ? words[2] : std::string_view()));
      ++seen;
    }
    if (seen < h_.count)
      io::input_error(path_, "", "found " + std::to_string(seen) + " entries, but " + promise());
  }

  template <class Sink>
  void read_array(Sink& sink) {
    // Column by column, from the diagonal down (symmetric), below it (skew), or whole.
    const std::int64_t first_row_offset = h_.symmetry == Symmetry::general     ? -1
                                          : h_.symmetry == Symmetry::symmetric ? 0
                                                                               : 1;
    auto first_row = [&](std::int64_t col) {
      return first_row_offset < 0 ? 0 : col + first_row_offset;
    };
    // The count is exact, so the cursor never has to step past the last stored position.
    std::int64_t seen = 0, i = first_row(0), j = 0;
    while (const auto line = in_.next()) {
      if (is_blank_or_comment(*line)) continue;
      for (const std::string_view token : split_whitespace(*line)) {
        if (seen == h_.count)
          error("more values than the " + std::to_string(h_.count) + " that a " +
                std::to_string(h_.rows) + "x" + std::to_string(h_.cols) + " array holds");
        add(sink, i, j, value(token));
        ++seen;
        if (++i == h_.rows) {
          ++j;
          i = first_row(j);
        }
      }
    }
    if (seen < h_.count)
      io::input_error(path_, "",
                      "found " + std::to_string(seen) + " values, but a " +
                          std::to_string(h_.rows) + "x" + std::to_string(h_.cols) +
                          (h_.symmetry == Symmetry::general ? "" : " (lower triangle)") +
                          " array needs " + std::to_string(h_.count));
  }

  io::LineReader in_;
  const std::string& path_;
  MtxHeader h_;
};

struct EntriesSink {
  SparseEntries& out;

  void begin(const MtxHeader& h) {
    out.rows = h.rows;
    out.cols = h.cols;
    out.dtype = h.field == Field::real ? DType::f64 : DType::i64;
    // The count is checked against the matrix, not the file size, so reserve modestly
    // and let an honest file grow the vectors.
    const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(h.count, 1 << 20));
    out.row.reserve(reserve);
    out.col.reserve(reserve);
    if (out.dtype == DType::f64)
      out.real_values.reserve(reserve);
    else
      out.int_values.reserve(reserve);
  }
  void add(std::int64_t i, std::int64_t j, const MtxValue& v, std::int64_t) {
    out.row.push_back(i);
    out.col.push_back(j);
    if (out.dtype == DType::f64)
      out.real_values.push_back(v.real);
    else
      out.int_values.push_back(v.integer);
  }
};

// Densifies while parsing; duplicate coordinate entries are summed.
struct DenseSink {
  const std::string& path;
  AnyMatrix out;
  bool integer = false;
  bool accumulate = false;  // array files set each element once; assigning keeps -0.0

  void begin(const MtxHeader& h) {
    checked_element_count(h.rows, h.cols,
                          io::quoted_path(path) + " " + line_at(h.size_line) + ": matrix size");
    integer = h.field != Field::real;
    accumulate = h.coordinate;
    if (integer)
      out = Matrix<std::int64_t>(h.rows, h.cols);
    else
      out = Matrix<double>(h.rows, h.cols);
  }
  void add(std::int64_t i, std::int64_t j, const MtxValue& v, std::int64_t line) {
    if (!integer) {
      double& cell = std::get<Matrix<double>>(out)(i, j);
      cell = accumulate ? cell + v.real : v.real;
      return;
    }
    std::int64_t& cell = std::get<Matrix<std::int64_t>>(out)(i, j);
    if (!accumulate) {
      cell = v.integer;
    } else if (__builtin_add_overflow(cell, v.integer, &cell)) {
      io::input_error(path, line_at(line),
                      "the sum of the entries at (" + std::to_string(i + 1) + ", " +
                          std::to_string(j + 1) + ") overflows a 64-bit integer");
    }
  }
};

std::string text_of(double v) { return io::format_double(v); }
std::string text_of(std::int64_t v) { return std::to_string(v); }

}  // namespace

SparseEntries read_mtx_entries(const std::string& path) {
  return io::reporting_memory(path, [&] {
    SparseEntries entries;
    EntriesSink sink{entries};
    MtxParser(path).parse(sink);
    return entries;
  });
}

AnyMatrix read_mtx(const std::string& path) {
  return io::reporting_memory(path, [&] {
    DenseSink sink{path, {}};
    MtxParser(path).parse(sink);
    return std::move(sink.out);
  });
}

void write_mtx(const std::string& path, const AnyMatrix& matrix) {
  std::visit(
      [&](const auto& m) {
        using T = typename std::decay_t<decltype(m)>::value_type;
        using Wide = std::conditional_t<is_float_storage_v<T>, double, std::int64_t>;
        AtomicFile out(path);
        std::string text = std::string("%%MatrixMarket matrix array ") +
                           (is_float_storage_v<T> ? "real" : "integer") + " general\n" +
                           std::to_string(m.rows()) + " " + std::to_string(m.cols()) + "\n";
        // Floats are written as the double they widen to, so the text reads back as exactly
        // the stored value. An empty matrix has no values, however many columns it claims.
        for (std::int64_t j = 0; m.rows() > 0 && j < m.cols(); ++j) {
          for (std::int64_t i = 0; i < m.rows(); ++i) {
            text += text_of(static_cast<Wide>(m(i, j)));
            text += '\n';
            if (text.size() > (1 << 20)) {
              out.write(text);
              text.clear();
            }
          }
        }
        out.write(text);
        out.commit();
      },
      matrix);
}

}  // namespace gemmkit

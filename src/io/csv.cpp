// CSV and plain text: one matrix row per line, values separated by commas and/or
// whitespace, '#' comments, blank lines ignored.
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string at(std::int64_t line, std::size_t column) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The values of a file as i64 or f64 (or the dtype its "# dtype:" header declares).
// Without a header they stay integers until the first token that is not an integer literal;
// then all become doubles. An integer literal too large for int64 in a file of integers is
// an error, unless the caller asked for a floating-point dtype.
class Values {
 public:
  Values(const std::string& path, bool float_wanted) : path_(path), float_wanted_(float_wanted) {}

  void declare(DType dtype) {
    declared_ = dtype;
    integers_ = is_integer(dtype);
  }

  void add(std::string_view token, std::int64_t line, std::size_t column) {
    if (integers_) {
      std::int64_t v = 0;
      const io::ParseStatus status = io::parse_int64(token, v);
      if (status == io::ParseStatus::ok && declared_ == DType::i32 &&
          (v < INT32_MIN || v > INT32_MAX))
        io::input_error(path_, at(line, column),
                        "integer " + io::quoted(token) + " does not fit i32, the file's dtype");
      if (status == io::ParseStatus::ok) {
        ints_.push_back(v);
        return;
      }
      if (declared_)
        io::input_error(path_, at(line, column),
                        io::quoted(token) + (status == io::ParseStatus::out_of_range
                                                 ? " does not fit i64"
                                                 : " is not an integer") +
                            ", and the file declares dtype " +
                            std::string(dtype_name(*declared_)));
      if (status == io::ParseStatus::out_of_range && !float_wanted_ && !overflow_line_) {
        overflow_line_ = line;
        overflow_column_ = column;
        overflow_token_ = token;
      }
      // From here on, f64.
      reals_.assign(ints_.begin(), ints_.end());
      ints_ = {};
      integers_ = false;
    }
    if (!io::is_integer_literal(token)) saw_real_ = true;
    double v = 0;
    io::ParseStatus status;
    if (declared_ == DType::f32) {
      float f = 0;  // parsed as a float to round once
      status = io::parse_float(token, f);
      v = f;
    } else {
      status = io::parse_double(token, v);
    }
    switch (status) {
      case io::ParseStatus::ok:
        reals_.push_back(v);
        return;
      case io::ParseStatus::out_of_range:
        io::input_error(path_, at(line, column),
                        io::quoted(token) + " is out of the range of " +
                            (declared_ == DType::f32 ? "an f32" : "a double"));
      case io::ParseStatus::invalid:
        io::input_error(path_, at(line, column), io::quoted(token) + " is not a number");
    }
  }

  AnyMatrix matrix(std::int64_t rows, std::int64_t cols) const {
    if (overflow_line_ && !saw_real_)
      io::input_error(path_, at(*overflow_line_, overflow_column_),
                      "integer " + io::quoted(overflow_token_) +
                          " does not fit i64 (ask for dtype f64 to read the file as floating "
                          "point)");
    switch (declared_.value_or(integers_ ? DType::i64 : DType::f64)) {
      case DType::i32: return fill(Matrix<std::int32_t>(rows, cols), ints_);
      case DType::i64: return fill(Matrix<std::int64_t>(rows, cols), ints_);
      case DType::f32: return fill(Matrix<float>(rows, cols), reals_);
      case DType::f16: return fill(Matrix<Half>(rows, cols), reals_);
      case DType::bf16: return fill(Matrix<BFloat16>(rows, cols), reals_);
      default: return fill(Matrix<double>(rows, cols), reals_);
    }
  }

 private:
  template <class T, class V>
  static Matrix<T> fill(Matrix<T> m, const std::vector<V>& values) {
    for (std::int64_t i = 0, k = 0; i < m.rows(); ++i)
      for (std::int64_t j = 0; j < m.cols(); ++j)
        m(i, j) = static_cast<T>(values[static_cast<std::size_t>(k++)]);
    return m;
  }

  const std::string& path_;
  bool float_wanted_;
  std::optional<DType> declared_;
  bool integers_ = true, saw_real_ = false;
  std::vector<std::int64_t> ints_;
  std::vector<double> reals_;
  std::optional<std::int64_t> overflow_line_;  // the first integer too large for int64
  std::size_t overflow_column_ = 0;
  std::string overflow_token_;
};

// The dtype named by a comment "# dtype: NAME", or nullopt if `comment` (the text after
// '#') is not one.
std::optional<DType> dtype_header(std::string_view comment, const std::string& path,
                                  std::int64_t line) {
  const auto trim = [](std::string_view t) {
    while (!t.empty() && is_space(t.front())) t.remove_prefix(1);
    while (!t.empty() && is_space(t.back())) t.remove_suffix(1);
    return t;
  };
  comment = trim(comment);
  constexpr std::string_view kKey = "dtype:";
  if (comment.substr(0, kKey.size()) != kKey) return std::nullopt;
  const std::string_view name = trim(comment.substr(kKey.size()));
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype || *dtype == DType::tf32 || *dtype == DType::i8)
    io::input_error(path, "line " + std::to_string(line),
                    "unknown dtype " + io::quoted(name) +
                        " in the '# dtype:' header (expected f64, f32, f16, bf16, i32 or i64)");
  return dtype;
}

// Text for a value. Floating-point values always show a '.', an exponent, inf or nan, so
// that a file of whole floats still reads back as f64 and -0.0 keeps its sign.
std::string text_of(double v) {
  std::string s = io::format_double(v);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}
std::string text_of(std::int64_t v) { return std::to_string(v); }

AnyMatrix parse_csv(const std::string& path, const ReadOptions& options) {
  io::LineReader in(path);
  Values values(path, options.dtype && !is_integer(*options.dtype));
  std::int64_t rows = 0, cols = 0, first_line = 0;
  bool declared = false;
  while (const auto line = in.next()) {
    const std::size_t hash = line->find('#');
    const std::string_view text = line->substr(0, hash);
    // A "# dtype: NAME" line before the first row sets the matrix's dtype.
    if (rows == 0 && !declared && hash != std::string_view::npos &&
        text.find_first_not_of(" \t\r\f\v") == std::string_view::npos) {
      if (const auto dtype = dtype_header(line->substr(hash + 1), path, in.line_number())) {
        values.declare(*dtype);
        declared = true;
        continue;
      }
    }
    std::int64_t width = 0;
    std::size_t i = 0;
    auto skip_space = [&] {
      while (i < text.size() && is_space(text[i])) ++i;
    };
    auto empty_field = [&] {
      io::input_error(
          path, "line " + std::to_string(in.line_number()) + ", column " + std::to_string(i + 1),
          "empty value between separators");
    };
    skip_space();
    if (i == text.size()) continue;  // blank or comment-only line
    while (true) {
      const std::size_t start = i;
      while (i < text.size() && !is_space(text[i]) && text[i] != ',') ++i;
      if (i == start) empty_field();
      values.add(text.substr(start, i - start), in.line_number(), start + 1);
      ++width;
      skip_space();
      if (i == text.size()) break;
      if (text[i] == ',') {
        ++i;
        skip_space();
        if (i == text.size()) empty_field();  // a trailing comma
      }
    }
    if (rows == 0) {
      cols = width;
      first_line = in.line_number();
    } else if (width != cols) {
      io::input_error(path, "line " + std::to_string(in.line_number()),
                      "ragged rows: this row has " + std::to_string(width) + " values, but line " +
                          std::to_string(first_line) + " has " + std::to_string(cols));
    }
    ++rows;
  }
  if (rows == 0) io::input_error(path, "", "no data (the file holds no rows of numbers)");
  return values.matrix(rows, cols);
}

}  // namespace

AnyMatrix read_csv(const std::string& path, const ReadOptions& options) {
  return io::reporting_memory(path, [&] { return parse_csv(path, options); });
}

void write_csv(const std::string& path, const AnyMatrix& matrix) {
  std::visit(
      [&](const auto& m) {
        using T = typename std::decay_t<decltype(m)>::value_type;
        using Wide = std::conditional_t<is_float_storage_v<T>, double, std::int64_t>;
        // An empty file would read back as an error ("no data"), so refuse to write one.
        if (m.rows() == 0 || m.cols() == 0)
          fail(ErrorCategory::usage, "cannot write an empty " + std::to_string(m.rows()) + "x" +
                                         std::to_string(m.cols()) + " matrix as text to " +
                                         io::quoted_path(path) + " (use .npy or .mtx)");
        AtomicFile out(path);
        // Without a header the file would read back as i64 or f64.
        std::string text;
        if (!std::is_same_v<T, double> && !std::is_same_v<T, std::int64_t>)
          text = "# dtype: " + std::string(dtype_name(dtype_of<T>)) + "\n";
        for (std::int64_t i = 0; i < m.rows(); ++i) {
          for (std::int64_t j = 0; j < m.cols(); ++j) {
            if (j) text += ',';
            text += text_of(static_cast<Wide>(m(i, j)));
            if (text.size() > (1 << 20)) {
              out.write(text);
              text.clear();
            }
          }
          text += '\n';
        }
        out.write(text);
        out.commit();
      },
      matrix);
}

}  // namespace gemmkit

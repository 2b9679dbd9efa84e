// CSV and plain text: one matrix row per line, values separated by commas and/or
// whitespace, '#' comments, blank lines ignored.
#include <type_traits>
#include <vector>

#include "gemmkit/io.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Values stay integers until the first token that is not one; then all become doubles.
class Values {
 public:
  void add(std::string_view token, const std::string& path, std::int64_t line, std::size_t column) {
    if (integers_) {
      std::int64_t v = 0;
      if (io::parse_int64(token, v) == io::ParseStatus::ok) {
        ints_.push_back(v);
        return;
      }
      // An integer literal too large for int64, or a real number: from here on, f64.
      reals_.assign(ints_.begin(), ints_.end());
      ints_ = {};
      integers_ = false;
    }
    double v = 0;
    const auto where = [&] {
      return "line " + std::to_string(line) + ", column " + std::to_string(column);
    };
    switch (io::parse_double(token, v)) {
      case io::ParseStatus::ok:
        reals_.push_back(v);
        return;
      case io::ParseStatus::out_of_range:
        io::input_error(path, where(), io::quoted(token) + " is out of the range of a double");
      case io::ParseStatus::invalid:
        io::input_error(path, where(), io::quoted(token) + " is not a number");
    }
  }

  AnyMatrix matrix(std::int64_t rows, std::int64_t cols) const {
    if (integers_) return fill(Matrix<std::int64_t>(rows, cols), ints_);
    return fill(Matrix<double>(rows, cols), reals_);
  }

 private:
  template <class T>
  static Matrix<T> fill(Matrix<T> m, const std::vector<T>& values) {
    for (std::int64_t i = 0, k = 0; i < m.rows(); ++i)
      for (std::int64_t j = 0; j < m.cols(); ++j) m(i, j) = values[static_cast<std::size_t>(k++)];
    return m;
  }

  bool integers_ = true;
  std::vector<std::int64_t> ints_;
  std::vector<double> reals_;
};

// Text for a value. Floating-point values always show a '.', an exponent, inf or nan, so
// that a file of whole floats still reads back as f64 and -0.0 keeps its sign.
std::string text_of(double v) {
  std::string s = io::format_double(v);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}
std::string text_of(std::int64_t v) { return std::to_string(v); }

AnyMatrix parse_csv(const std::string& path) {
  io::LineReader in(path);
  Values values;
  std::int64_t rows = 0, cols = 0, first_line = 0;
  while (const auto line = in.next()) {
    const std::string_view text = line->substr(0, line->find('#'));
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
      values.add(text.substr(start, i - start), path, in.line_number(), start + 1);
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

AnyMatrix read_csv(const std::string& path) {
  return io::reporting_memory(path, [&] { return parse_csv(path); });
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
        std::string text;
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

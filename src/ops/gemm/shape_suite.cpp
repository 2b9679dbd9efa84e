// Shape suites (bench/shapes/*.txt): reading them, and summarising a suite's benchmark rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gemmkit/bench.hpp"
#include "gemmkit/io.hpp"

namespace gemmkit {

std::string SuiteShape::text() const {
  std::string s = shape.text();
  if (trans_a) s += " A^T";
  if (trans_b) s += " B^T";
  if (layout == Layout::col_major) s += " col";
  return s;
}

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool same_problem(const SuiteShape& x, const SuiteShape& y) {
  return x.shape.m == y.shape.m && x.shape.n == y.shape.n && x.shape.k == y.shape.k &&
         x.trans_a == y.trans_a && x.trans_b == y.trans_b && x.layout == y.layout;
}

}  // namespace

std::optional<BenchShape> parse_bench_shape(const std::string& token) {
  std::int64_t sides[3] = {0, 0, 0};
  int side = 0;
  bool digits = false;
  for (char ch : token) {
    if (ch == 'x' || ch == 'X') {
      if (!digits || ++side > 2) return std::nullopt;
      digits = false;
    } else if (ch >= '0' && ch <= '9') {
      if (sides[side] > (std::int64_t{1} << 40)) return std::nullopt;  // absurd, and no overflow
      sides[side] = sides[side] * 10 + (ch - '0');
      digits = true;
    } else {
      return std::nullopt;
    }
  }
  if (side != 2 || !digits || sides[0] < 1 || sides[1] < 1 || sides[2] < 1) return std::nullopt;
  return BenchShape{sides[0], sides[1], sides[2]};
}

ShapeSuite read_shape_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path))
    fail(ErrorCategory::input, "cannot read shape suite " + quoted_path(path));
  ShapeSuite suite;
  suite.path = path;
  suite.name = std::filesystem::path(path).stem().string();
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto bad = [&](const std::string& what) {
      fail(ErrorCategory::input, path + ":" + std::to_string(line_no) + ": " + what);
    };
    const auto hash = line.find('#');
    const std::string comment = hash == std::string::npos ? "" : trimmed(line.substr(hash + 1));
    std::istringstream tokens(hash == std::string::npos ? line : line.substr(0, hash));
    std::string token;
    if (!(tokens >> token)) {  // a blank or comment-only line; the header describes the suite
      if (suite.shapes.empty() && !comment.empty())
        suite.description += (suite.description.empty() ? "" : "\n") + comment;
      continue;
    }
    SuiteShape s;
    s.line = line_no;
    s.source = comment;
    const auto mnk = parse_bench_shape(token);
    if (!mnk) bad("'" + token + "' is not MxNxK with positive integers (e.g. 16x8192x8192)");
    s.shape = *mnk;
    bool layout_given = false;
    while (tokens >> token) {
      bool* flag = token == "A^T" ? &s.trans_a : token == "B^T" ? &s.trans_b : nullptr;
      if (flag) {
        if (*flag) bad("'" + token + "' is given twice");
        *flag = true;
      } else if (const std::optional<Layout> layout = parse_layout(token)) {
        if (layout_given) bad("the layout is given twice");
        layout_given = true;
        s.layout = *layout;
      } else {
        bad("unknown flag '" + token + "' (expected A^T, B^T, row or col, then # a comment)");
      }
    }
    for (const SuiteShape& earlier : suite.shapes)
      if (same_problem(earlier, s))
        bad(s.text() + " repeats line " + std::to_string(earlier.line));
    suite.shapes.push_back(std::move(s));
  }
  if (in.bad()) fail(ErrorCategory::input, "cannot read shape suite " + quoted_path(path));
  if (suite.shapes.empty()) fail(ErrorCategory::input, "shape suite " + quoted_path(path) + " lists no shape");
  return suite;
}

std::vector<std::string> shape_suite_names(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".txt" && it->is_regular_file(ec))
      names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

ShapeSuite find_shape_suite(const std::string& name, const std::string& dir) {
  const std::vector<std::string> names = shape_suite_names(dir);
  const auto path = (std::filesystem::path(dir) / (name + ".txt")).string();
  if (std::find(names.begin(), names.end(), name) != names.end()) return read_shape_suite(path);
  if (name == "all" && !names.empty()) {
    ShapeSuite all;
    all.name = "all";
    all.description = "every suite of " + dir + ", each shape once";
    for (const std::string& n : names)
      for (SuiteShape& s : read_shape_suite((std::filesystem::path(dir) / (n + ".txt")).string()).shapes)
        if (std::none_of(all.shapes.begin(), all.shapes.end(),
                         [&](const SuiteShape& t) { return same_problem(s, t); }))
          all.shapes.push_back(std::move(s));
    return all;
  }
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  if (!names.empty() && std::find(names.begin(), names.end(), "all") == names.end()) known += ", all";
  fail(ErrorCategory::usage, "unknown shape suite '" + name + "' (known: " +
                                 (known.empty() ? std::string("none") : known) + ", in " +
                                 quoted_path(dir) + "; or give a file's path)");
}

std::vector<SuiteKernelSummary> summarize_suite(const std::vector<BenchRow>& rows) {
  std::vector<SuiteKernelSummary> out;
  std::vector<double> log_sums;
  for (const BenchRow& r : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const SuiteKernelSummary& s) { return s.kernel == r.kernel; });
    if (it == out.end()) {
      out.push_back({});
      out.back().kernel = r.kernel;
      out.back().reference = r.reference;
      log_sums.push_back(0);
      it = out.end() - 1;
    }
    SuiteKernelSummary& s = *it;
    const bool failed = r.failed || (!r.skipped && !r.check.passed);
    if (failed || r.skipped || r.percent_of_reference <= 0) {
      ++s.missing;
      if (failed) ++s.failed;
      continue;
    }
    log_sums[std::size_t(it - out.begin())] += std::log(r.percent_of_reference);
    if (s.measured == 0 || r.percent_of_reference < s.min_percent) {
      s.min_percent = r.percent_of_reference;
      const GemmBenchFacts& g = r.gemm.value();
      s.min_shape = SuiteShape{g.shape, g.trans_a, g.trans_b, g.layout, "", 0};
    }
    ++s.measured;
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].measured > 0) out[i].geomean_percent = std::exp(log_sums[i] / double(out[i].measured));
  return out;
}

std::string suite_summary_table(const std::string& suite_name, DType dtype, const std::string& percent_of,
                                const std::vector<SuiteKernelSummary>& summary) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "suite %s, %s: %% of %s over the suite's shapes\n", suite_name.c_str(),
                std::string(dtype_name(dtype)).c_str(), percent_of.empty() ? "(no reference)" : percent_of.c_str());
  std::string out = buf;
  std::snprintf(buf, sizeof buf, "%-24s %8s %8s  %-28s %s\n", "kernel", "geomean", "minimum", "at", "shapes");
  out += buf;
  for (const SuiteKernelSummary& s : summary) {
    std::string counted = std::to_string(s.measured) + " of " + std::to_string(s.measured + s.missing);
    if (s.failed) counted += " (" + std::to_string(s.failed) + " failed)";
    if (s.measured == 0) {
      std::snprintf(buf, sizeof buf, "%-24s %8s %8s  %-28s %s\n", s.kernel.c_str(), "-", "-", "-", counted.c_str());
    } else {
      std::snprintf(buf, sizeof buf, "%-24s %7.1f%% %7.1f%%  %-28s %s\n", s.kernel.c_str(), s.geomean_percent,
                    s.min_percent, s.min_shape.text().c_str(), counted.c_str());
    }
    out += buf;
  }
  out += "geomean and minimum over the shapes each kernel ran and passed (skipped, failed or "
         "unreferenced shapes are not counted: 'shapes' says how many were)\n";
  return out;
}

}  // namespace gemmkit

// Graphs: CSR construction, vertex names, and the readers for edge lists and adjacency
// matrices (Matrix Market, .npy, CSV).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <variant>

#include "gemmkit/io.hpp"
#include "gemmkit/walks.hpp"
#include "io/io_common.hpp"

namespace gemmkit {
namespace {

constexpr std::int64_t kMaxVertices = std::numeric_limits<std::int32_t>::max();

// Edges as parallel arrays: 4 + 4 (+ 8 when weighted) bytes each, so ten million fit well.
struct EdgeArrays {
  std::vector<std::int32_t> from, to;
  std::vector<std::int64_t> weight;  // unless weighted: empty, all 1
  bool weighted = false;
  void add(std::int64_t u, std::int64_t v, std::int64_t w) {
    if (w != 1 && !weighted) {
      weight.assign(from.size(), 1);
      weighted = true;
    }
    from.push_back(static_cast<std::int32_t>(u));
    to.push_back(static_cast<std::int32_t>(v));
    if (weighted) weight.push_back(w);
  }
};

std::int64_t checked_add(std::int64_t a, std::int64_t b, const std::string& where) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    fail(ErrorCategory::input, where + ": parallel edges' weights add up past 64 bits");
  return sum;
}

// Counting sort by source, then each row sorted by target with parallel edges merged.
Graph build_csr(std::int64_t n, EdgeArrays edges, std::vector<std::string> labels,
                std::string source) {
  Graph g;
  g.n = n;
  g.labels = std::move(labels);
  g.source = std::move(source);
  const std::size_t m = edges.from.size();
  std::vector<std::int64_t> start(n + 1, 0);
  for (std::int32_t u : edges.from) ++start[u + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  const bool weighted = edges.weighted;
  std::vector<std::int32_t> target(m);
  std::vector<std::int64_t> weight(weighted ? m : 0);
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::size_t e = 0; e < m; ++e) {
      const std::int64_t slot = next[edges.from[e]]++;
      target[slot] = edges.to[e];
      if (weighted) weight[slot] = edges.weight[e];
    }
  }
  edges = EdgeArrays{};  // free the edge arrays before the sorted copy grows

  // Sort each row; note whether any target repeats (then the graph needs weights).
  bool repeats = false;
  std::vector<std::pair<std::int32_t, std::int64_t>> row;
  for (std::int64_t u = 0; u < n; ++u) {
    const std::int64_t b = start[u], e = start[u + 1];
    if (!weighted) {
      std::sort(target.begin() + b, target.begin() + e);
    } else {
      row.clear();
      for (std::int64_t i = b; i < e; ++i) row.emplace_back(target[i], weight[i]);
      std::sort(row.begin(), row.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::int64_t i = b; i < e; ++i) std::tie(target[i], weight[i]) = row[i - b];
    }
    for (std::int64_t i = b + 1; i < e && !repeats; ++i) repeats = target[i] == target[i - 1];
  }
  if (repeats && !weighted) weight.assign(m, 1);
  const bool keep_weights = weighted || repeats;

  // Merge runs of equal targets, drop entries whose weights cancel, compact in place.
  g.row_start.assign(n + 1, 0);
  std::int64_t out = 0;
  for (std::int64_t u = 0; u < n; ++u) {
    const std::int64_t b = start[u], e = start[u + 1];
    for (std::int64_t i = b; i < e;) {
      std::int64_t w = keep_weights ? weight[i] : 1;
      std::int64_t j = i + 1;
      for (; j < e && target[j] == target[i]; ++j)
        w = checked_add(w, weight[j], io::quoted_path(g.source) + " edge " + io::quoted(g.label(u)) +
                                          " -> " + io::quoted(g.label(target[i])));
      if (w != 0) {
        target[out] = target[i];
        if (keep_weights) weight[out] = w;
        ++out;
      }
      i = j;
    }
    g.row_start[u + 1] = out;
  }
  target.resize(out);
  target.shrink_to_fit();
  g.target = std::move(target);
  if (keep_weights) {
    weight.resize(out);
    // All ones after merging (parallel edges that cancelled): no weights needed.
    if (std::any_of(weight.begin(), weight.end(), [](std::int64_t w) { return w != 1; })) {
      weight.shrink_to_fit();
      g.weight = std::move(weight);
    }
  }
  return g;
}

void check_labels(const std::vector<std::string>& labels, std::int64_t n, const std::string& what) {
  if (!labels.empty() && static_cast<std::int64_t>(labels.size()) != n)
    fail(ErrorCategory::usage, std::to_string(labels.size()) + " labels given but " + what +
                                   " has " + std::to_string(n) + " vertices");
  std::unordered_map<std::string_view, int> seen;
  for (const auto& l : labels) {
    if (!io::valid_utf8(l)) fail(ErrorCategory::usage, "label " + io::quoted(l) + " is not UTF-8 text");
    if (++seen[l] == 2) fail(ErrorCategory::usage, "label " + io::quoted(l) + " is given twice");
  }
}

bool is_separator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\f' || c == '\v'; }

// Up to 4 tokens of an edge-list line (comment cut off); returns how many there were.
int split_edge_line(std::string_view line, std::string_view (&tokens)[4]) {
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  int count = 0;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && is_separator(line[i])) ++i;
    if (i == line.size()) return count;
    const std::size_t begin = i;
    while (i < line.size() && !is_separator(line[i])) ++i;
    if (count == 4) return 5;
    tokens[count++] = line.substr(begin, i - begin);
  }
}

// A vertex index: plain decimal digits, no sign and no leading zero (so that an index's
// name is its text), not past 18 digits; -1 for any other token.
std::int64_t index_token(std::string_view token) {
  if (token.empty() || token.size() > 18 || (token[0] == '0' && token.size() > 1)) return -1;
  std::int64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Edge lists, read once (so pipes and FIFOs work). Vertices are indices while every token
// is one; the first name, or an index so large that numbering up to it would waste memory,
// turns the vertices read so far into names and the rest of the file is read with names.
Graph read_edge_list(const std::string& path, const GraphReadOptions& options) {
  io::LineReader in(path);
  EdgeArrays edges;
  bool names = false;
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<std::string> labels;
  std::int64_t max_index = -1, lines = 0;
  auto error = [&](const std::string& what) {
    io::input_error(path, "line " + std::to_string(in.line_number()), what);
  };
  auto name_id = [&](std::string_view token) -> std::int32_t {
    auto [it, inserted] = ids.try_emplace(std::string(token), static_cast<std::int32_t>(labels.size()));
    if (inserted) {
      if (static_cast<std::int64_t>(labels.size()) >= kMaxVertices) error("more than 2^31 - 1 vertices");
      if (!io::valid_utf8(token)) error("the vertex name " + io::quoted(token) + " is not UTF-8 text");
      labels.emplace_back(token);
    }
    return it->second;
  };
  // The indices read so far are written as their own names; numbering them in order of
  // first appearance gives what reading the whole file with names would.
  auto switch_to_names = [&] {
    std::vector<std::int32_t> id_of(static_cast<std::size_t>(max_index + 1), -1);
    auto rename = [&](std::int32_t& v) {
      if (id_of[v] < 0) id_of[v] = name_id(std::to_string(v));
      v = id_of[v];
    };
    for (std::size_t e = 0; e < edges.from.size(); ++e) {
      rename(edges.from[e]);
      rename(edges.to[e]);
    }
    names = true;
  };
  while (const auto line = in.next()) {
    std::string_view tokens[4];
    const int count = split_edge_line(*line, tokens);
    if (count == 0) continue;
    ++lines;
    if (count < 2 || count > 3)
      error("expected 'u v' or 'u v weight', found " + io::quoted(*line));
    std::int64_t w = 1;
    if (count == 3) {
      const io::ParseStatus status = io::parse_int64(tokens[2], w);
      if (status == io::ParseStatus::out_of_range)
        error("weight " + io::quoted(tokens[2]) + " does not fit a 64-bit integer");
      if (status != io::ParseStatus::ok)
        error("weight " + io::quoted(tokens[2]) + " is not an integer");
    }
    std::int64_t u = 0, v = 0;
    if (!names) {
      u = index_token(tokens[0]);
      v = index_token(tokens[1]);
      // Indices beyond 2 per edge line plus a million would number mostly absent vertices.
      const std::int64_t limit = 2 * lines + 1'000'000;
      if (u < 0 || v < 0 || u > limit || v > limit) {
        switch_to_names();
      } else {
        max_index = std::max({max_index, u, v});
      }
    }
    if (names) {
      u = name_id(tokens[0]);
      v = name_id(tokens[1]);
    }
    edges.add(u, v, w);
    if (options.undirected && u != v) edges.add(v, u, w);
  }
  // No vertex and no edge: walks of such a "graph" would be an empty table, never an answer.
  if (lines == 0)
    io::input_error(path, "", "no edges (the edge list is empty or holds only comments and blank lines)");
  if (names) {
    if (!options.labels.empty())
      fail(ErrorCategory::usage, "--labels applies to matrix files and edge lists of vertex "
                                 "indices; " + io::quoted_path(path) + " names its vertices");
    const auto n = static_cast<std::int64_t>(labels.size());  // before labels moves
    return build_csr(n, std::move(edges), std::move(labels), path);
  }
  const std::int64_t n = options.labels.empty() ? max_index + 1
                                                : std::max<std::int64_t>(max_index + 1, options.labels.size());
  check_labels(options.labels, n, io::quoted_path(path));
  return build_csr(n, std::move(edges), options.labels, path);
}

Graph read_mtx_graph(const std::string& path, const GraphReadOptions& options) {
  SparseEntries entries = read_mtx_entries(path);
  if (entries.rows != entries.cols)
    io::input_error(path, "", "an adjacency matrix must be square, not " +
                                  std::to_string(entries.rows) + "x" + std::to_string(entries.cols));
  if (entries.rows > kMaxVertices) io::input_error(path, "", "more than 2^31 - 1 vertices");
  if (entries.rows == 0) io::input_error(path, "", "the adjacency matrix is 0 x 0: the graph has no vertices");
  check_labels(options.labels, entries.rows, io::quoted_path(path));
  EdgeArrays edges;
  edges.from.reserve(entries.size());
  edges.to.reserve(entries.size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    std::int64_t w = 0;
    if (entries.dtype == DType::i64) {
      w = entries.int_values[e];
    } else {
      const double x = entries.real_values[e];
      if (!(std::trunc(x) == x && std::fabs(x) < 9.2e18))
        io::input_error(path, "entry (" + std::to_string(entries.row[e] + 1) + ", " +
                                  std::to_string(entries.col[e] + 1) + ")",
                        "weight " + io::format_double(x) + " is not an integer");
      w = static_cast<std::int64_t>(x);
    }
    edges.add(entries.row[e], entries.col[e], w);
  }
  const std::int64_t n = entries.rows;
  entries = SparseEntries{};
  return build_csr(n, std::move(edges), options.labels, path);
}

Graph read_dense_graph(const std::string& path, GraphFormat format, const GraphReadOptions& options) {
  const AnyMatrix matrix = format == GraphFormat::npy ? read_npy(path) : read_csv(path);
  const std::int64_t n = rows_of(matrix);
  if (cols_of(matrix) != n)
    io::input_error(path, "", "an adjacency matrix must be square, not " + std::to_string(n) +
                                  "x" + std::to_string(cols_of(matrix)));
  if (n > kMaxVertices) io::input_error(path, "", "more than 2^31 - 1 vertices");
  if (n == 0) io::input_error(path, "", "the adjacency matrix is 0 x 0: the graph has no vertices");
  check_labels(options.labels, n, io::quoted_path(path));
  EdgeArrays edges;
  std::visit(
      [&](const auto& m) {
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            using T = typename std::decay_t<decltype(m)>::value_type;
            std::int64_t w = 0;
            if constexpr (is_float_storage_v<T>) {
              const double x = static_cast<double>(m(i, j));
              if (!(std::trunc(x) == x && std::fabs(x) < 9.2e18))
                io::input_error(path, "row " + std::to_string(i + 1) + ", column " + std::to_string(j + 1),
                                "weight " + io::format_double(x) + " is not an integer");
              w = static_cast<std::int64_t>(x);
            } else {
              w = m(i, j);
            }
            if (w != 0) edges.add(i, j, w);
          }
      },
      matrix);
  return build_csr(n, std::move(edges), options.labels, path);
}

}  // namespace

std::string Graph::label(std::int64_t v) const {
  return labels.empty() ? std::to_string(v) : labels[static_cast<std::size_t>(v)];
}

std::optional<std::int64_t> Graph::find(std::string_view name) const {
  if (labels.empty()) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc{} || end != name.data() + name.size() || v < 0 || v >= n ||
        std::to_string(v) != name)
      return std::nullopt;
    return v;
  }
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == name) return static_cast<std::int64_t>(i);
  return std::nullopt;
}

std::int64_t Graph::vertex(std::string_view name) const {
  if (auto v = find(name)) return *v;
  fail(ErrorCategory::input, "no vertex named " + io::quoted(name) +
                                 (source.empty() ? "" : " in " + io::quoted_path(source)) + " (" +
                                 std::to_string(n) + " vertices" +
                                 (labels.empty() && n > 0 ? ", named 0 to " + std::to_string(n - 1) : "") +
                                 ")");
}

Graph Graph::transposed() const {
  EdgeArrays edges;
  edges.from.reserve(target.size());
  edges.to.reserve(target.size());
  for (std::int64_t u = 0; u < n; ++u)
    for (std::int64_t e = row_start[u]; e < row_start[u + 1]; ++e)
      edges.add(target[e], u, weight_at(e));
  return build_csr(n, std::move(edges), labels, source);
}

Graph graph_from_edges(std::int64_t n, const std::vector<Edge>& edges, std::vector<std::string> labels) {
  if (n < 0 || n > kMaxVertices) fail(ErrorCategory::usage, "vertex count " + std::to_string(n) + " out of range");
  check_labels(labels, n, "the graph");
  EdgeArrays arrays;
  for (const Edge& e : edges) {
    if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n)
      fail(ErrorCategory::usage, "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
                                     " outside the " + std::to_string(n) + " vertices");
    arrays.add(e.from, e.to, e.weight);
  }
  return build_csr(n, std::move(arrays), std::move(labels), "");
}

Graph graph_from_dense(std::int64_t n, const std::int64_t* adjacency, std::vector<std::string> labels) {
  std::vector<Edge> edges;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      if (adjacency[i * n + j] != 0) edges.push_back({i, j, adjacency[i * n + j]});
  return graph_from_edges(n, edges, std::move(labels));
}

Graph read_graph(const std::string& path, const GraphReadOptions& options) {
  GraphFormat format = GraphFormat::edges;
  if (options.format) {
    format = *options.format;
  } else {
    std::string lower = path;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    auto ends = [&](std::string_view ext) {
      return lower.size() >= ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0;
    };
    if (ends(".mtx")) format = GraphFormat::mtx;
    else if (ends(".npy")) format = GraphFormat::npy;
    else if (ends(".csv")) format = GraphFormat::csv;
  }
  if (options.undirected && format != GraphFormat::edges)
    fail(ErrorCategory::usage, "--undirected applies to edge lists; an adjacency matrix says "
                               "both directions itself (Matrix Market: 'symmetric')");
  return io::reporting_memory(path, [&] {
    switch (format) {
      case GraphFormat::edges: return read_edge_list(path, options);
      case GraphFormat::mtx: return read_mtx_graph(path, options);
      case GraphFormat::npy:
      case GraphFormat::csv: return read_dense_graph(path, format, options);
    }
    fail(ErrorCategory::internal, "unknown graph format");
  });
}

}  // namespace gemmkit

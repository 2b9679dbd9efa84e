// Exact walk counts (gemmkit/walks.hpp): graphs from edge arrays, dense adjacency matrices
// and the library's readers, the walk engine, and its counts moved into Python objects.
// The Python layer (gemmkit/_walks.py) turns networkx graphs, scipy matrices and edge lists
// into the arrays these functions take, and the counts into numpy arrays.
#include <Python.h>

#include <cstring>
#include <limits>

#include "bindings.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit::python {
namespace {

const std::int64_t* int64_pointer(std::uintptr_t address) {
  return reinterpret_cast<const std::int64_t*>(address);
}

// Whether an entry of `limbs` two's-complement words is the sign extension of its first.
bool fits_one_word(const std::uint64_t* words, int limbs) {
  const std::uint64_t extension = (words[0] >> 63) ? ~std::uint64_t{0} : 0;
  for (int i = 1; i < limbs; ++i)
    if (words[i] != extension) return false;
  return true;
}

// One entry as a Python int: the word itself when it fits, else CPython's conversion from
// little-endian two's-complement bytes (no decimal text in between).
PyObject* entry_to_int(const std::uint64_t* words, int limbs) {
  if (fits_one_word(words, limbs)) return PyLong_FromLongLong(static_cast<long long>(words[0]));
  const auto* bytes = reinterpret_cast<const unsigned char*>(words);
  const std::size_t size = static_cast<std::size_t>(limbs) * sizeof(std::uint64_t);
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "words are read as little-endian bytes");
#if PY_VERSION_HEX >= 0x030D0000
  return PyLong_FromNativeBytes(bytes, size, Py_ASNATIVEBYTES_LITTLE_ENDIAN);
#else
  return _PyLong_FromByteArray(bytes, size, /*little_endian=*/1, /*is_signed=*/1);
#endif
}

std::size_t entry_count(const WalkCounts& w) {
  return w.lengths.size() * w.sources.size() * w.targets.size();
}

// `count` entries of `limbs` words each as a list of Python ints.
nb::list ints_of(const std::uint64_t* words, std::size_t count, int limbs) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(count));
  if (list == nullptr) throw nb::python_error();
  nb::list out = nb::steal<nb::list>(list);
  for (std::size_t i = 0; i < count; ++i) {
    PyObject* value = entry_to_int(&words[i * static_cast<std::size_t>(limbs)], limbs);
    if (value == nullptr) throw nb::python_error();
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), value);
  }
  return out;
}

// Every count, lengths then rows then columns, as a list of Python ints (exact and int64
// modes).
nb::list counts_as_ints(const WalkCounts& w) {
  if (w.mode == WalkMode::float64)
    fail(ErrorCategory::usage, "walk counts of float mode are doubles, not integers");
  return ints_of(w.words.data(), entry_count(w), w.limbs);
}

// Every count as int64 bytes, and the flat index of the first that does not fit (-1: all fit;
// the bytes are then complete).
nb::tuple counts_as_int64(const WalkCounts& w) {
  if (w.mode == WalkMode::float64)
    fail(ErrorCategory::usage, "walk counts of float mode are doubles, not integers");
  const std::size_t count = entry_count(w);
  std::vector<std::int64_t> values(count);
  std::int64_t first_bad = -1;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t* words = &w.words[i * static_cast<std::size_t>(w.limbs)];
    if (!fits_one_word(words, w.limbs)) {
      first_bad = static_cast<std::int64_t>(i);
      break;
    }
    values[i] = static_cast<std::int64_t>(words[0]);
  }
  if (first_bad >= 0) return nb::make_tuple(nb::bytes("", 0), first_bad);
  return nb::make_tuple(nb::bytes(reinterpret_cast<const char*>(values.data()),
                                  values.size() * sizeof(std::int64_t)),
                        first_bad);
}

// Every count as float64 bytes (the nearest double of an exact count).
nb::bytes counts_as_float64(const WalkCounts& w) {
  if (w.mode == WalkMode::float64)
    return nb::bytes(reinterpret_cast<const char*>(w.reals.data()), w.reals.size() * sizeof(double));
  std::vector<double> values;
  values.reserve(entry_count(w));
  for (std::size_t li = 0; li < w.lengths.size(); ++li)
    for (std::int64_t r = 0; r < w.rows(); ++r)
      for (std::int64_t c = 0; c < w.cols(); ++c) values.push_back(w.approx(li, r, c));
  return nb::bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
}

std::optional<GraphFormat> format_from_name(std::string_view name) {
  if (name == "auto") return std::nullopt;
  if (name == "edges") return GraphFormat::edges;
  if (name == "mtx") return GraphFormat::mtx;
  if (name == "npy") return GraphFormat::npy;
  if (name == "csv") return GraphFormat::csv;
  fail(ErrorCategory::usage,
       "unknown format '" + std::string(name) + "' (expected auto, edges, mtx, npy or csv)");
}

}  // namespace

void bind_walks(nb::module_& m) {
  nb::class_<Graph>(m, "Graph",
                    "A directed graph with integer edge weights in CSR form (parallel edges "
                    "merged), as the walk engine reads it.")
      .def_ro("n", &Graph::n, "Vertices.")
      .def_prop_ro("edges", &Graph::edges, "Stored entries of the adjacency matrix.")
      .def_prop_ro("weighted", &Graph::weighted, "Whether some entry is not 1.")
      .def_ro("labels", &Graph::labels, "Vertex names; empty: vertex v is called by its index.")
      .def_ro("source", &Graph::source, "The file it was read from ('' if none).")
      .def("label", &Graph::label, nb::arg("vertex"), "The name of a vertex (its index as text "
                                                      "when the graph has no names).")
      .def("vertex", &Graph::vertex, nb::arg("label"),
           "The vertex with this name (or index text); InputError naming the graph otherwise.");

  m.def(
      "graph_from_edges",
      [](std::int64_t n, std::uintptr_t from, std::uintptr_t to, std::uintptr_t weight,
         std::size_t count, std::vector<std::string> labels) {
        std::vector<Edge> edges(count);
        const std::int64_t *u = int64_pointer(from), *v = int64_pointer(to), *w = int64_pointer(weight);
        for (std::size_t e = 0; e < count; ++e) edges[e] = {u[e], v[e], w ? w[e] : 1};
        return graph_from_edges(n, edges, std::move(labels));
      },
      nb::arg("n"), nb::arg("sources"), nb::arg("targets"), nb::arg("weights"), nb::arg("count"),
      nb::arg("labels"), nb::call_guard<nb::gil_scoped_release>(),
      "A graph on n vertices from `count` edges: int64 arrays of sources, targets and weights "
      "(0: every weight 1) at these host addresses. Parallel edges add up; zero sums vanish.");
  m.def(
      "graph_from_dense",
      [](std::int64_t n, std::uintptr_t adjacency, std::vector<std::string> labels) {
        return graph_from_dense(n, int64_pointer(adjacency), std::move(labels));
      },
      nb::arg("n"), nb::arg("adjacency"), nb::arg("labels"), nb::call_guard<nb::gil_scoped_release>(),
      "A graph from a row-major n x n int64 adjacency matrix at this host address.");
  m.def(
      "read_graph",
      [](const std::string& path, std::string_view format, bool undirected,
         std::vector<std::string> labels) {
        GraphReadOptions options;
        options.format = format_from_name(format);
        options.undirected = undirected;
        options.labels = std::move(labels);
        nb::gil_scoped_release release;
        return read_graph(path, options);
      },
      nb::arg("path"), nb::arg("format") = "auto", nb::arg("undirected") = false,
      nb::arg("labels") = std::vector<std::string>{},
      "The library's graph reader, as `gemmkit walks` reads GRAPH: edge lists, .mtx, .npy and "
      ".csv adjacency matrices (format 'auto': by extension).");

  nb::class_<WalkCounts>(m, "WalkCounts",
                         "The walk engine's answer: for each length, a table whose rows are "
                         "`sources` and columns `targets`.")
      .def_ro("lengths", &WalkCounts::lengths)
      .def_ro("sources", &WalkCounts::sources)
      .def_ro("targets", &WalkCounts::targets)
      .def_prop_ro("mode", [](const WalkCounts& w) { return std::string(walk_mode_name(w.mode)); })
      .def_ro("method", &WalkCounts::method, "What ran, e.g. 'dense squaring mod 4 primes'.")
      .def_ro("kernel", &WalkCounts::kernel, "The engine that ran, a kernel of gemmkit.kernels('walks').")
      .def_prop_ro("bound_bits", [](const WalkCounts& w) { return w.bound.bit_length(); },
                   "Bits of the proven bound on every |count|.")
      .def_ro("primes", &WalkCounts::primes)
      .def_ro("rounded", &WalkCounts::rounded, "float mode: some count reached 2^53.")
      .def_prop_ro(
          "gpu",
          [](const WalkCounts& w) -> nb::object {
            if (!w.gpu) return nb::none();
            nb::dict d;
            d["products"] = w.gpu->products;
            d["primes"] = w.gpu->primes;
            d["gemm_seconds"] = w.gpu->gemm_seconds;
            d["reduce_seconds"] = w.gpu->reduce_seconds;
            d["total_seconds"] = w.gpu->total_seconds;
            d["build_seconds"] = w.gpu->build_seconds;
            d["crt_seconds"] = w.gpu->crt_seconds;
            d["copy_seconds"] = w.gpu->copy_seconds;
            d["setup_seconds"] = w.gpu->setup_seconds;
            d["context_seconds"] = w.gpu->context_seconds;
            return d;
          },
          "What the GPU engine measured, or None when it did not run.")
      .def("ints", &counts_as_ints,
           "Every count (lengths, then rows, then columns) as a list of Python ints.")
      .def("int64", &counts_as_int64,
           "(bytes of int64 counts, -1), or (b'', flat index of the first count that does not "
           "fit int64).")
      .def("float64", &counts_as_float64, "Every count as float64 bytes (the nearest double).");

  m.def(
      "read_exact_table",
      [](const std::string& path) {
        LimbTables t;
        {
          nb::gil_scoped_release release;
          t = read_limb_tables(path);
        }
        nb::list shape;
        if (t.stacked) shape.append(t.tables);
        shape.append(t.rows);
        shape.append(t.cols);
        const std::size_t count = std::size_t(t.tables) * std::size_t(t.rows) * std::size_t(t.cols);
        return nb::make_tuple(shape, ints_of(t.words.data(), count, t.limbs));
      },
      nb::arg("path"),
      "An exact integer table (.npy of uint64 limbs, shape (rows, cols, limbs)), or a sequence "
      "of them (shape (tables, rows, cols, limbs)), as (its shape without the limbs, a C-order "
      "list of Python ints).");
  m.def(
      "count_walks",
      [](const Graph& graph, int length, std::optional<std::int64_t> source,
         std::optional<std::int64_t> target, bool all_lengths, std::string_view mode,
         std::string_view method, std::string_view backend, nb::object progress) {
        WalkQuery query;
        query.length = length;
        query.from = source;
        query.to = target;
        query.all_lengths = all_lengths;
        const auto parsed_mode = parse_walk_mode(mode);
        if (!parsed_mode)
          fail(ErrorCategory::usage, "unknown mode '" + std::string(mode) + "' (expected exact, int64 or float)");
        query.mode = *parsed_mode;
        const auto parsed_method = parse_walk_method(method);
        if (!parsed_method)
          fail(ErrorCategory::usage, "unknown method '" + std::string(method) + "' (expected auto, dense or sparse)");
        query.method = *parsed_method;
        const auto parsed_backend = parse_walk_backend(backend);
        if (!parsed_backend)
          fail(ErrorCategory::usage, "unknown backend '" + std::string(backend) + "' (expected auto, cpu or cuda)");
        query.backend = *parsed_backend;
        // Called on this thread between steps, with the GIL taken back; an exception it
        // raises (KeyboardInterrupt, say) ends the count.
        if (!progress.is_none())
          query.progress = [&progress](const std::string& line) {
            nb::gil_scoped_acquire acquire;
            progress(line);
          };
        nb::gil_scoped_release release;
        return count_walks(graph, query);
      },
      nb::arg("graph"), nb::arg("length"), nb::arg("source").none(), nb::arg("target").none(),
      nb::arg("all_lengths") = false, nb::arg("mode") = "exact", nb::arg("method") = "auto",
      nb::arg("backend") = "auto", nb::arg("progress").none() = nb::none(),
      "The walk engine: walks of `length` (or of every length 1..length) from `source` to "
      "`target` (vertex indices; None: every vertex). mode exact, int64 or float; method auto, "
      "dense or sparse; backend auto, cpu or cuda; progress(line) is called with a short "
      "status line between steps. Runs without the GIL.");
}

}  // namespace gemmkit::python

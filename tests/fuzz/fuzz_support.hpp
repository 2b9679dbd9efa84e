// Shared by the libFuzzer harnesses: a private scratch folder, the fuzz bytes as a file
// (the readers take paths), and the error contract a harness enforces. A finding is a
// crash, a hang, a sanitizer report, or an error that breaks the contract: any exception
// other than gemmkit::Error, a category the caller does not allow (a reader may only say
// "input" or "out of memory"; "internal" is always a bug), or a message that is empty or
// not one line of printable text. Findings abort(), so libFuzzer saves the reproducer.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "gemmkit/error.hpp"
#include "gemmkit/matrix.hpp"
#include "gemmkit/walks.hpp"

namespace gemmkit::fuzz {

// A scratch folder for this process, on tmpfs when there is one (outputs are fsync'ed).
// Never freed: the atexit handler that removes the folder runs after static destructors.
inline const std::string& scratch_dir() {
  static const std::string& dir = *new std::string([] {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
    else if (access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    std::string tmpl = base + "/gemmkit_fuzz_XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("gemmkit fuzz: mkdtemp");
      std::abort();
    }
    // Removed at exit; a crash leaves it behind, which is harmless in a temp folder.
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return tmpl;
  }());
  return dir;
}

// Writes `bytes` to `name` in the scratch folder and returns the path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::perror(("gemmkit fuzz: cannot write " + path).c_str());
    std::abort();
  }
  return path;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "gemmkit fuzz: FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// One line of printable text (UTF-8 bytes >= 0x80 allowed), not empty.
inline bool one_printable_line(std::string_view message) {
  if (message.empty()) return false;
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

inline void check_error(const Error& e, std::initializer_list<ErrorCategory> allowed) {
  const std::string_view message = e.what();
  bool ok = false;
  for (ErrorCategory c : allowed) ok = ok || c == e.category();
  if (!ok)
    finding("error of category '" + std::string(category_name(e.category())) + "': " + e.what());
  if (!one_printable_line(message)) finding("error message is not one printable line: " + std::string(message));
}

// Matrices up to this many elements are also written back and read again (bigger ones
// would make a run slow, not find more).
constexpr std::int64_t kMaxRoundTripElements = 1 << 16;

// Runs `read`; errors must follow the reader contract (input or out-of-memory errors).
template <class F>
void expect_reader_contract(F&& read) {
  try {
    read();
  } catch (const Error& e) {
    check_error(e, {ErrorCategory::input, ErrorCategory::out_of_memory});
  } catch (const std::bad_alloc&) {
    // Reported by the command line as "out of host memory"; allowed (fuzz_support.cpp).
  } catch (const std::exception& e) {
    finding(std::string("foreign exception escaped a reader: ") + e.what());
  }
}

// What a reader returns must be a well-formed matrix.
inline void check_matrix(const AnyMatrix& m) {
  std::visit(
      [](const auto& x) {
        if (x.rows() < 0 || x.cols() < 0 || x.ld() < x.cols())
          finding("matrix with shape " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                  " and ld " + std::to_string(x.ld()));
      },
      m);
}

// Same dtype, shape and bytes (so -0.0 and NaN payloads count).
inline bool same_matrix(const AnyMatrix& a, const AnyMatrix& b) {
  if (a.index() != b.index() || rows_of(a) != rows_of(b) || cols_of(a) != cols_of(b)) return false;
  return std::visit(
      [&](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b);
        const auto row_bytes = static_cast<std::size_t>(x.cols()) * sizeof(*x.data());
        for (std::int64_t i = 0; i < x.rows() && row_bytes > 0; ++i)
          if (std::memcmp(&x(i, 0), &y(i, 0), row_bytes) != 0) return false;
        return true;
      },
      a);
}

// What read_graph returns must be a well-formed CSR graph.
inline void check_graph(const Graph& g) {
  const auto n = static_cast<std::size_t>(g.n);
  bool ok = g.n >= 0 && g.row_start.size() == n + 1 && g.row_start.front() == 0 &&
            g.row_start.back() == g.edges() && (g.weight.empty() || g.weight.size() == g.target.size()) &&
            (g.labels.empty() || g.labels.size() == n);
  for (std::size_t u = 0; ok && u < n; ++u) {
    ok = g.row_start[u] <= g.row_start[u + 1];
    for (std::int64_t e = g.row_start[u]; ok && e < g.row_start[u + 1]; ++e)
      ok = g.target[e] >= 0 && g.target[e] < g.n && (e == g.row_start[u] || g.target[e - 1] < g.target[e]) &&
           g.weight_at(e) != 0;
  }
  if (!ok) finding("malformed graph from " + g.source);
  // Every vertex is found by its own label.
  for (std::int64_t v = 0; v < g.n && v < 64; ++v)
    if (g.find(g.label(v)) != v) finding("vertex " + std::to_string(v) + " is not found by its label");
}

// read_graph on the file at `path` in `format`, directed and undirected (edge lists only).
inline void fuzz_graph_reader(const std::string& path, GraphFormat format) {
  for (const bool undirected : {false, true}) {
    if (undirected && format != GraphFormat::edges) break;
    expect_reader_contract([&] {
      GraphReadOptions options;
      options.format = format;
      options.undirected = undirected;
      check_graph(read_graph(path, options));
    });
  }
}

}  // namespace gemmkit::fuzz

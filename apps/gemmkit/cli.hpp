// Shared pieces of the gemmkit subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/gemm.hpp"
#include "gemmkit/matrix.hpp"

namespace gemmkit::cli {

// The whole command line: parses argv, runs the subcommand, prints any error as one line
// on stderr and returns the exit status. main() calls it; so does the CLI fuzzer.
int run(int argc, char** argv);

// Each subcommand adds itself to the app; its callback throws gemmkit::Error on failure.
void add_multiply(CLI::App& app);
void add_gen(CLI::App& app);
void add_bench(CLI::App& app);
void add_list(CLI::App& app);
void add_device(CLI::App& app);
void add_walks(CLI::App& app);
void add_reduce(CLI::App& app);
void add_spmv(CLI::App& app);
void add_conv1d(CLI::App& app);

// "--backend auto|cpu|cuda": nullopt for auto.
std::optional<Backend> parse_backend(const std::string& text);
inline constexpr const char* kBackendHelp =
    "auto (the CUDA device when there is one), cpu or cuda";

// A vector file: a 1-D .npy, or an n x 1 / 1 x n matrix in any format. `what` names it in
// the input error for anything else (e.g. "X must be a vector ...").
struct VectorFile {
  AnyMatrix values;
  bool row = false;  // stored 1 x n (so a result can be written back the same way)
  std::int64_t size() const { return rows_of(values) * cols_of(values); }
};
VectorFile read_vector_file(const std::string& path, const std::string& what);

// A vector's values in order, converted to T.
template <class T>
std::vector<T> vector_values(const AnyMatrix& any) {
  const AnyMatrix converted = convert(any, dtype_of<T>);
  const Matrix<T>& m = std::get<Matrix<T>>(converted);
  std::vector<T> out;
  out.reserve(std::size_t(m.size()));
  for (std::int64_t r = 0; r < m.rows(); ++r)
    for (std::int64_t c = 0; c < m.cols(); ++c) out.push_back(m(r, c));
  return out;
}

// Writes JSON to `path` through a temporary file renamed on success.
void write_json(const std::string& path, const nlohmann::json& value);

// True when stderr is a terminal: long work then shows progress there.
bool progress_wanted();

// Where and when a result was made: gemmkit version, commit, date, host, CPU, GPU.
nlohmann::json environment_json();

}  // namespace gemmkit::cli

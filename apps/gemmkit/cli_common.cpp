#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "cli.hpp"
#include "share_path.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#ifdef GEMMKIT_HAVE_MPI
#include "gemmkit/distributed.hpp"
#endif

namespace gemmkit::cli {

std::optional<Backend> parse_backend(const std::string& text) {
  if (text == "auto") return std::nullopt;
  if (text == "cpu") return Backend::cpu;
  if (text == "cuda") return Backend::cuda;
  fail(ErrorCategory::usage, "unknown backend '" + text + "' (expected auto, cpu or cuda)");
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.find('-') != std::string::npos) return "must be a non-negative integer, not " + text;
        // Parsed as CLI11 parses it (strtoull, base prefixes too), which saturates past 2^64 - 1.
        errno = 0;
        std::strtoull(text.c_str(), nullptr, 0);
        if (errno == ERANGE) return "must be at most 2^64 - 1 = 18446744073709551615, not " + text;
        return std::string();
      },
      "", "NON-NEGATIVE");
}

CLI::Validator at_least(std::int64_t min) {
  return CLI::Validator(
      [min](std::string& text) {
        std::int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return std::string();  // CLI11 says it is no integer
        return value < min ? "must be at least " + std::to_string(min) + ", not " + text : std::string();
      },
      "", ">= " + std::to_string(min));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return std::string();  // CLI11 says it is no number
        return value > 0 && std::isfinite(value) ? std::string() : "must be a finite number above 0, not " + text;
      },
      "", "POSITIVE");
}

void add_output_format_option(CLI::App* cmd, std::string& format, bool input_has_format) {
  cmd->add_option(input_has_format ? "--output-format" : "--format,--output-format", format,
                  "Format of -o: npy, mtx or csv (default: by its extension; CSV for '-', a device "
                  "or a FIFO without one, e.g. -o /dev/null)");
}

std::optional<FileFormat> parse_output_format(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (const auto format = parse_file_format(text)) return format;
  fail(ErrorCategory::usage, "unknown output format " + quoted_path(text) + " (expected npy, mtx or csv)");
}

void check_fits_device(const std::string& what, double bytes) {
  const DeviceQuery q = query_devices();
  if (q.devices.empty()) return;
  const double have = double(q.devices.front().total_global_memory);
  if (bytes > have) {
    char figures[128];
    std::snprintf(figures, sizeof figures, " needs %.3g GB of device memory; the device has %.3g GB",
                  bytes / 1e9, have / 1e9);
    fail(ErrorCategory::out_of_memory, what + figures);
  }
}

VectorFile read_vector_file(const std::string& path, const std::string& what) {
  AnyMatrix m = read_matrix(path);
  const std::int64_t rows = rows_of(m), cols = cols_of(m);
  if (rows != 1 && cols != 1 && rows * cols != 0)
    fail(ErrorCategory::input, quoted_path(path) + ": " + what + " must be a vector (1-D, n x 1 or 1 x n), and a " +
                                   std::to_string(rows) + " x " + std::to_string(cols) +
                                   " matrix is not a vector");
  return {path, std::move(m), rows == 1 && cols > 1};
}

AnyMatrix convert_input(const AnyMatrix& m, DType dtype, const std::string& path) {
  ConversionReport rounded;
  AnyMatrix converted;
  try {
    converted = convert(m, dtype, &rounded);
  } catch (const Error& e) {
    fail(ErrorCategory::input, quoted_path(path) + " " + e.what());
  }
  const std::string name(dtype_name(dtype));
  if (rounded.rounded > 0)
    std::fprintf(stderr,
                 "gemmkit: warning: %lld integers of %s are not exact in %s and were rounded, "
                 "the first at row %lld, column %lld: %s became %s\n",
                 static_cast<long long>(rounded.rounded), quoted_path(path).c_str(),
                 name.c_str(), static_cast<long long>(rounded.row + 1),
                 static_cast<long long>(rounded.col + 1), rounded.from.c_str(), rounded.to.c_str());
  if (rounded.overflowed > 0)
    std::fprintf(stderr,
                 "gemmkit: warning: %lld entries of %s are too large for %s and became infinite, "
                 "the first at row %lld, column %lld: %s\n",
                 static_cast<long long>(rounded.overflowed), quoted_path(path).c_str(), name.c_str(),
                 static_cast<long long>(rounded.overflow_row + 1),
                 static_cast<long long>(rounded.overflow_col + 1), rounded.overflow_from.c_str());
  return converted;
}

void write_json(const std::string& path, const nlohmann::json& value) {
  AtomicFile file(path);
  // JSON text is UTF-8: a string that is not (a path of arbitrary bytes) gets U+FFFD for each
  // bad byte rather than failing the run.
  file.write(value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  file.commit();
}

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (const NamedPath& output : outputs)
    if (!output.path.empty()) check_output(output.path);
  check_distinct_files(outputs, inputs);
}

void finish_run(OutputBatch& outputs) {
  errno = 0;
  // ferror also catches a write that failed earlier, when the buffer filled during the run.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    fail(ErrorCategory::output,
         std::string("cannot write to standard output: ") + std::strerror(errno ? errno : EIO));
  outputs.commit();
  // Some file systems report a failed write only at close. EBADF: stdout was never open.
  if (::close(STDOUT_FILENO) != 0 && errno != EBADF)
    fail(ErrorCategory::output, std::string("cannot write to standard output: ") + std::strerror(errno));
}

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours (the commonest typo) each cost 1.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> unknown_subcommand_error(const CLI::App& app,
                                                    const std::vector<std::string>& args) {
  // The program has no options of its own but --help and --version, so the first word that
  // is not an option is where the subcommand should be.
  const auto word = std::find_if(args.begin(), args.end(),
                                 [](const std::string& a) { return a.empty() || a[0] != '-'; });
  if (word == args.end()) return std::nullopt;
  std::string best, names;
  std::size_t best_distance = std::string::npos, starting_with_word = 0;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    if (name == *word) return std::nullopt;
    names += (names.empty() ? "" : ", ") + name;
    const bool prefix = name.rfind(*word, 0) == 0;
    starting_with_word += prefix;
    // A name the word begins counts as one edit away ('mul' for 'multiply').
    const std::size_t d = prefix ? 1 : edit_distance(*word, name);
    if (d < best_distance) best_distance = d, best = name;
  }
  const std::string what = "unknown subcommand " + quoted_path(*word);
  // Close enough to be a typo: at most a third of the name wrong (and at least one edit),
  // or the start of one name only.
  if (best_distance <= std::max<std::size_t>(1, best.size() / 3) &&
      (best_distance > 1 || starting_with_word <= 1))
    return what + " (did you mean '" + best + "'?)";
  return what + " (expected one of: " + names + ")";
}

bool progress_wanted() { return isatty(STDERR_FILENO) == 1; }

void add_grid_options(CLI::App* cmd, CLI::Option* distributed, std::string& grid, std::int64_t& block) {
  cmd->add_option("--grid", grid, "Process grid PxQ for --distributed, P*Q = the number of processes "
                                  "(default: the most square one)")
      ->needs(distributed);
  cmd->add_option("--block", block, "Block size (rows and columns) of the block-cyclic distribution, "
                                    "--distributed")
      ->capture_default_str()
      ->needs(distributed);
}

// Every error is one line on stderr whatever it quotes: control characters that reach a
// message unescaped (an option's value in CLI11's own messages) are shown as \xNN.
void print_error(const std::string& message) {
  std::string line;
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      line += "\\x";
      line += kHex[c >> 4];
      line += kHex[c & 15];
    } else {
      line += ch;
    }
  }
  std::fprintf(stderr, "gemmkit: error: %s\n", line.c_str());
}

void run_as_mpi_process(const std::function<void()>& body) {
#ifndef GEMMKIT_HAVE_MPI
  (void)body;
  fail(ErrorCategory::usage, "--distributed needs a gemmkit built with MPI, and this one was built "
                             "without it (install libopenmpi-dev and rebuild; docs/distributed.md)");
#else
  dist::Environment mpi;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    body();
    // Rank 0's outputs go in place (and its printing is flushed) before MPI ends, so that
    // every rank exits with the status of that too.
    dist::collective(MPI_COMM_WORLD, [] {
      if (RunOutputs::current) finish_run(*RunOutputs::current);
    });
  } catch (const dist::RankError& e) {
    // Rank 0 prints the one line before any rank exits: mpirun ends the job when a process
    // exits with a failure, and a line not yet printed then is lost.
    if (rank == 0) print_error(e.what());
    MPI_Barrier(MPI_COMM_WORLD);
    throw SilentFailure(e.category(), e.what());
  } catch (const Error& e) {
    // An error that no collective step agreed (none should be) leaves the other ranks
    // waiting for this one: the job ends rather than hangs.
    print_error("rank " + std::to_string(rank) + ": " + e.what());
    MPI_Abort(MPI_COMM_WORLD, exit_status(e.category()));
  } catch (const std::exception& e) {
    print_error("rank " + std::to_string(rank) + ": internal: " + e.what());
    MPI_Abort(MPI_COMM_WORLD, exit_status(ErrorCategory::internal));
  }
#endif
}

nlohmann::json meta_json(const RunMeta& m) {
  nlohmann::json meta = {
      {"schema", "gemmkit-results"},
      {"schema_version", m.schema_version},
      {"gemmkit_version", m.gemmkit_version},
      {"commit", m.commit},
      {"dirty", m.dirty},
      {"date", m.date_utc},
      {"host", m.host},
      {"device", m.device_name()},
      {"driver_version", m.driver_version ? nlohmann::json(m.driver_version) : nlohmann::json(nullptr)},
      {"cuda_runtime_version",
       m.cuda_runtime_version ? nlohmann::json(m.cuda_runtime_version) : nlohmann::json(nullptr)},
      {"cublas_version", m.cublas_version ? nlohmann::json(m.cublas_version) : nlohmann::json(nullptr)},
      {"cpu", m.cpu},
      {"cpu_threads", m.cpu_threads},
      {"cuda_build", m.cuda_build},
      {"openblas",
       {{"config", m.openblas_config}, {"threading", m.openblas_threading}, {"threads", m.openblas_threads}}},
  };
  if (m.gpu) {
    const DeviceInfo& d = *m.gpu;
    meta["gpu"] = {{"name", d.name},
                   {"index", d.index},
                   {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                   {"sm_count", d.sm_count},
                   {"sm_clock_mhz", d.clock_khz / 1000}};
  } else {
    meta["gpu"] = nullptr;
    meta["gpu_note"] = m.device_note;
  }
  return meta;
}

nlohmann::json meta_json() { return meta_json(run_meta()); }

nlohmann::json json_document(const std::string& command, nlohmann::json fields, const RunMeta* meta) {
  fields["command"] = command;
  fields["meta"] = meta ? meta_json(*meta) : meta_json();
  return fields;
}

nlohmann::json timing_json(const TimingSpread& t) {
  return {{"samples", t.reps},
          {"min_s", t.min_s},
          {"median_s", t.median_s},
          {"max_s", t.max_s},
          {"spread", t.spread},
          {"noisy_spread", kNoisySpread},
          {"reference_spread", t.reference_spread < 0 ? nlohmann::json(nullptr) : nlohmann::json(t.reference_spread)},
          {"load", t.load.load1 < 0 ? nlohmann::json(nullptr)
                                    : nlohmann::json{{"load1", t.load.load1},
                                                     {"cores", t.load.cores},
                                                     {"threads", t.load.threads},
                                                     {"shared", t.load.shared()}}},
          {"noisy", t.noisy},
          {"noisy_reason", t.noisy_reason}};
}

CLI::Option* add_json_option(CLI::App* cmd, std::string& path, const std::string& what) {
  return cmd->add_option("--json", path, what + " (PATH, or - for standard output; docs/gemmkit.schema.json)")
      ->type_name("PATH");
}

// "4000x4000x4000,8192x1024x8192": a list of MxNxK shapes (x or X between the sizes).
std::vector<BenchShape> parse_shapes(const std::string& text) {
  std::vector<BenchShape> shapes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const std::optional<BenchShape> shape = parse_bench_shape(item);
    if (!shape)
      fail(ErrorCategory::usage, "--shapes: '" + item + "' is not MxNxK with positive "
                                 "integers (e.g. 8192x1024x4096)");
    shapes.push_back(*shape);
  }
  if (shapes.empty()) fail(ErrorCategory::usage, "--shapes is empty");
  return shapes;
}

// --suite NAME: a path (it has a '/' or ends in .txt), else a suite of shape_suite_dir().
ShapeSuite find_suite(const std::string& name) {
  const bool is_path = name.find('/') != std::string::npos ||
                       (name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0);
  return is_path ? read_shape_suite(name) : find_shape_suite(name, shape_suite_dir());
}

}  // namespace gemmkit::cli

// Shared pieces of the gemmkit subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gemmkit/bench.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/matrix.hpp"
#include "gemmkit/run_meta.hpp"
#include "gemmkit/timing_spread.hpp"

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
void add_explain(CLI::App& app);
void add_cache(CLI::App& app);

// For unsigned options (seeds): refuses a negative number, which CLI11 would wrap to 2^64 - k,
// and one past 2^64 - 1, which it would silently make 2^64 - 1.
CLI::Validator non_negative_integer();

// For counts (--reps, --warmup, --batch): an integer of at least `min`, else "must be at least
// 1, not 0" (CLI11's own ranges print their double bounds in full, 309 digits).
CLI::Validator at_least(std::int64_t min);
// For times (--max-seconds): a finite number above 0.
CLI::Validator positive_number();

// --format FMT (also spelled --output-format; walks, whose --format is its graph's, has only
// that spelling): the format of the matrix output, for names without an extension (/dev/null,
// a FIFO) or instead of it.
void add_output_format_option(CLI::App* cmd, std::string& format, bool input_has_format = false);
// Its value: npy, mtx or csv; nullopt when not given (the path decides, see output_format).
std::optional<FileFormat> parse_output_format(const std::string& text);

// For --bench sizes (after require_cuda_device): an out-of-memory error with the figures when
// `bytes` of buffers cannot fit the device, before anything is allocated.
void check_fits_device(const std::string& what, double bytes);

// --shapes "4000x4000x4000,8192x1024x8192": MxNxK shapes (x or X between the sizes); usage
// errors name the bad item.
std::vector<BenchShape> parse_shapes(const std::string& text);
// --suite NAME: a path (it has a '/' or ends in .txt), else a suite of the installed ones.
ShapeSuite find_suite(const std::string& name);

// "--backend auto|cpu|cuda": nullopt for auto.
std::optional<Backend> parse_backend(const std::string& text);
inline constexpr const char* kBackendHelp =
    "auto (the CUDA device when there is one), cpu or cuda";

// A vector file: a 1-D .npy, or an n x 1 / 1 x n matrix in any format. `what` names it in
// the input error for anything else (e.g. "X must be a vector ...").
struct VectorFile {
  std::string path;
  AnyMatrix values;
  bool row = false;  // stored 1 x n (so a result can be written back the same way)
  std::int64_t size() const { return rows_of(values) * cols_of(values); }
};
VectorFile read_vector_file(const std::string& path, const std::string& what);

// Converts a matrix read from `path` to `dtype`. A value the dtype cannot hold is an input
// error naming the file, the position and the value; integers that a floating-point dtype
// rounds (above 2^53 for f64, 2^24 for f32) and finite values that overflow the dtype and
// become infinite (f32 past 3.4e38, f16 past 65504) get one warning each, with the count and
// the first position.
AnyMatrix convert_input(const AnyMatrix& m, DType dtype, const std::string& path);

// A vector file's values in order, converted to T as convert_input does.
template <class T>
std::vector<T> vector_values(const VectorFile& v) {
  const AnyMatrix converted = convert_input(v.values, dtype_of<T>, v.path);
  const Matrix<T>& m = std::get<Matrix<T>>(converted);
  std::vector<T> out;
  out.reserve(std::size_t(m.size()));
  for (std::int64_t r = 0; r < m.rows(); ++r)
    for (std::int64_t c = 0; c < m.cols(); ++c) out.push_back(m(r, c));
  return out;
}

// Writes JSON to `path` through AtomicFile ("-": standard output).
void write_json(const std::string& path, const nlohmann::json& value);

// Before any work: every output path given can be written (gemmkit::check_output; empty
// ones, options not given, are skipped), and none is the same file as another output or as
// an input (check_distinct_files). Matrix outputs also need output_format(path, format).
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs = {});

// After a successful run: flushes what was printed to stdout, commits every output of the
// run, and closes stdout, so that a full disk or /dev/full fails the run (an output error,
// "cannot write to standard output: ...") before any file is replaced where it can.
void finish_run(OutputBatch& outputs);

// The outputs of the run under way (run() opens them; null outside a run), so that a
// --distributed run can finish them (finish_run) while MPI is still up: a failure there on
// rank 0 then ends every rank alike.
struct RunOutputs {
  explicit RunOutputs(OutputBatch& batch) { current = &batch; }
  ~RunOutputs() { current = nullptr; }
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;
  static inline OutputBatch* current = nullptr;
};

// When the command line names no known subcommand (args: argv without the program name),
// the error for it: "unknown subcommand 'mutliply' (did you mean 'multiply'?)".
std::optional<std::string> unknown_subcommand_error(const CLI::App& app,
                                                    const std::vector<std::string>& args);

// Thrown by a command that failed in part but whose outputs hold what did finish (bench: the
// sizes and kernels that ran, the failures marked): main commits the outputs, then reports
// the error and exits with its status. Any other error commits nothing.
class PartialFailure : public Error {
 public:
  using Error::Error;
};

// An error another process reports: a rank other than 0 of a distributed run, whose error
// rank 0 prints for every rank. main exits with its status and prints nothing.
class SilentFailure : public Error {
 public:
  using Error::Error;
};

// `gemmkit: error: <message>` on stderr, one line whatever the message holds (control
// characters shown as \xNN).
void print_error(const std::string& message);

// --distributed: runs `body` as one process of an MPI job (MPI initialised for it, finalised
// after), then finishes the run's outputs (RunOutputs) on every rank, agreed. Its agreed
// errors (dist::RankError) rank 0 alone prints, before any rank exits; every rank then throws
// SilentFailure with that status. Any other error (one rank's, which no collective step
// agreed) ends the job with MPI_Abort. Without MPI in the build, the usage error saying so.
void run_as_mpi_process(const std::function<void()>& body);

// --grid PxQ and --block N, the process grid and block-cyclic blocks of a --distributed run
// (each needs `distributed`, the --distributed flag).
void add_grid_options(CLI::App* cmd, CLI::Option* distributed, std::string& grid, std::int64_t& block);

// True when stderr is a terminal: long work then shows progress there.
bool progress_wanted();

// The `meta` object every --json starts with ({"meta": ..., ..., "rows": [...]}): schema
// version, gemmkit version, commit and dirty flag, date, host, device, driver, CUDA runtime,
// cuBLAS, CPU and OpenBLAS. The one place RunMeta becomes JSON.
nlohmann::json meta_json(const RunMeta& meta);
nlohmann::json meta_json();  // of run_meta(): this process, device 0

// A --json document (docs/gemmkit.schema.json): `fields` with "command" (the subcommand that
// wrote it, which names its schema) and "meta" (meta_json of `meta`, else of run_meta()).
nlohmann::json json_document(const std::string& command, nlohmann::json fields,
                             const RunMeta* meta = nullptr);

// The `timing` object of every timed row (docs/gemmkit.schema.json's $defs/timing): samples,
// min, median, max (seconds), spread, the paired reference's spread, the load of a CPU run,
// noisy and why.
nlohmann::json timing_json(const TimingSpread& t);

// --json PATH ("-": standard output) on `cmd`, the one spelling every subcommand uses.
CLI::Option* add_json_option(CLI::App* cmd, std::string& path, const std::string& what);

}  // namespace gemmkit::cli

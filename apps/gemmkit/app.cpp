// The gemmkit command line as a function, so that it can also run in-process (the CLI
// fuzzer in tests/fuzz calls it); main.cpp installs the signal handlers and calls it.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cli.hpp"
#include "gemmkit/error.hpp"
#include "version_text.hpp"

namespace gemmkit::cli {
namespace {

// Under mpirun every process parses the same command line: only rank 0 reports its errors.
bool other_mpi_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(name)) return std::string(rank) != "0";
  return false;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"gemmkit: matrix multiplication toolkit (CPU and CUDA backends)\n"
               "Files are chosen by extension: .npy, .mtx, .csv/.txt."};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.fallthrough(false);
  add_multiply(app);
  add_gen(app);
  add_bench(app);
  add_list(app);
  add_device(app);
  add_explain(app);
  add_cache(app);
  add_walks(app);
  add_reduce(app);
  add_spmv(app);
  add_conv1d(app);
  OutputBatch outputs;  // every output of the run, put in place only if it succeeds
  const RunOutputs current(outputs);
  try {
    app.parse(argc, argv);
    finish_run(outputs);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, like every other bad-usage error.
    if (other_mpi_rank()) return 2;
    if (const auto unknown = unknown_subcommand_error(app, {argv + 1, argv + argc}))
      print_error(*unknown);
    else
      print_error(std::string(e.what()) + " (see 'gemmkit --help')");
    return 2;
  } catch (const PartialFailure& e) {
    // What finished is kept (bench's finished sizes); the failure still sets the status.
    try {
      finish_run(outputs);
    } catch (const Error& write_error) {
      print_error(write_error.what());
    }
    print_error(e.what());
    return exit_status(e.category());
  } catch (const SilentFailure& e) {
    return exit_status(e.category());
  } catch (const Error& e) {
    print_error(e.what());
    return exit_status(e.category());
  } catch (const std::bad_alloc&) {
    print_error("out of host memory");
    return 1;
  } catch (const std::exception& e) {
    print_error(std::string("internal: ") + e.what());
    return 1;
  }
  return 0;
}

}  // namespace gemmkit::cli

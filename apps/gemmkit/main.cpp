// gemmkit: matrix multiplication on CPU and CUDA backends, from the command line.
#include <cstdio>
#include <exception>

#include "cli.hpp"
#include "gemmkit/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gemmkit: matrix multiplication toolkit (CPU and CUDA backends)\n"
               "Files are chosen by extension: .npy, .mtx, .csv/.txt."};
  app.set_version_flag("--version", std::string("gemmkit ") + GEMMKIT_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  gemmkit::cli::add_multiply(app);
  gemmkit::cli::add_gen(app);
  gemmkit::cli::add_bench(app);
  gemmkit::cli::add_list(app);
  gemmkit::cli::add_device(app);
  gemmkit::cli::add_walks(app);
  gemmkit::cli::add_reduce(app);
  gemmkit::cli::add_spmv(app);
  gemmkit::cli::add_conv1d(app);
  gemmkit::remove_temporary_files_on_signals();
  gemmkit::OutputBatch outputs;  // every output of the run, put in place only if it succeeds
  try {
    app.parse(argc, argv);
    gemmkit::cli::finish_run(outputs);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, like every other bad-usage error.
    if (const auto unknown = gemmkit::cli::unknown_subcommand_error(app, {argv + 1, argv + argc}))
      std::fprintf(stderr, "gemmkit: error: %s\n", unknown->c_str());
    else
      std::fprintf(stderr, "gemmkit: error: %s (see 'gemmkit --help')\n", e.what());
    return 2;
  } catch (const gemmkit::cli::PartialFailure& e) {
    try {
      gemmkit::cli::finish_run(outputs);
    } catch (const gemmkit::Error& write_error) {
      std::fprintf(stderr, "gemmkit: error: %s\n", write_error.what());
    }
    std::fprintf(stderr, "gemmkit: error: %s\n", e.what());
    return gemmkit::exit_status(e.category());
  } catch (const gemmkit::Error& e) {
    std::fprintf(stderr, "gemmkit: error: %s\n", e.what());
    return gemmkit::exit_status(e.category());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gemmkit: error: out of host memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmkit: error: internal: %s\n", e.what());
    return 1;
  }
  return 0;
}

// The gemmkit command line as a function, so that it can also run in-process (the CLI
// fuzzer in tests/fuzz calls it); main.cpp only calls it.
#include <cstdio>
#include <exception>

#include "cli.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit::cli {

int run(int argc, char** argv) {
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, like every other bad-usage error.
    std::fprintf(stderr, "gemmkit: error: %s (see 'gemmkit --help')\n", e.what());
    return 2;
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

}  // namespace gemmkit::cli

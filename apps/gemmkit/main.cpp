// gemmkit: matrix multiplication on CPU and CUDA backends, from the command line.
#include "cli.hpp"
#include "gemmkit/io.hpp"

int main(int argc, char** argv) {
  // Only the program installs these (not run(), which the CLI fuzzer calls in-process).
  gemmkit::remove_temporary_files_on_signals();
  return gemmkit::cli::run(argc, argv);
}

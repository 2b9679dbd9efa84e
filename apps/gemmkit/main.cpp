// gemmkit: matrix multiplication on CPU and CUDA backends, from the command line.
#include "cli.hpp"

int main(int argc, char** argv) { return gemmkit::cli::run(argc, argv); }

// What `gemmkit --version` prints.
#pragma once

#include <string>

namespace gemmkit::cli {

// "gemmkit 0.2.0", the commit built ("-dirty" when the tree had changes), and the CUDA
// runtime, driver and cuBLAS versions (or that the build has no CUDA), one per line.
std::string version_text();

}  // namespace gemmkit::cli

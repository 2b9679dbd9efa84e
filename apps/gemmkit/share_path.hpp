// Files installed beside the command line (share/gemmkit/), found from where the running
// binary is, so that no build path is compiled into an installed binary.
#pragma once

#include <string>

namespace gemmkit::cli {

// The plot script: $GEMMKIT_PLOT_SCRIPT when set, else ../share/gemmkit/plot.py from the
// directory of the running binary (the installed layout; the build tree has the same one).
// A usage error says where it looked when the script is not there.
std::string plot_script_path();

// The folder of the shape suites (`bench --suite NAME`): $GEMMKIT_SHAPES_DIR when set, else
// ../share/gemmkit/shapes/ from the directory of the running binary (as the plot script).
// Not checked here: find_shape_suite() says which suites it has.
std::string shape_suite_dir();

}  // namespace gemmkit::cli

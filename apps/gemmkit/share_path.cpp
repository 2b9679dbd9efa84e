#include "share_path.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "gemmkit/error.hpp"
#include "gemmkit/io.hpp"

namespace gemmkit::cli {

std::string plot_script_path() {
  namespace fs = std::filesystem;
  if (const char* script = std::getenv("GEMMKIT_PLOT_SCRIPT")) {
    if (!fs::exists(script))
      fail(ErrorCategory::usage, "plot script " + quoted_path(script) + " (GEMMKIT_PLOT_SCRIPT) not found");
    return script;
  }
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    fail(ErrorCategory::usage,
         "cannot find the plot script: /proc/self/exe is unreadable (set GEMMKIT_PLOT_SCRIPT)");
  const fs::path script = (binary.parent_path() / "../share/gemmkit/plot.py").lexically_normal();
  if (!fs::exists(script))
    fail(ErrorCategory::usage,
         "plot script " + quoted_path(script.string()) + " not found (set GEMMKIT_PLOT_SCRIPT)");
  return script.string();
}

std::string shape_suite_dir() {
  namespace fs = std::filesystem;
  if (const char* dir = std::getenv("GEMMKIT_SHAPES_DIR")) return dir;
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    fail(ErrorCategory::usage,
         "cannot find the shape suites: /proc/self/exe is unreadable (set GEMMKIT_SHAPES_DIR)");
  return (binary.parent_path() / "../share/gemmkit/shapes").lexically_normal().string();
}

}  // namespace gemmkit::cli

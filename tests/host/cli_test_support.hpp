// Shared by the command-line tests: the gemmkit binary run in a per-test scratch folder
// with both streams captured, and the one-line error contract every failure keeps.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "host/io_test_support.hpp"

namespace gemmkit::test {

struct CliResult {
  int status = -1;
  std::string out, err;
};

class CliTest : public ScratchDirTest {
 protected:
  // Runs gemmkit with `args` (paths here contain no spaces), capturing both streams.
  CliResult run(const std::string& args) const {
    const std::string out = path(".stdout"), err = path(".stderr");
    const std::string cmd = std::string(GEMMKIT_CLI_PATH) + " " + args + " >" + out + " 2>" + err;
    const int raw = std::system(cmd.c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }

  // A failed run: the status, and exactly one stderr line that starts as promised and
  // mentions `needle`.
  static void expect_error(const CliResult& r, int status, const std::string& needle) {
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_EQ(r.err.rfind("gemmkit: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "'" << needle << "' not in: " << r.err;
  }
};

}  // namespace gemmkit::test

// Shared by the command-line tests: the gemmkit binary run in a per-test scratch folder
// with both streams captured, and the one-line error contract every failure keeps.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "host/io_test_support.hpp"

namespace gemmkit::test {

// An address-space limit (RLIMIT_AS) `extra` bytes above what the CLI maps just to start:
// a CUDA build maps GiBs of libraries (cuBLAS, nvJitLink) before main, so a fixed limit would
// test the loader, not the program. The start-up size is found once, by running
// `gemmkit --version` under limits doubling from 512 MiB, each try cut off after 5 s (under
// 256 MiB the OpenMP OpenBLAS spins at start-up instead of failing).
inline rlim_t cli_address_space_limit(rlim_t extra) {
  static const rlim_t startup = [] {
    for (rlim_t limit = rlim_t{512} << 20; limit <= (rlim_t{256} << 30); limit *= 2) {
      const pid_t pid = fork();
      if (pid == 0) {
        const rlimit lim{limit, limit};
        const int null_fd = ::open("/dev/null", O_WRONLY);
        if (setrlimit(RLIMIT_AS, &lim) != 0 || null_fd < 0 || dup2(null_fd, 1) < 0 ||
            dup2(null_fd, 2) < 0)
          _exit(99);
        alarm(5);  // survives exec: a start-up that hangs ends by SIGALRM
        execl(GEMMKIT_CLI_PATH, GEMMKIT_CLI_PATH, "--version", static_cast<char*>(nullptr));
        _exit(98);
      }
      int status = 0;
      if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return limit;
    }
    return RLIM_INFINITY;
  }();
  return startup == RLIM_INFINITY ? RLIM_INFINITY : startup + extra;
}

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

  // gemmkit `args` under an address-space limit (RLIMIT_AS = `limit`), cut off by SIGALRM
  // after `seconds` (status -1 then, as for any signal).
  CliResult run_limited(rlim_t limit, const std::vector<std::string>& args, unsigned seconds = 60) const {
    const std::string out = path(".stdout"), err = path(".stderr");
    const pid_t pid = fork();
    if (pid == 0) {
      const rlimit lim{limit, limit};
      const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (setrlimit(RLIMIT_AS, &lim) != 0 || out_fd < 0 || err_fd < 0 || dup2(out_fd, 1) < 0 ||
          dup2(err_fd, 2) < 0)
        _exit(99);
      std::vector<char*> argv{const_cast<char*>(GEMMKIT_CLI_PATH)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      alarm(seconds);  // survives exec: a run that hangs ends by SIGALRM
      execv(GEMMKIT_CLI_PATH, argv.data());
      _exit(98);
    }
    int status = 0;
    CliResult r;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.status = WEXITSTATUS(status);
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

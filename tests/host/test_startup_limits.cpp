// The CLI under a small address-space limit (`ulimit -v`): it starts, and says what it needs
// where it cannot go on. OpenBLAS, cuBLAS and cuSPARSE are loaded when first called
// (src/core/lazy_library.hpp); linked, they were mapped before main, and a limit of a few
// hundred MiB made the loader fail (exit 127) or OpenBLAS's start-up retry its buffer's mmap
// forever.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;

namespace {

class StartupLimits : public test::CliTest {
 protected:
  // 256 MiB of address space beyond the binary's own file (which is mapped whole).
  static rlim_t small_limit() {
    return rlim_t(std::filesystem::file_size(GEMMKIT_CLI_PATH)) + (rlim_t{256} << 20);
  }

  // gemmkit `args` under RLIMIT_AS = `limit`, cut off by SIGALRM after 20 s (status -1 then).
  CliResult run_limited(rlim_t limit, const std::vector<std::string>& args) const {
    const std::string out = path(".stdout"), err = path(".stderr");
    const pid_t pid = fork();
    if (pid == 0) {
      const rlimit lim{limit, limit};
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (setrlimit(RLIMIT_AS, &lim) != 0 || out_fd < 0 || err_fd < 0 || dup2(out_fd, 1) < 0 ||
          dup2(err_fd, 2) < 0)
        _exit(99);
      std::vector<char*> argv{const_cast<char*>(GEMMKIT_CLI_PATH)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      alarm(20);  // survives exec: a start-up that hangs ends by SIGALRM
      execv(GEMMKIT_CLI_PATH, argv.data());
      _exit(98);
    }
    int status = 0;
    CliResult r;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.status = WEXITSTATUS(status);
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
};

TEST_F(StartupLimits, VersionAndHelpStart) {
  for (const char* arg : {"--version", "--help"}) {
    const CliResult r = run_limited(small_limit(), {arg});
    EXPECT_EQ(r.status, 0) << arg << " under a limit of " << (small_limit() >> 20) << " MiB: " << r.err;
    EXPECT_FALSE(r.out.empty()) << arg;
  }
}

// A CPU product that needs OpenBLAS either runs or says that loading it needs more
// than the limit leaves: one line, exit 1, no output. Never a hang, a crash or exit 127.
TEST_F(StartupLimits, OpenBlasIsLoadedOrRefusedWithTheFigures) {
  const std::string a = path("A.npy"), c = path("C.npy");
  ASSERT_EQ(run("gen 48 48 -o " + a + " --seed 3").status, 0);
  for (rlim_t extra : {rlim_t{0}, rlim_t{64} << 20, rlim_t{1} << 30}) {
    SCOPED_TRACE("limit " + std::to_string((small_limit() + extra) >> 20) + " MiB");
    const CliResult r =
        run_limited(small_limit() + extra, {"multiply", a, a, "-o", c, "--backend", "cpu", "--kernel", "cpu_openblas"});
    if (r.status == 0) {
      EXPECT_TRUE(std::filesystem::exists(c));
      std::filesystem::remove(c);
      continue;
    }
    expect_error(r, 1, "loading OpenBLAS (a 128 MiB buffer for each of its");
    EXPECT_NE(r.err.find("(limit from ulimit -v)"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(c));
  }
  // With a GiB to spare it loads.
  const CliResult r = run_limited(small_limit() + (rlim_t{1} << 30),
                                  {"multiply", a, a, "-o", c, "--backend", "cpu", "--kernel", "cpu_openblas"});
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace

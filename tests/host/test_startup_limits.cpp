// The CLI under a small address-space limit (`ulimit -v`): it starts, and says what it needs
// where it cannot go on. OpenBLAS, cuBLAS, cuSPARSE and NCCL are loaded when first called
// (src/runtime/lazy_library.hpp); linked, they were mapped before main, and a limit of a few
// hundred MiB made the loader fail (exit 127) or OpenBLAS's start-up retry its buffers' mmap
// forever.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;

namespace {

class StartupLimits : public test::CliTest {
 protected:
  void SetUp() override {
    test::CliTest::SetUp();
    // A sanitizer's shadow memory needs terabytes of address space: no limit can be tested.
    if (test::cli_address_space_limit(0) == RLIM_INFINITY)
      GTEST_SKIP() << "the CLI starts under no address-space limit (a sanitizer build)";
  }

  // 256 MiB of address space beyond the binary's own file (which is mapped whole).
  static rlim_t small_limit() {
    return rlim_t(std::filesystem::file_size(GEMMKIT_CLI_PATH)) + (rlim_t{256} << 20);
  }
};

TEST_F(StartupLimits, VersionAndHelpStart) {
  for (const char* arg : {"--version", "--help"}) {
    const CliResult r = run_limited(small_limit(), {arg}, 20);
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
        run_limited(small_limit() + extra, {"multiply", a, a, "-o", c, "--backend", "cpu", "--kernel", "cpu_openblas"}, 20);
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
                                  {"multiply", a, a, "-o", c, "--backend", "cpu", "--kernel", "cpu_openblas"}, 20);
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace

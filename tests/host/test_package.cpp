// The installed package's pieces that the command line shows: the version header,
// `gemmkit --version`, and the plot script and shape suites found beside the binary (no
// build path in it).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gemmkit/device.hpp"
#include "gemmkit/version.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

namespace fs = std::filesystem;

TEST(VersionHeader, VersionStringMatchesItsParts) {
  EXPECT_EQ(std::string(GEMMKIT_VERSION), std::to_string(GEMMKIT_VERSION_MAJOR) + "." +
                                              std::to_string(GEMMKIT_VERSION_MINOR) + "." +
                                              std::to_string(GEMMKIT_VERSION_PATCH));
  EXPECT_EQ(GEMMKIT_VERSION_NUMBER,
            GEMMKIT_VERSION_MAJOR * 10000 + GEMMKIT_VERSION_MINOR * 100 + GEMMKIT_VERSION_PATCH);
  EXPECT_GE(GEMMKIT_VERSION_NUMBER, 200);  // 0.2.0 introduced the header
}

TEST(VersionHeader, CudaVersionsSayWhatTheBuildHas) {
  const CudaVersions v = cuda_versions();
  if (cuda_compiled()) {
    EXPECT_GE(v.runtime, 11000);  // asked of the runtime and cuBLAS, which need no device
    EXPECT_GE(v.cublas, 110000);
  } else {
    EXPECT_EQ(v.runtime, 0);
    EXPECT_EQ(v.driver, 0);
    EXPECT_EQ(v.cublas, 0);
  }
}

class PackageCli : public test::CliTest {
 protected:
  // Runs `binary args` with GEMMKIT_PLOT_SCRIPT and GEMMKIT_SHAPES_DIR unset.
  test::CliResult run_binary(const std::string& binary, const std::string& args) const {
    const std::string out = path(".stdout"), err = path(".stderr");
    const std::string cmd = "env -u GEMMKIT_PLOT_SCRIPT -u GEMMKIT_SHAPES_DIR " + binary + " " + args + " >" + out + " 2>" + err;
    const int raw = std::system(cmd.c_str());
    test::CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
  // A copy of the CLI at <scratch>/prefix/bin/gemmkit, as an installed one would be.
  std::string copied_cli() const {
    fs::create_directories(path("prefix/bin"));
    fs::copy_file(GEMMKIT_CLI_PATH, path("prefix/bin/gemmkit"));
    return path("prefix/bin/gemmkit");
  }
};

TEST_F(PackageCli, VersionPrintsVersionCommitAndCuda) {
  const test::CliResult r = run("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(std::string("gemmkit ") + GEMMKIT_VERSION + "\ncommit ", 0), 0u) << r.out;
  const std::size_t commit = r.out.find("\ncommit ") + 8, end = r.out.find('\n', commit);
  EXPECT_GT(end, commit) << r.out;  // a commit ("unknown" outside a git checkout)
  if (cuda_compiled()) {
    EXPECT_NE(r.out.find("CUDA runtime "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(", cuBLAS "), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("CUDA: none"), std::string::npos) << r.out;
  }
}

TEST_F(PackageCli, PlotScriptIsLookedForBesideTheBinary) {
  const std::string cli = copied_cli();
  const test::CliResult r =
      run_binary(cli, "bench --backend cpu --sizes 8 --reps 1 --warmup 0 --plot " + path("p.png"));
  // Not the build tree's script: the one the copied binary's prefix would have.
  expect_error(r, 2, quoted_path(path("prefix/share/gemmkit/plot.py")));
  // Found missing before the benchmark ran: no table, no other output.
  EXPECT_EQ(r.out.find("GFLOP/s"), std::string::npos) << r.out;
}

TEST_F(PackageCli, PlotScriptBesideTheBinaryIsRun) {
  const std::string probe = std::string(GEMMKIT_PYTHON) + " -c 'import matplotlib' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)
    GTEST_SKIP() << GEMMKIT_PYTHON << " has no matplotlib (python3-matplotlib)";
  const std::string cli = copied_cli();
  fs::create_directories(path("prefix/share/gemmkit"));
  // A stand-in plot script: writes a recognisable "PNG" where it is told to.
  write_file("prefix/share/gemmkit/plot.py",
             "import sys\nopen(sys.argv[sys.argv.index('-o') + 1], 'w').write('stand-in plot')\n");
  const test::CliResult r =
      run_binary(cli, "bench --backend cpu --sizes 8 --reps 1 --warmup 0 --plot " + path("p.png"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path("p.png")), "stand-in plot");
}

TEST_F(PackageCli, ShapeSuitesAreLookedForBesideTheBinary) {
  const std::string cli = copied_cli();
  fs::create_directories(path("prefix/share/gemmkit/shapes"));
  write_file("prefix/share/gemmkit/shapes/mine.txt", "# installed\n8x8x8 # a\n");
  test::CliResult r = run_binary(cli, "bench --backend cpu --suite mine --kernels cpu_naive --reps 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("suite mine, f32"), std::string::npos) << r.out;
  // Not the build tree's suites: the prefix's.
  r = run_binary(cli, "bench --backend cpu --suite skinny");
  expect_error(r, 2, "unknown shape suite 'skinny' (known: mine, all, in " +
                         quoted_path(path("prefix/share/gemmkit/shapes")));
}

}  // namespace
}  // namespace gemmkit

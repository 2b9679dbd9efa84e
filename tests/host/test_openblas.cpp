// The OpenBLAS that runs is the build configure chose: Debian's OpenMP build, sharing the
// OpenMP runtime (and its threads) with cpu_blocked, not the pthreads build that the
// libopenblas.so.0 alternatives symlink prefers, whose spinning threads starved cpu_blocked.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <string>

#include "gemmkit/openblas.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

TEST(OpenBlas, LoadedBuildIsTheOpenMPOneConfigureLinked) {
  const OpenBlasInfo info = openblas_info();
  EXPECT_NE(info.config.find("OpenBLAS"), std::string::npos) << info.config;
  if (!info.openmp_build_linked)
    GTEST_SKIP() << "configure found no OpenMP build of OpenBLAS (libopenblas-openmp-dev); "
                    "this one is " << info.threading << ": " << info.config;
  EXPECT_EQ(info.threading, "openmp") << info.config;
  EXPECT_NE(info.config.find("USE_OPENMP"), std::string::npos) << info.config;
  // One runtime: OpenBLAS follows the OpenMP thread count instead of keeping its own.
  EXPECT_EQ(info.threads, omp_get_max_threads());
}

class OpenBlasCli : public test::CliTest {};

TEST_F(OpenBlasCli, BenchReportsTheOpenBlasItRuns) {
  const std::string json = path("r.json");
  const test::CliResult r =
      run("bench --backend cpu --sizes 16 --reps 1 --warmup 0 --kernels cpu_blocked --json " + json);
  ASSERT_EQ(r.status, 0) << r.err;
  const OpenBlasInfo info = openblas_info();  // the CLI is linked as this test is
  EXPECT_NE(r.out.find("OpenBLAS " + info.threading), std::string::npos) << r.out;
  const auto env = nlohmann::json::parse(read_file(json))["meta"]["openblas"];
  EXPECT_EQ(env["threading"], info.threading) << env.dump();
  EXPECT_EQ(env["config"], info.config) << env.dump();
}

}  // namespace
}  // namespace gemmkit

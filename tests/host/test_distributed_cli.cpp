// multiply, walks and bench --distributed outside mpirun: in a build with MPI a single process
// (a 1x1 grid) gives the single-process result; in one without, a usage error saying so. The runs under
// mpirun are tests/mpi's (registered only in MPI builds).
#include <gtest/gtest.h>

#include "host/cli_test_support.hpp"

namespace gemmkit::test {
namespace {

class DistributedCli : public CliTest {};

TEST_F(DistributedCli, AloneOrRefusedWithoutMpi) {
  ASSERT_EQ(run("gen 9 7 --dtype i64 --seed 1 -o " + path("a.npy")).status, 0);
  ASSERT_EQ(run("gen 7 5 --dtype i64 --seed 2 -o " + path("b.npy")).status, 0);
  const std::string operands = path("a.npy") + " " + path("b.npy");
  ASSERT_EQ(run("multiply " + operands + " -o " + path("one.npy")).status, 0);
  const CliResult r = run("multiply " + operands + " -o " + path("dist.npy") + " --distributed --block 2");
#if GEMMKIT_TEST_HAVE_MPI
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("summa(1x1, block 2, cpu_blocked)"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(path("dist.npy")), read_file(path("one.npy")));
#else
  expect_error(r, 2, "--distributed needs a gemmkit built with MPI");
  EXPECT_FALSE(std::filesystem::exists(path("dist.npy")));
#endif
}

TEST_F(DistributedCli, WalksAndBenchAloneOrRefusedWithoutMpi) {
  write_file("g.txt", "a b 2\nb c -1\nc a 3\na c 1\nc c 1\n");
  ASSERT_EQ(run("walks " + path("g.txt") + " --length 50 -o " + path("one.csv")).status, 0);
  const CliResult walks = run("walks " + path("g.txt") + " --length 50 -o " + path("dist.csv") + " --distributed");
  const CliResult bench = run("bench --distributed --sizes 16 --reps 1 --json " + path("b.json"));
#if GEMMKIT_TEST_HAVE_MPI
  ASSERT_EQ(walks.status, 0) << walks.err;
  EXPECT_EQ(read_file(path("dist.csv")), read_file(path("one.csv")));
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_NE(read_file(path("b.json")).find("\"grid\": \"1x1\""), std::string::npos);
#else
  expect_error(walks, 2, "--distributed needs a gemmkit built with MPI");
  expect_error(bench, 2, "--distributed needs a gemmkit built with MPI");
  EXPECT_FALSE(std::filesystem::exists(path("dist.csv")));
#endif
}

TEST_F(DistributedCli, GridAndBlockNeedDistributed) {
  expect_error(run("multiply x.npy y.npy -o z.npy --grid 2x2"), 2, "--grid requires --distributed");
  expect_error(run("multiply x.npy y.npy -o z.npy --block 8"), 2, "--block requires --distributed");
  expect_error(run("bench --grid 2x2"), 2, "--grid requires --distributed");
}

}  // namespace
}  // namespace gemmkit::test

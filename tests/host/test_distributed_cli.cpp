// multiply --distributed outside mpirun: in a build with MPI a single process (a 1x1 grid)
// gives the single-process result; in one without, a usage error saying so. The runs under
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

TEST_F(DistributedCli, GridAndBlockNeedDistributed) {
  expect_error(run("multiply x.npy y.npy -o z.npy --grid 2x2"), 2, "--grid requires --distributed");
  expect_error(run("multiply x.npy y.npy -o z.npy --block 8"), 2, "--block requires --distributed");
}

}  // namespace
}  // namespace gemmkit::test

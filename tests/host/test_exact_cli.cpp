// What `multiply` says about exact integer outputs it cannot give: --out-dtype i64 and exact
// are for integer inputs, run on the GPU (cuda_exact_residues), and never on the CPU kernels.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "host/cli_test_support.hpp"

namespace {

using gemmkit::test::CliResult;

class ExactCli : public gemmkit::test::CliTest {
 protected:
  void SetUp() override {
    gemmkit::test::CliTest::SetUp();
    a = write_file("A.csv", "1,2,3\n4,5,6\n");
    b = write_file("B.csv", "7,8\n9,10\n11,12\n");
    c = path("C.csv");
  }
  std::string a, b, c;
};

TEST_F(ExactCli, WiderOutputsNeedIntegerInputs) {
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype f32 --out-dtype exact");
  expect_error(r, 2, "--out-dtype exact takes integer inputs (--dtype i32 or i64), not f32");
  r = run("multiply " + a + " " + b + " -o " + c + " --dtype i64 --out-dtype i32");
  expect_error(r, 2, "--out-dtype i32 with i64 inputs: C is i64 or exact");
  r = run("multiply " + a + " " + b + " -o " + c + " --dtype f64 --out-dtype i64");
  expect_error(r, 2, "--out-dtype i64 with f64 inputs: C is f64");
  EXPECT_FALSE(std::filesystem::exists(c));
}

TEST_F(ExactCli, TheCpuBackendRefusesWiderIntegerOutputs) {
  for (const char* out : {"i64", "exact"}) {
    SCOPED_TRACE(out);
    CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --out-dtype " + out + " --backend cpu");
    expect_error(r, 2, "is computed by cuda_exact_residues on the CUDA backend; the CPU kernels write C in the "
                       "inputs' dtype");
    r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --out-dtype " + out + " --kernel cpu_blocked");
    expect_error(r, 2, "is computed by cuda_exact_residues");
    EXPECT_FALSE(std::filesystem::exists(c));
  }
}

TEST_F(ExactCli, ExactOutputIsCsvOrNpy) {
  const CliResult r = run("multiply " + a + " " + b + " -o " + path("C.mtx") + " --dtype i64 --out-dtype exact");
  expect_error(r, 2, "--out-dtype exact writes .csv (decimal integers) or .npy (uint64 limbs), not");
  EXPECT_FALSE(std::filesystem::exists(path("C.mtx")));
}

TEST_F(ExactCli, I32OnTheCpuStillWrapsNothing) {
  // The CPU backend keeps its semantics: an overflowing i32 product is an error, not a result.
  const std::string big = write_file("Big.csv", "2147483647,2147483647\n");
  const std::string one = write_file("One.csv", "1\n1\n");
  const CliResult r = run("multiply " + big + " " + one + " -o " + c + " --dtype i32 --backend cpu --verify none");
  expect_error(r, 1, "the exact result at (0, 0) is 4294967294, which does not fit i32");
  EXPECT_FALSE(std::filesystem::exists(c));
}

}  // namespace

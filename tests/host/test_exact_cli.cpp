// What `multiply` says about exact integer outputs it cannot give: --out-dtype i64 and exact
// are for integer inputs; exact runs on the GPU (cuda_exact_residues), never on the CPU
// kernels, and i64 for i32 inputs on either; and the Ozaki emulation's --moduli.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "arith/int128.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/verify.hpp"
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

// The library says which kernels take an option (the registry's traits), in every front end.
TEST_F(ExactCli, TheCpuBackendRefusesBigIntegerOutputs) {
  const std::string takers = gemmkit::cuda_compiled() ? "exact output (limbs) is for cuda_exact_residues (cuda)"
                                                      : "exact output (limbs) is taken by no kernel of this build (it was built without the CUDA backend)";
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --out-dtype exact --backend cpu");
  expect_error(r, 2, takers + (gemmkit::cuda_compiled() ? "; not for the cpu backend" : ""));
  r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --out-dtype exact --kernel cpu_blocked");
  expect_error(r, 2, takers + "; not for cpu_blocked");
  EXPECT_FALSE(std::filesystem::exists(c));
}

TEST_F(ExactCli, I32WithCInI64RunsOnTheCpu) {
  // The library's cpu_blocked takes i32 inputs with C in i64: (2^31 - 1)^2 * 2 fits i64, not i32.
  const std::string big = write_file("Big.csv", "2147483647,2147483647\n-2147483648,1\n");
  CliResult r = run("multiply " + big + " " + big + " -o " + c + " --dtype i32 --out-dtype i64 --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(c), "-2147483647,4611686016279904256\n-4611686018427387904,-4611686016279904255\n");
  r = run("multiply " + big + " " + big + " -o " + c + " --dtype i32 --out-dtype i64 --kernel cpu_naive");
  expect_error(r, 2, "C in i64 is not supported");
}

TEST_F(ExactCli, WiderIntegerOutputsWithoutADeviceSayWhy) {
  if (gemmkit::cuda_device_available()) GTEST_SKIP() << "needs a machine without a CUDA device";
  for (const char* out : {"exact"}) {
    SCOPED_TRACE(out);
    const CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --out-dtype " + out);
    if (gemmkit::cuda_compiled())
      expect_error(r, 1, "exact output (limbs) is computed on the CUDA backend, and this machine has none: no CUDA "
                         "device: ");
    else
      expect_error(r, 2, "exact output (limbs) is taken by no kernel of this build (it was built without the CUDA "
                         "backend)");
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

TEST_F(ExactCli, ModuliAreForTheOzakiKernelsOnly) {
  const std::string takers = gemmkit::cuda_compiled()
                                 ? "moduli 16 is for cuda_ozaki_f64 (cuda), cuda_ozaki_f32 (cuda)"
                                 : "moduli 16 is taken by no kernel of this build (it was built without the CUDA backend)";
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype f64 --moduli 16");
  expect_error(r, 2, takers + (gemmkit::cuda_compiled() ? ", which auto does not choose: name one" : ""));
  r = run("multiply " + a + " " + b + " -o " + c + " --dtype f64 --kernel cpu_blocked --moduli 16");
  expect_error(r, 2, takers + "; not for cpu_blocked");
  EXPECT_FALSE(std::filesystem::exists(c));
}

}  // namespace

namespace {

using gemmkit::i128;
using gemmkit::u128;

// On a machine with a CUDA device: the exact GPU GEMM through the command line.
class ExactCliGpu : public ExactCli {
 protected:
  void SetUp() override {
    if (!gemmkit::cuda_device_available()) GTEST_SKIP() << gemmkit::no_device_message();
    ExactCli::SetUp();
  }
};

TEST_F(ExactCliGpu, FullRangeI32AsExactDecimalsAndI64) {
  // [2^31 - 1, -2^31] x [-2^31, -2^31; 2^31 - 1, 5]: 2^62 - 2^31 - 2^62 + 2^31 = ... exactly.
  const std::string big_a = write_file("BA.csv", "2147483647,-2147483648\n-2147483648,-2147483648\n");
  const std::string big_b = write_file("BB.csv", "-2147483648,-2147483648\n2147483647,5\n");
  const std::string out = path("E.csv");
  CliResult r = run("multiply " + big_a + " " + big_b + " -o " + out + " --dtype i32 --backend cuda --out-dtype exact");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("exact: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verified (exact, modular Freivalds on the limbs"), std::string::npos) << r.out;
  // (2^31-1)(-2^31) + (-2^31)(2^31-1) = -2^63 + 2^32; (2^31-1)(-2^31) + (-2^31)(5) = -2^62 - 2^32... as GMP would.
  const i128 a00 = 2147483647, a01 = -2147483648LL, a10 = -2147483648LL, a11 = -2147483648LL;
  const i128 b00 = -2147483648LL, b01 = -2147483648LL, b10 = 2147483647, b11 = 5;
  auto text = [](i128 v) {
    std::string s;
    const bool neg = v < 0;
    u128 u = neg ? -u128(v) : u128(v);
    do s.insert(s.begin(), char('0' + int(u % 10))), u /= 10; while (u);
    return neg ? "-" + s : s;
  };
  const std::string expected = text(a00 * b00 + a01 * b10) + "," + text(a00 * b01 + a01 * b11) + "\n" +
                               text(a10 * b00 + a11 * b10) + "," + text(a10 * b01 + a11 * b11) + "\n";
  EXPECT_EQ(read_file(out), expected);
  // i64 C holds these (|x| < 2^63 here): the same numbers.
  r = run("multiply " + big_a + " " + big_b + " -o " + path("E64.csv") + " --dtype i32 --backend cuda --out-dtype i64");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(path("E64.csv")).find(text(a10 * b00 + a11 * b10)), std::string::npos);
  // i32 C does not: the first entry that does not fit is named, with its value, nothing written.
  r = run("multiply " + big_a + " " + big_b + " -o " + path("E32.csv") + " --dtype i32 --backend cuda");
  expect_error(r, 1, "the exact result at (0, 0) is " + text(a00 * b00 + a01 * b10) + ", which does not fit i32");
  EXPECT_FALSE(std::filesystem::exists(path("E32.csv")));
}

TEST_F(ExactCliGpu, SmallI32IsVerifiedLikeTheCpu) {
  const CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype i32 --backend cuda --verify full");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("on cuda_exact_residues"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every entry equals the exact product"), std::string::npos) << r.out;
  EXPECT_NE(read_file(c).find("58,64\n139,154"), std::string::npos) << read_file(c);
}

// The Ozaki emulation through the command line: its plan printed, the result verified like
// native DGEMM's, the moduli chosen or given; a dtype the kernel does not take refused.
TEST_F(ExactCliGpu, OzakiEmulationWithDefaultAndChosenModuli) {
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype f64 --kernel cuda_ozaki_f64 --verify full");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("on cuda_ozaki_f64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ozaki: "), std::string::npos) << r.out;
  EXPECT_NE(read_file(c).find("58,64\n139,154"), std::string::npos) << read_file(c);
  r = run("multiply " + a + " " + b + " -o " + path("C9.csv") + " --dtype f32 --kernel cuda_ozaki_f32 --moduli 9 --json " +
          path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ozaki: 9 int8 primes"), std::string::npos) << r.out;
  EXPECT_NE(read_file(path("r.json")).find("\"moduli\": 9"), std::string::npos);
  r = run("multiply " + a + " " + b + " -o " + path("C1.csv") + " --dtype f64 --kernel cuda_ozaki_f64 --moduli 1");
  expect_error(r, 2, "Ozaki emulation takes 2 to 53 moduli, not 1");
  r = run("multiply " + a + " " + b + " -o " + path("Cx.csv") + " --dtype f32 --kernel cuda_ozaki_f64");
  expect_error(r, 2, "kernel cuda_ozaki_f64 does not take dtype f32");
  EXPECT_FALSE(std::filesystem::exists(path("C1.csv")));
  EXPECT_FALSE(std::filesystem::exists(path("Cx.csv")));
}

}  // namespace

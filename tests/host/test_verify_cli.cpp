// What `multiply` says about its check: the check's name and guarantee, the Pascal exercise,
// integer overflow reported even with --verify none, --verify exact, Inf and NaN inputs and
// float overflow, and a multiply too big for its memory limit refused with the figures instead
// of being killed.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gemmkit/io.hpp"
#include "host/cli_test_support.hpp"

namespace {

using gemmkit::test::CliResult;

class VerifyCli : public gemmkit::test::CliTest {
 protected:
  // The n x n lower Pascal matrix (binom(i, j)) or its inverse ((-1)^(i-j) binom(i, j)) as
  // an integer CSV file.
  std::string pascal_csv(int n, bool inverse) const {
    std::string text;
    for (int i = 0; i < n; ++i) {
      long double binomial = 1;  // exact: binom(59, 29) < 2^63 < 2^64 (long double's mantissa)
      for (int j = 0; j < n; ++j) {
        if (j > 0) text += ",";
        if (j > i) {
          text += "0";
          continue;
        }
        const auto value = static_cast<long long>(binomial);
        text += std::to_string(inverse && (i - j) % 2 ? -value : value);
        binomial = binomial * (i - j) / (j + 1);
      }
      text += "\n";
    }
    return write_file((inverse ? "Linv" : "L") + std::to_string(n) + ".csv", text);
  }
};

TEST_F(VerifyCli, PascalN40VerifiesExactlyInF64AndN41FailsSayingWhy) {
  CliResult r = run("multiply " + pascal_csv(40, false) + " " + pascal_csv(40, true) + " -o " +
                    path("I.csv") + " --dtype f64");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verified (full, exact integer reference)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every entry equals the exact product"), std::string::npos) << r.out;
  // The CSV files hold integers (i64): the check is of them as converted to f64.
  EXPECT_NE(r.out.find("of the inputs as converted to f64"), std::string::npos) << r.out;
  for (const char* mode : {"full", "freivalds", "exact"}) {
    SCOPED_TRACE(mode);
    const std::string out = path(std::string("I41_") + mode + ".csv");
    r = run("multiply " + pascal_csv(41, false) + " " + pascal_csv(41, true) + " -o " + out +
            " --dtype f64 --kernel cpu_blocked --verify " + mode);
    expect_error(r, 1, std::string("verification (") + mode);
    EXPECT_NE(r.err.find(std::string(mode) == "exact" ? "entry (40, " : "ill-conditioned"),
              std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // In i64 the same product is exact.
  r = run("multiply " + pascal_csv(41, false) + " " + pascal_csv(41, true) + " -o " + path("I.npy"));
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(VerifyCli, WrappedIntegerProductsAreReportedWithVerifyNone) {
  // [2^62, 2^62] [1; 1] = 2^63 does not fit i64 (it used to be written as -2^63, exit 0).
  const std::string a = write_file("A.csv", "4611686018427387904,4611686018427387904\n");
  const std::string b = write_file("B.csv", "1\n1\n");
  const std::string c = path("C.csv");
  for (const char* mode : {"none", "auto", "exact"}) {
    SCOPED_TRACE(mode);
    const CliResult r = run("multiply " + a + " " + b + " -o " + c + " --verify " + mode);
    expect_error(r, 1, "the exact result at (0, 0) is 9223372036854775808, which does not fit i64");
    EXPECT_FALSE(std::filesystem::exists(c));
  }
  // Terms past the range that cancel are fine.
  const std::string a2 = write_file("A2.csv", "4611686018427387904,-4611686018427387904\n");
  const CliResult r = run("multiply " + a2 + " " + b + " -o " + c + " --verify none");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(c), "0\n");
  EXPECT_NE(r.out.find("not verified (--verify none); no entry of the exact product overflows"),
            std::string::npos) << r.out;
}

TEST_F(VerifyCli, VerifyExactNeedsIntegerValuedInputsAndSaysItsGuarantee) {
  const std::string a = write_file("A.csv", "1,2\n3,4\n"), b = write_file("B.csv", "0.5,1\n1,1\n");
  const std::string c = path("C.npy"), json = path("r.json");
  expect_error(run("multiply " + a + " " + b + " -o " + c + " --verify exact"), 2, "integer-valued");
  EXPECT_FALSE(std::filesystem::exists(c));
  const std::string b2 = write_file("B2.csv", "2,1\n1,1\n");
  CliResult r = run("multiply " + a + " " + b2 + " -o " + c + " --verify exact --json " + json);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verified (exact, modular Freivalds"), std::string::npos) << r.out;
  const nlohmann::json report = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(report["verify"]["method"], "exact");
  EXPECT_NE(report["verify"]["guarantee"].get<std::string>().find("probability below 2^-92"),
            std::string::npos);
  // A full check of fractional data names its reference and its tolerance.
  r = run("multiply " + a + " " + b + " -o " + c + " --verify full --json " + json);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json full = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(full["verify"]["check"], "full, double-double reference");
  EXPECT_NE(full["verify"]["guarantee"].get<std::string>().find("relative Frobenius error against the exact product"),
            std::string::npos);
  EXPECT_EQ(full["verify"]["of_converted_inputs"], true);  // A is i64, B f64
}

TEST_F(VerifyCli, InfAndNaNInputsVerifyAsIeeeArithmeticHasThem) {
  // inf x 1 used to fail: "entry (0, 0) is inf, expected -nan".
  const std::string c = path("C.npy");
  CliResult r = run("multiply " + write_file("A.csv", "inf\n") + " " + write_file("B.csv", "1\n") + " -o " + c);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verified (full, double-double reference)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Inf and NaN exactly where IEEE arithmetic puts them"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(c));
  // NaN * 1, Inf * 0, Inf - Inf beside finite rows, under every check: Freivalds (auto's check
  // past 2e9 multiply-adds) rejected any of them.
  const std::string a = write_file("A5.csv", "nan,1\ninf,2\ninf,-inf\n1,2\n");
  const std::string b = write_file("B5.csv", "0,1\n1,1\n");
  for (const char* mode : {"auto", "full", "freivalds"}) {
    SCOPED_TRACE(mode);
    const std::string out = path(std::string("C5_") + mode + ".npy");
    r = run("multiply " + a + " " + b + " -o " + out + " --verify " + mode);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(std::string("verified (") + (std::string(mode) == "auto" ? "full" : mode)),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Inf and NaN exactly where IEEE arithmetic puts them"), std::string::npos) << r.out;
  }
  // --verify exact takes integers only, and Inf is none.
  expect_error(run("multiply " + a + " " + b + " -o " + path("C5.npy") + " --verify exact"), 2, "integer-valued");
  EXPECT_FALSE(std::filesystem::exists(path("C5.npy")));
}

TEST_F(VerifyCli, AProductBeyondTheDtypeFailsAsAnOverflowNamingTheExactValue) {
  // 2^127 * 3 in f32 is Inf: not the product. It used to say "entry (0, 0) is inf, expected
  // 5.1042355e+38" as if the kernel were wrong, and "expected -nan" beyond f64.
  const std::string c = path("C.npy");
  for (const char* mode : {"full", "freivalds"}) {
    SCOPED_TRACE(mode);
    const CliResult r = run("multiply " + write_file("A.csv", "1.7014118346046923e38\n") + " " +
                            write_file("B.csv", "3\n") + " -o " + c + " --dtype f32 --verify " + mode);
    expect_error(r, 1, "numeric overflow: the exact result at (0, 0) is 5.1042355e+38, beyond f32");
    EXPECT_FALSE(std::filesystem::exists(c));
  }
  const CliResult r = run("multiply " + write_file("A64.csv", "1e300,1e300\n") + " " +
                          write_file("B64.csv", "1e300\n2e300\n") + " -o " + c);
  expect_error(r, 1, "numeric overflow: the exact result at (0, 0) is 3e+600, beyond f64");
  EXPECT_FALSE(std::filesystem::exists(c));
}

TEST_F(VerifyCli, AMultiplyTooBigForItsMemoryLimitIsRefusedWithTheFigures) {
  // 20000x1 times 1x20000: tiny inputs, a 3 GiB product, under an address-space limit 1 GiB
  // above what the binary needs to start.
  // It used to be cut down by the allocation failing part-way ("out of host memory").
  std::string column, row;
  for (int i = 0; i < 20000; ++i) column += "1.5\n", row += (i ? ",2" : "2");
  const std::string a = write_file("A.csv", column), b = write_file("B.csv", row + "\n");
  const std::string c = path("C.npy");
  const rlim_t limit_as = gemmkit::test::cli_address_space_limit(rlim_t{1} << 30);
  if (limit_as == RLIM_INFINITY) GTEST_SKIP() << "the CLI starts under no address-space limit (a sanitizer build)";
  const CliResult r = run_limited(limit_as, {"multiply", a, b, "-o", c, "--backend", "cpu"});
  expect_error(r, 1, "multiply 20000x20000x1 needs 3.00 GiB of host memory");
  EXPECT_NE(r.err.find("GiB available (limit from ulimit -v)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(c));
}

// A .npy file of `descr` and `shape` ("(0, 9223372036854775807)") holding `data` (no bytes
// for an empty shape), written as NumPy would: version 1.0, header padded to 64 bytes.
std::string npy_bytes(const std::string& descr, const std::string& shape, const std::string& data = "") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const auto size = static_cast<unsigned short>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + char(size & 0xff) + char(size >> 8) + header + data;
}

// Issue 39: (0 x 2^63-1) x (2^63-1 x 0) ran for over 300 s under the default check, and at
// K = 10^9 a 0 x 0 result was refused as needing 89 GiB. An empty C needs no memory and no
// check: the run ends at once (a 60 s CPU limit stops the old loop), exit 0, writing C with its
// empty shape; K = 0 gives beta C0 (or zeros).
TEST_F(VerifyCli, EmptyProductsWithAHugeKEndAtOnce) {
  const auto run_with_cpu_limit = [&](const std::string& args) {
    const std::string out = path(".stdout"), err = path(".stderr");
    const int raw = std::system(("ulimit -t 60; " + std::string(GEMMKIT_CLI_PATH) + " " + args + " >" + out +
                                 " 2>" + err).c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  };
  for (const std::string k : {"9223372036854775807", "1000000000"})
    for (const std::string descr : {"<f8", "<i8"}) {
      const std::string a = write_file("A.npy", npy_bytes(descr, "(0, " + k + ")"));
      const std::string b = write_file("B.npy", npy_bytes(descr, "(" + k + ", 0)"));
      for (const std::string verify : {"auto", "full", "freivalds", "exact", "none"}) {
        SCOPED_TRACE(descr + " K = " + k + " --verify " + verify);
        std::filesystem::remove(path("C.npy"));
        const CliResult r = run_with_cpu_limit("multiply " + a + " " + b + " -o " + path("C.npy") + " --verify " + verify);
        ASSERT_EQ(r.status, 0) << r.err;
        if (verify != "none") {
          EXPECT_NE(r.out.find("verified (empty result)"), std::string::npos) << r.out;
        }
        const gemmkit::AnyMatrix c = gemmkit::read_matrix(path("C.npy"));
        EXPECT_EQ(gemmkit::rows_of(c), 0);
        EXPECT_EQ(gemmkit::cols_of(c), 0);
      }
    }
  // K = 0: C = beta C0, or zeros without C0 (3 x 0 times 0 x 2).
  const std::string a = write_file("A0.npy", npy_bytes("<f8", "(3, 0)"));
  const std::string b = write_file("B0.npy", npy_bytes("<f8", "(0, 2)"));
  const std::string c0 = write_file("C0.csv", "1.5,-2\n3,4.25\n-5,6\n");
  CliResult r = run_with_cpu_limit("multiply " + a + " " + b + " -o " + path("C.csv") + " --beta 2 --c " + c0);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path("C.csv")), "3.0,-4.0\n6.0,8.5\n-10.0,12.0\n");
  r = run_with_cpu_limit("multiply " + a + " " + b + " -o " + path("Z.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path("Z.csv")), "0.0,0.0\n0.0,0.0\n0.0,0.0\n");
}

}  // namespace

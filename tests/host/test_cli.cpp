// The command line as a user meets it: exit statuses, one-line errors, no partial or
// clobbered output files, and results that are right.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;
namespace fs = std::filesystem;

namespace {

class Cli : public test::CliTest {};

}  // namespace

TEST_F(Cli, VersionAndHelpForEverySubcommand) {
  CliResult r = run("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("gemmkit "), std::string::npos);
  for (const char* sub : {"", "multiply", "gen", "bench", "list", "device", "explain"}) {
    r = run(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << ": " << r.out;
  }
}

TEST_F(Cli, BadUsageIsOneLineAndExitTwo) {
  expect_error(run(""), 2, "subcommand");
  expect_error(run("multiply --no-such-flag a.npy b.npy -o c.npy"), 2, "no-such-flag");
  expect_error(run("gen 3 -o " + path("x.npy")), 2, "cols");
  expect_error(run("gen 3 3 -o " + path("x.npy") + " --dist gauss"), 2, "gauss");
  expect_error(run("gen 3 3 -o " + path("x.xlsx")), 2, ".xlsx");
  expect_error(run("bench --kernels no_such_kernel --sizes 8"), 2, "no_such_kernel");
  expect_error(run("bench --sizes 8,x"), 2, "'x'");
  EXPECT_TRUE(listing().empty());
}

TEST_F(Cli, GenMultiplyGivesTheRightProductInEveryFormat) {
  for (const std::string ext : {".npy", ".mtx", ".csv", ".txt"}) {
    const std::string a = path("A" + ext), b = path("B" + ext), c = path("C" + ext);
    ASSERT_EQ(run("gen 30 20 -o " + a + " --seed 1").status, 0) << ext;
    ASSERT_EQ(run("gen 20 10 -o " + b + " --seed 2").status, 0) << ext;
    const CliResult r = run("multiply " + a + " " + b + " -o " + c);
    ASSERT_EQ(r.status, 0) << ext << ": " << r.err;
    EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
    // Recompute from the files as written, in double.
    const auto am = convert(read_matrix(a), DType::f64), bm = convert(read_matrix(b), DType::f64);
    const auto cm = convert(read_matrix(c), DType::f64);
    const auto& A = std::get<Matrix<double>>(am);
    const auto& B = std::get<Matrix<double>>(bm);
    const auto& C = std::get<Matrix<double>>(cm);
    ASSERT_EQ(C.rows(), 30);
    ASSERT_EQ(C.cols(), 10);
    for (int i = 0; i < 30; ++i)
      for (int j = 0; j < 10; ++j) {
        double s = 0;
        for (int q = 0; q < 20; ++q) s += A(i, q) * B(q, j);
        EXPECT_NEAR(C(i, j), s, 1e-5) << ext << " (" << i << "," << j << ")";
      }
  }
}

TEST_F(Cli, MultiplyKeepsF64AndI64AndHonoursOptions) {
  const std::string a = path("A.npy"), b = path("B.npy"), c = path("C.npy");
  ASSERT_EQ(run("gen 7 5 -o " + a + " --dtype i64 --dist ints:-100:100 --seed 3").status, 0);
  ASSERT_EQ(run("gen 7 4 -o " + b + " --dtype i64 --dist ints:-100:100 --seed 4").status, 0);
  // A^T B with alpha = 2: (5x7)(7x4).
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --transpose-a --alpha 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const AnyMatrix cm = read_matrix(c), am = read_matrix(a), bm = read_matrix(b);
  ASSERT_EQ(dtype_of_any(cm), DType::i64);
  const auto& A = std::get<Matrix<std::int64_t>>(am);
  const auto& B = std::get<Matrix<std::int64_t>>(bm);
  const auto& C = std::get<Matrix<std::int64_t>>(cm);
  ASSERT_EQ(C.rows(), 5);
  ASSERT_EQ(C.cols(), 4);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) {
      std::int64_t s = 0;
      for (int q = 0; q < 7; ++q) s += A(q, i) * B(q, j);
      EXPECT_EQ(C(i, j), 2 * s);
    }

  ASSERT_EQ(run("gen 6 6 -o " + a + " --dtype f64 --seed 5").status, 0);
  ASSERT_EQ(run("multiply " + a + " " + a + " -o " + c + " --kernel cpu_naive --verify full").status, 0);
  EXPECT_EQ(dtype_of_any(read_matrix(c)), DType::f64);

  // beta * C0 needs --c, and uses it.
  expect_error(run("multiply " + a + " " + a + " -o " + path("D.npy") + " --beta 1"), 2, "--c");
  r = run("multiply " + a + " " + a + " -o " + path("D.npy") + " --beta 1 --c " + c);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(Cli, FailedMultiplyLeavesNoFileAndClobbersNothing) {
  const std::string a = path("A.npy"), b = path("B.npy"), c = path("C.npy");
  ASSERT_EQ(run("gen 5 4 -o " + a).status, 0);
  ASSERT_EQ(run("gen 5 4 -o " + b).status, 0);
  {
    std::ofstream(c) << "precious";
  }
  expect_error(run("multiply " + a + " " + b + " -o " + c), 2, "shape mismatch");
  EXPECT_EQ(read_file(c), "precious");

  // A truncated .npy input.
  const std::string bytes = read_file(a);
  const std::string broken = path("broken.npy");
  {
    std::ofstream(broken, std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  }
  expect_error(run("multiply " + broken + " " + b + " -o " + path("out.npy") + " --transpose-b"), 2,
               "broken.npy");
  expect_error(run("multiply " + path("missing.npy") + " " + b + " -o " + path("out.npy")), 2,
               "missing.npy");
  expect_error(run("multiply " + a + " " + b + " -o " + path("out.pdf") + " --transpose-b"), 2,
               ".pdf");
  expect_error(run("multiply " + a + " " + b + " -o " + path("no/such/dir/out.npy") +
                   " --transpose-b"), 2, "no/such/dir");
  EXPECT_EQ(listing(), (std::set<std::string>{"A.npy", "B.npy", "C.npy", "broken.npy"}));
  EXPECT_EQ(read_file(c), "precious");
}

TEST_F(Cli, HalfPrecisionFilesMultiplyInTheirDtypeOrIntoF32) {
  const std::string a = path("A.npy"), b = path("B.csv"), c = path("C.npy"), d = path("D.npy");
  ASSERT_EQ(run("gen 9 7 -o " + a + " --dtype f16 --seed 1").status, 0);
  ASSERT_EQ(dtype_of_any(read_matrix(a)), DType::f16);
  ASSERT_EQ(run("gen 7 5 -o " + b + " --dtype f64 --seed 2").status, 0);
  // --dtype bf16 converts both; C is bf16, or f32 with --out-dtype f32. Without a GPU
  // cpu_widened runs; with one, a tensor-core kernel.
  CliResult r = run("multiply " + a + " " + b + " -o " + c + " --dtype bf16 --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cpu_widened"), std::string::npos) << r.out;
  EXPECT_EQ(dtype_of_any(read_matrix(c)), DType::bf16);
  r = run("multiply " + a + " " + b + " -o " + d + " --dtype bf16 --out-dtype f32 --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto wide = std::get<Matrix<float>>(read_matrix(d));
  const auto narrow = std::get<Matrix<BFloat16>>(read_matrix(c));
  const auto A = std::get<Matrix<Half>>(read_matrix(a));
  const auto B = std::get<Matrix<double>>(read_matrix(b));
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 5; ++j) {
      // The same products of bf16-rounded inputs, summed in double.
      double s = 0;
      for (int q = 0; q < 7; ++q)
        s += double(float(BFloat16(double(A(i, q))))) * double(float(BFloat16(B(q, j))));
      EXPECT_NEAR(wide(i, j), s, 1e-6 * (1 + std::fabs(s))) << i << "," << j;
      EXPECT_EQ(narrow(i, j).bits, BFloat16(wide(i, j)).bits) << i << "," << j;  // rounded once
    }

  // C in anything else is refused before any work, and nothing is written.
  expect_error(run("multiply " + a + " " + b + " -o " + path("E.npy") + " --dtype f16 --out-dtype f64"),
               2, "--out-dtype f64");
  expect_error(run("multiply " + a + " " + b + " -o " + path("E.npy") + " --out-dtype f32"), 2,
               "--out-dtype f32");  // f64 inputs
  expect_error(run("multiply " + a + " " + b + " -o " + path("E.npy") + " --dtype f8"), 2, "f8");
  EXPECT_FALSE(fs::exists(path("E.npy")));

  // Values past f16's range become infinite with a warning, and the run says so.
  const std::string big = path("big.csv");
  {
    std::ofstream(big) << "1,70000\n2,3\n";
  }
  r = run("multiply " + big + " " + big + " -o " + path("F.npy") + " --dtype f16 --verify none");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 1 entries of '" + big + "' are too large for f16"), std::string::npos)
      << r.err;
}

// Issue 39: f64 values past f32's range became infinite with no word, where f16 and bf16
// overflow was reported. Every conversion to a floating-point dtype that overflows says so,
// in each command that converts its inputs, with the count and the first entry.
TEST_F(Cli, OverflowToInfinityIsReportedForF32Too) {
  const std::string big = write_file("big.csv", "1,1e300\n2,-3e39\n");
  const std::string prefix = "gemmkit: warning: 2 entries of '" + big + "' are too large for f32 and became "
                             "infinite, the first at row 1, column 2: 1e+300\n";
  CliResult r = run("multiply " + big + " " + big + " -o " + path("C.npy") + " --dtype f32 --verify none");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(prefix), std::string::npos) << r.err;
  r = run("reduce " + big + " --dtype f32 --op max --backend cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(prefix), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("max = inf"), std::string::npos) << r.out;
  // In range: no warning; already infinite in the file: not an overflow of the conversion.
  const std::string fine = write_file("fine.csv", "1,3e38\n2,inf\n");
  r = run("reduce " + fine + " --dtype f32 --backend cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, UnsupportedKernelForDtypeIsAUsageError) {
  const std::string a = path("A.npy");
  ASSERT_EQ(run("gen 4 4 -o " + a + " --dtype i32").status, 0);
  expect_error(run("multiply " + a + " " + a + " -o " + path("C.npy") + " --kernel cpu_openblas"), 2,
               "cpu_openblas");
  EXPECT_FALSE(fs::exists(path("C.npy")));
}

TEST_F(Cli, ListAndDevice) {
  CliResult r = run("list");
  ASSERT_EQ(r.status, 0);
  for (const char* k : {"cpu_naive", "cpu_restrict", "cpu_blocked", "cpu_openblas"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k;
  r = run("list --json -");
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out).at("rows");
  ASSERT_TRUE(j.is_array());
  EXPECT_GE(j.size(), 4u);
  // Without a device, 'device' exits 1 with the sentence of every command (the JSON still
  // says why); test_cli_messages.cpp checks the sentence.
  const int status = cuda_device_available() ? 0 : 1;
  r = run("device");
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_FALSE(r.out.empty() && r.err.empty());
  r = run("device --json -");
  EXPECT_EQ(r.status, status);
  EXPECT_TRUE(nlohmann::json::parse(r.out).contains("devices"));
}

// The kernels `bench --backend cpu` runs for f32: every CPU entry of that dtype.
int cpu_f32_kernels() {
  int count = 0;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu)) count += e->supports(DType::f32);
  return count;
}

TEST_F(Cli, BenchWritesJsonAndCsvWithRatiosAndErrors) {
  const std::string json = path("r.json"), csv = path("r.csv");
  const CliResult r = run("bench --backend cpu --sizes 24,40 --reps 2 --warmup 0 --json " + json +
                          " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("% OpenBLAS"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_FALSE(j["meta"]["commit"].get<std::string>().empty());
  EXPECT_FALSE(j["meta"]["date"].get<std::string>().empty());
  int rows = 0;
  for (const auto& row : j["rows"]) {
    ++rows;
    EXPECT_TRUE(row["passed"].get<bool>()) << row.dump();
    EXPECT_GT(row["gflops"].get<double>(), 0.0);
    EXPECT_FALSE(row["percent_of_reference"].is_null()) << row.dump();
    EXPECT_LE(row["error"].get<double>(), row["tolerance"].get<double>());
  }
  EXPECT_EQ(rows, 2 * cpu_f32_kernels());  // two sizes x every CPU kernel of f32
  const std::string text = read_file(csv);
  EXPECT_EQ(text.rfind("kernel,backend,dtype,m,n,k", 0), 0u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + rows);

  // Integer benchmark: no reference library, exact check.
  const CliResult ri = run("bench --backend cpu --dtype i64 --m 20 --n 30 --k 40 --reps 1 --json " + json);
  ASSERT_EQ(ri.status, 0) << ri.err;
  const auto ji = nlohmann::json::parse(read_file(json));
  for (const auto& row : ji["rows"]) {
    EXPECT_TRUE(row["passed"].get<bool>());
    EXPECT_EQ(row["error"].get<double>(), 0.0);
  }
}

TEST_F(Cli, BenchTakesNonSquareShapesSmallestFirst) {
  const std::string json = path("r.json"), csv = path("r.csv");
  const CliResult r = run("bench --backend cpu --shapes 20x30x40,16X16X16,3x50x1 --reps 1 "
                          "--warmup 0 --kernels cpu_naive --json " + json + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("20x30x40"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3x50x1"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(json));
  std::vector<std::string> order;
  for (const auto& row : j["rows"]) {
    EXPECT_TRUE(row["passed"].get<bool>()) << row.dump();
    EXPECT_FALSE(row["skipped"].get<bool>()) << row.dump();
    const std::string shape = std::to_string(row["m"].get<int>()) + "x" +
                              std::to_string(row["n"].get<int>()) + "x" +
                              std::to_string(row["k"].get<int>());
    if (order.empty() || order.back() != shape) order.push_back(shape);
    // % of the reference: cpu_openblas (added though not asked for) is 100% of itself.
    if (row["kernel"] == "cpu_openblas") {
      EXPECT_DOUBLE_EQ(row["percent_of_reference"].get<double>(), 100.0);
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"3x50x1", "16x16x16", "20x30x40"}));
  EXPECT_EQ(j["percent_of"], "cpu_openblas");
  const std::string text = read_file(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 3 * 2);  // cpu_naive + cpu_openblas

  expect_error(run("bench --backend cpu --shapes 20x30"), 2, "'20x30'");
  expect_error(run("bench --backend cpu --shapes 20x0x5"), 2, "'20x0x5'");
  expect_error(run("bench --backend cpu --shapes 8x8x-8"), 2, "'8x8x-8'");
  expect_error(run("bench --backend cpu --shapes 8x8x8,,9x9x9"), 2, "--shapes");
  expect_error(run("bench --backend cpu --shapes 8x8x8 --sizes 8"), 2, "one of");
  expect_error(run("bench --backend cpu --sizes 8 --m 4 --n 4 --k 4"), 2, "one of");
  // The plot draws square shapes only: asking for one without any fails before any work.
  expect_error(run("bench --backend cpu --shapes 20x30x40 --plot " + path("p.png")), 2, "square");
  EXPECT_FALSE(fs::exists(path("p.png")));
  const CliResult help = run("bench --help");
  for (const char* option : {"--shapes", "MxNxK", "--max-run-seconds", "4096,8192"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option << " not in: " << help.out;
}

TEST_F(Cli, BenchSkipsAKernelPredictedToRunLongerThanTheBudget) {
  const std::string json = path("r.json"), csv = path("r.csv");
  // Any rate measured at 16 predicts more than a nanosecond at 48: every kernel is skipped
  // there, with a row that says so, and the run still succeeds.
  const CliResult r = run("bench --backend cpu --sizes 48,16 --reps 1 --warmup 0 "
                          "--max-run-seconds 1e-9 --json " + json + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("skipped: predicted "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" per run"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(json));
  int ran = 0, skipped = 0;
  for (const auto& row : j["rows"]) {
    if (row["m"] == 16) {
      EXPECT_FALSE(row["skipped"].get<bool>()) << row.dump();
      EXPECT_GT(row["gflops"].get<double>(), 0.0);
      ++ran;
    } else {
      EXPECT_TRUE(row["skipped"].get<bool>()) << row.dump();
      EXPECT_EQ(row["note"].get<std::string>().rfind("skipped: predicted ", 0), 0u) << row.dump();
      EXPECT_TRUE(row["gflops"].is_null());
      EXPECT_TRUE(row["percent_of_reference"].is_null());
      ++skipped;
    }
  }
  EXPECT_EQ(ran, cpu_f32_kernels());
  EXPECT_EQ(skipped, cpu_f32_kernels());
  const std::string text = read_file(csv);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + ran + skipped);
  EXPECT_NE(text.find(",true,skipped: predicted "), std::string::npos) << text;

  // With a generous budget nothing is skipped.
  const CliResult all = run("bench --backend cpu --sizes 16,48 --reps 1 --warmup 0 "
                            "--max-run-seconds 100 --json " + json);
  ASSERT_EQ(all.status, 0) << all.err;
  const auto all_rows = nlohmann::json::parse(read_file(json));  // named: a range-for over a
  for (const auto& row : all_rows["rows"])                 // temporary's member dangles
    EXPECT_FALSE(row["skipped"].get<bool>()) << row.dump();
}

TEST_F(Cli, BenchPlotWritesAPng) {
  const std::string probe = std::string(GEMMKIT_PYTHON) + " -c 'import matplotlib' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)
    GTEST_SKIP() << GEMMKIT_PYTHON << " has no matplotlib (python3-matplotlib)";
  const std::string png = path("plot.png");
  const CliResult r = run("bench --backend cpu --sizes 16,32 --reps 1 --warmup 0 --plot " + png);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
}

TEST_F(Cli, EveryMalformedInputClassExitsTwoWithOneLineAndNoOutput) {
  struct Case {
    std::string name, bytes, needle;
  };
  // A minimal v1.0 .npy file with the given header dictionary and data.
  auto npy = [](const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string s = "\x93NUMPY";
    s += '\x01';
    s += '\x00';
    s += static_cast<char>(header.size() & 0xff);
    s += static_cast<char>(header.size() >> 8);
    return s + header + data;
  };
  const std::string eight(8 * 4, '\x01');
  const std::vector<Case> cases = {
      {"trunc.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", eight.substr(0, 20)), "trunc.npy"},
      {"shape.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }", eight), "shape.npy"},
      {"bigend.npy", npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", eight), "big-endian"},
      {"dtype.npy", npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 2), }", eight), "<c16"},
      {"range.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n", "range.mtx"},
      {"few.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n", "few.mtx"},
      {"many.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 2.0\n", "many.mtx"},
      {"short.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", "short.mtx"},
      {"huge.mtx", "%%MatrixMarket matrix array real general\n9223372036854775807 9223372036854775807\n", "huge.mtx"},
      {"ragged.csv", "1,2,3\n4,5\n", "line 2"},
      {"token.csv", "1,2\n3,abc\n", "abc"},
  };
  const std::string b = path("B.npy");
  ASSERT_EQ(run("gen 2 2 -o " + b).status, 0);
  for (const Case& c : cases) {
    const std::string input = path(c.name);
    {
      std::ofstream(input, std::ios::binary) << c.bytes;
    }
    SCOPED_TRACE(c.name);
    expect_error(run("multiply " + input + " " + b + " -o " + path("out.npy")), 2, c.needle);
    EXPECT_FALSE(fs::exists(path("out.npy")));
    fs::remove(input);
  }
  EXPECT_EQ(listing(), std::set<std::string>{"B.npy"});
}

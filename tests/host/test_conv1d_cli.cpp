// 'gemmkit conv1d' as a user meets it: vector files in, Y written atomically, --list, and
// each class of bad input answered with one line and exit 2, leaving no output file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;
namespace fs = std::filesystem;

namespace {

class Conv1dCli : public test::CliTest {
 protected:
  CliResult run(const std::string& args) const { return CliTest::run("conv1d " + args); }
};

}  // namespace

TEST_F(Conv1dCli, CsvColumnInCsvOut) {
  write_file("x.csv", "1\n2\n3\n4\n5\n");
  write_file("m.csv", "1\n0\n-1\n");
  const CliResult r = run(path("x.csv") + " " + path("m.csv") + " -o " + path("y.csv") + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("5 values"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu_reference"), std::string::npos) << r.out;
  const AnyMatrix y = convert(read_matrix(path("y.csv")), DType::f64);
  ASSERT_EQ(rows_of(y), 5);
  ASSERT_EQ(cols_of(y), 1);
  const auto& m = std::get<Matrix<double>>(y);
  EXPECT_EQ(m(0, 0), -2);
  EXPECT_EQ(m(3, 0), -2);
  EXPECT_EQ(m(4, 0), 4);
}

TEST_F(Conv1dCli, RowVectorNpyKeepsOrientationAndDtype) {
  Matrix<float> x(1, 4), mask(1, 1);
  for (int i = 0; i < 4; ++i) x(0, i) = float(i + 1);
  mask(0, 0) = 0.5f;
  write_matrix(path("x.npy"), AnyMatrix(x));
  write_matrix(path("m.npy"), AnyMatrix(mask));
  const CliResult r = run(path("x.npy") + " " + path("m.npy") + " -o " + path("y.npy") + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  const AnyMatrix y = read_matrix(path("y.npy"));
  const auto& m = std::get<Matrix<float>>(y);  // f32 in, f32 out
  ASSERT_EQ(m.rows(), 1);
  ASSERT_EQ(m.cols(), 4);
  EXPECT_EQ(m(0, 3), 2.0f);
}

TEST_F(Conv1dCli, EvenWidthPrintsToStdoutAndJson) {
  write_file("x.csv", "1,2,3\n");
  write_file("m.csv", "1 10 100 1000\n");
  const CliResult r = run(path("x.csv") + " " + path("m.csv") + " --backend cpu --json " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "2100\n3210\n321\n");
  const auto j = nlohmann::json::parse(read_file(path("r.json")));
  EXPECT_EQ(j["width"], 4);
  EXPECT_EQ(j["kernel"], "cpu_reference");
  EXPECT_TRUE(j.contains("meta"));
}

TEST_F(Conv1dCli, ListNamesEveryRung) {
  const CliResult r = run("--list");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* k : {"basic", "constant_mask", "tiled", "streaming", "4088"})
    EXPECT_NE(r.out.find(k), std::string::npos) << k << " not in " << r.out;
}

TEST_F(Conv1dCli, BadInputsExitTwoWithOneLineAndNoOutput) {
  write_file("x.csv", "1\n2\n3\n");
  write_file("m.csv", "1\n2\n1\n");
  write_file("matrix.csv", "1 2\n3 4\n");
  write_file("ragged.csv", "1 2\n3\n");
  Matrix<float> empty(0, 1);
  write_matrix(path("empty.npy"), AnyMatrix(empty));
  std::string wide;
  for (int i = 0; i < 5000; ++i) wide += "1\n";
  write_file("wide.csv", wide);
  write_file("y.csv", "keep me\n");  // an existing output must survive every failure
  const std::string x = path("x.csv"), m = path("m.csv"), out = " -o " + path("y.csv");

  expect_error(run(path("matrix.csv") + " " + m + out), 2, "must be a vector");
  expect_error(run(x + " " + path("matrix.csv") + out), 2, "MASK must be a vector");
  expect_error(run(path("ragged.csv") + " " + m + out), 2, "ragged.csv");
  expect_error(run(path("missing.csv") + " " + m + out), 2, "missing.csv");
  expect_error(run(x + " " + path("empty.npy") + out), 2, "the mask is empty");
  expect_error(run(x + " " + m + out + " --kernel fastest"), 2, "unknown conv1d kernel 'fastest'");
  expect_error(run(x + " " + m + out + " --dtype f16"), 2, "f32 or f64");
  expect_error(run(x + " " + m + out + " --backend gpu"), 2, "unknown backend");
  // Without the CUDA backend the rungs are not in the build at all.
  const char* gpu_rung = cuda_compiled() ? "CUDA kernel" : "built without the CUDA backend";
  expect_error(run(x + " " + m + out + " --backend cpu --kernel tiled"), 2, gpu_rung);
  expect_error(run(x + " " + m + " -o " + path("y.bin")), 2, "y.bin");
  expect_error(run(x + out), 2, "needs X and MASK");
  // The constant-memory rungs refuse masks wider than their buffer, naming width and cap.
  const CliResult refused = run(x + " " + path("wide.csv") + out + " --kernel constant_mask");
  expect_error(refused, 2, cuda_compiled() ? "5000" : "built without the CUDA backend");
  if (cuda_compiled()) EXPECT_NE(refused.err.find("4088"), std::string::npos) << refused.err;
  EXPECT_EQ(read_file(path("y.csv")), "keep me\n");
  for (const auto& name : listing()) EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
}

TEST_F(Conv1dCli, WideMaskUnderAutoRuns) {
  write_file("x.csv", "1\n2\n3\n");
  std::string wide;
  for (int i = 0; i < 5000; ++i) wide += "1\n";
  write_file("wide.csv", wide);
  // On the CPU here, or on the GPU (streaming) where there is one: never a wall.
  const CliResult r = run(path("x.csv") + " " + path("wide.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "6\n6\n6\n");
}

TEST_F(Conv1dCli, BenchWithoutDeviceSaysSo) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  expect_error(run("--bench --n 1000"), 1, no_device_message());
  expect_error(run(path("x.csv") + " --bench"), 2, "--bench");
}

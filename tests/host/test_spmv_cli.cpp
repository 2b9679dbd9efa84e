// gemmkit spmv on the command line: good runs on the CPU backend (and the GPU when there is
// one), the --list and --bench contract, and every class of bad input -> exit 2, one line,
// no output file, an existing output untouched.
#include <gtest/gtest.h>

#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "host/cli_test_support.hpp"

using namespace gemmkit;

namespace {

class SpmvCli : public gemmkit::test::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    a_ = write_file("a.mtx",
                    "%%MatrixMarket matrix coordinate real general\n"
                    "% 3 x 4 with an empty row and a duplicate\n"
                    "3 4 5\n1 1 2\n1 4 -1\n3 2 0.5\n3 2 0.5\n3 3 4\n");
    x_ = write_file("x.csv", "1\n2\n3\n4\n");
  }
  std::string a_, x_;
};

TEST_F(SpmvCli, CpuRunWritesY) {
  const auto r = run("spmv " + a_ + " " + x_ + " --backend cpu -o " + path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  const AnyMatrix y = read_matrix(path("y.npy"));
  const auto& m = std::get<Matrix<double>>(y);
  ASSERT_EQ(m.rows(), 3);
  ASSERT_EQ(m.cols(), 1);
  EXPECT_EQ(m(0, 0), -2.0);  // 2*1 - 1*4
  EXPECT_EQ(m(1, 0), 0.0);
  EXPECT_EQ(m(2, 0), 14.0);  // (0.5 + 0.5)*2 + 4*3
  EXPECT_NE(r.out.find("wrote"), std::string::npos);
}

TEST_F(SpmvCli, StdoutAndF32AndJson) {
  const auto r = run("spmv " + a_ + " " + x_ + " --backend cpu --dtype f32 --json " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "-2\n0\n14\n");
  EXPECT_NE(read_file(path("r.json")).find("\"nnz\": 4"), std::string::npos);
}

TEST_F(SpmvCli, NpyRowVectorAndMtxVectorWork) {
  write_matrix(path("x.npy"), AnyMatrix(Matrix<float>(1, 4)));  // 1 x 4 zeros
  auto r = run("spmv " + a_ + " " + path("x.npy") + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "0\n0\n0\n");
  write_file("x.mtx", "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4\n");
  r = run("spmv " + a_ + " " + path("x.mtx") + " --backend cpu -o " + path("y.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(path("y.csv")).substr(0, 2), "-2");
}

TEST_F(SpmvCli, GpuRunMatchesWhenThereIsADevice) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  for (const char* k : {"scalar", "vector", "vector_groups", "merge_path", "cusparse", "auto"}) {
    const auto r = run("spmv " + a_ + " " + x_ + " --backend cuda --kernel " + k);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "-2\n0\n14\n") << k;
  }
}

TEST_F(SpmvCli, ListNamesTheKernels) {
  const auto r = run("spmv --list");
  ASSERT_EQ(r.status, 0) << r.err;
  // The GPU kernels, which only a build with the CUDA backend has.
  EXPECT_EQ(r.out, cuda_compiled() ? "scalar\nvector\nvector_groups\nmerge_path\ncusparse\ncusparse_alg2\n" : "");
}

TEST_F(SpmvCli, SizeMismatchNamesBothFilesAndSizes) {
  write_file("y.npy", "keep me");
  const std::string x3 = write_file("x3.csv", "1\n2\n3\n");
  const auto r = run("spmv " + a_ + " " + x3 + " --backend cpu -o " + path("y.npy"));
  expect_error(r, 2, "x3.csv' has 3 entries");
  EXPECT_NE(r.err.find("a.mtx' is 3 x 4"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(path("y.npy")), "keep me");
}

TEST_F(SpmvCli, BadInputsExitTwoAndWriteNothing) {
  const std::string y = path("y.npy");
  const std::string bad_mtx = write_file("bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  expect_error(run("spmv " + bad_mtx + " " + x_ + " -o " + y), 2, "bad.mtx");
  const std::string not_vector = write_file("m.csv", "1,2\n3,4\n");
  expect_error(run("spmv " + a_ + " " + not_vector + " -o " + y), 2, "not a vector");
  expect_error(run("spmv " + a_ + " " + path("missing.csv") + " -o " + y), 2, "missing.csv");
  expect_error(run("spmv " + a_ + " " + x_ + " --kernel csr5 -o " + y), 2, "unknown kernel 'csr5'");
  expect_error(run("spmv " + a_ + " " + x_ + " --dtype f16 -o " + y), 2, "unknown dtype 'f16'");
  expect_error(run("spmv " + a_ + " " + x_ + " --backend gpu -o " + y), 2, "unknown backend 'gpu'");
  expect_error(run("spmv " + a_ + " " + x_ + " -o " + path("y.png")), 2, "y.png");
  expect_error(run("spmv " + x_ + " " + x_ + " -o " + y), 2, "Matrix Market");
  expect_error(run("spmv " + a_), 2, "needs MATRIX.mtx and X");
  expect_error(run("spmv " + a_ + " " + x_ + " --backend cpu --kernel merge_path -o " + y), 2,
               cuda_compiled() ? "runs on the GPU" : "built without the CUDA backend");
  EXPECT_FALSE(std::filesystem::exists(y));
}

TEST_F(SpmvCli, BenchWithoutADeviceSaysSo) {
  if (cuda_device_available()) GTEST_SKIP() << "there is a device; the bench runs on the GPU machine";
  expect_error(run("spmv --bench --rows 1000"), 1, no_device_message());
  expect_error(run("spmv --bench --matrices uniform,dense"), 2, "unknown matrix pattern 'dense'");
}

}  // namespace

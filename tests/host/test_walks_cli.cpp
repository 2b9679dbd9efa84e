// 'gemmkit walks' as a user meets it: the teaching texts' answer, tables, exit statuses, one-line
// errors, and output files that appear only when complete.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/walks.hpp"
#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;
namespace fs = std::filesystem;

namespace {

class WalksCli : public test::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    // The teaching texts' graph, in an order that names the vertices A..J.
    write("seed.txt",
          "# 10 vertices, 17 edges\nA B\nA C\nB C\nB D\nE C\nD F\nB F\nC D\nF G\nE H\nF H\nF I\n"
          "G H\nG I\nG J\nH J\nI J\n");
  }
  void write(const std::string& name, const std::string& text) const { write_file(name, text); }
  // gemmkit walks ARGS.
  CliResult run(const std::string& args) const { return CliTest::run("walks " + args); }
};

}  // namespace

TEST_F(WalksCli, SevenWalksFromCToJ) {
  for (const char* method : {"auto", "dense", "sparse"}) {
    const CliResult r = run(path("seed.txt") + " --undirected --length 4 --from C --to J --method " + method);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "7\n") << method;
  }
}

TEST_F(WalksCli, TablesLikeTheSeeds) {
  CliResult r = run(path("seed.txt") + " --undirected -k 4");
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("from/to", 0), 0u) << header;
  // Row F of the length-4 table: 13 21 23 19 15 48 31 23 20 31 (columns A..J).
  bool found = false;
  while (std::getline(lines, row)) {
    std::istringstream fields(row);
    std::string name;
    fields >> name;
    if (name != "F") continue;
    found = true;
    std::vector<int> counts{std::istream_iterator<int>(fields), std::istream_iterator<int>()};
    EXPECT_EQ(counts, (std::vector<int>{13, 21, 23, 19, 15, 48, 31, 23, 20, 31}));
  }
  EXPECT_TRUE(found) << r.out;

  r = run(path("seed.txt") + " --undirected -k 4 --from C --all-lengths");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("length/to"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n4         12 22 27 16 6 23 9 13 8 7\n"), std::string::npos) << r.out;
}

TEST_F(WalksCli, ExactBigCountsAndModes) {
  // Length 60 from C to J: far past 2^64 (checked against the reference in test_walks.cpp).
  CliResult exact = run(path("seed.txt") + " --undirected -k 60 --from C --to J");
  ASSERT_EQ(exact.status, 0) << exact.err;
  EXPECT_EQ(exact.out, "344494404373954826825036833073253\n");
  CliResult dense = run(path("seed.txt") + " --undirected -k 60 --from C --to J --method dense");
  EXPECT_EQ(dense.out, exact.out);

  CliResult i64 = run(path("seed.txt") + " --undirected -k 60 --from C --to J --mode int64");
  expect_error(i64, 1, "int64 overflow");
  EXPECT_NE(i64.err.find("length 36"), std::string::npos) << i64.err;
  EXPECT_TRUE(i64.out.empty());

  CliResult f = run(path("seed.txt") + " --undirected -k 60 --from C --to J --mode float");
  EXPECT_EQ(f.status, 0);
  EXPECT_NE(f.err.find("warning"), std::string::npos) << f.err;
  EXPECT_NEAR(std::stod(f.out), 3.44494404373954826825e32, 1e18);
}

TEST_F(WalksCli, CsvAndNpyOutputs) {
  CliResult r = run(path("seed.txt") + " --undirected -k 3 -o " + path("t.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = read_file(path("t.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "from/to,A,B,C,D,E,F,G,H,I,J");
  EXPECT_NE(csv.find("\nF,3,9,4,8,3,6,10,11,10,4\n"), std::string::npos) << csv;

  r = run(path("seed.txt") + " --undirected -k 3 -o " + path("t.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto m = std::get<Matrix<std::int64_t>>(read_npy(path("t.npy")));
  EXPECT_EQ(m(5, 7), 11);  // F -> H

  // Counts past int64 go into .npy as exact words, shape (rows, cols, limbs), that read back
  // as the CSV's decimal numbers.
  r = run(path("seed.txt") + " --undirected -k 60 -o " + path("big.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(path("seed.txt") + " --undirected -k 60 -o " + path("big.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const LimbTable t = read_limb_table(path("big.npy"));
  ASSERT_EQ(t.rows, 10);
  ASSERT_EQ(t.cols, 10);
  ASSERT_GE(t.limbs, 2);
  std::istringstream lines(read_file(path("big.csv")));
  std::string line;
  std::getline(lines, line);  // the header
  for (std::int64_t i = 0; i < t.rows; ++i) {
    ASSERT_TRUE(std::getline(lines, line));
    std::istringstream fields(line);
    std::string field;
    std::getline(fields, field, ',');  // the row's label
    for (std::int64_t j = 0; j < t.cols; ++j) {
      ASSERT_TRUE(std::getline(fields, field, ','));
      const std::uint64_t* w = &t.words[std::size_t(i * t.cols + j) * t.limbs];
      ASSERT_EQ(w[t.limbs - 1] >> 63, 0u);  // walk counts of an unweighted graph
      std::vector<std::uint64_t> magnitude(w, w + t.limbs);
      while (!magnitude.empty() && magnitude.back() == 0) magnitude.pop_back();
      EXPECT_EQ(BigInt::from_limbs(magnitude, false).to_string(), field) << i << ", " << j;
    }
  }
  // --all-lengths has no .npy form: refused before any work, nothing written.
  r = run(path("seed.txt") + " --undirected -k 6 --all-lengths -o " + path("all.npy"));
  expect_error(r, 2, "--all-lengths");
  EXPECT_FALSE(fs::exists(path("all.npy")));
  r = run(path("seed.txt") + " --undirected -k 60 --all-lengths -o " + path("all.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string all = read_file(path("all.csv"));
  EXPECT_EQ(all.substr(0, all.find('\n')), "length,from/to,A,B,C,D,E,F,G,H,I,J");
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1 + 60 * 10);
}

TEST_F(WalksCli, BadInputsExitTwoWithOneLine) {
  expect_error(run(path("seed.txt") + " --undirected -k 4 --from Z"), 2, "'Z'");
  expect_error(run(path("seed.txt") + " -k 0"), 2, "length");
  expect_error(run(path("seed.txt") + " -k 3 --mode fast"), 2, "fast");
  write("bad.txt", "A B\nA B C D\n");
  expect_error(run(path("bad.txt") + " -k 3"), 2, "line 2");
  write("m.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n");
  expect_error(run(path("m.mtx") + " -k 3 --undirected"), 2, "--undirected");
  expect_error(run(path("missing.txt") + " -k 3"), 2, "missing.txt");
  CliResult r = run(path("m.mtx") + " -k 3 --labels x,y --from x --to y");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
}

TEST_F(WalksCli, EmptyGraph) {
  write("empty.txt", "# no edges\n");
  CliResult r = run(path("empty.txt") + " -k 5");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "from/to\n");
  expect_error(run(path("empty.txt") + " -k 5 --from 0"), 2, "no vertex");
}

TEST_F(WalksCli, Help) {
  const CliResult r = run("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* option : {"--length", "--from", "--to", "--all-lengths", "--mode", "--method",
                             "--undirected", "--labels", "--output"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

TEST_F(WalksCli, BackendOptionBenchAndJson) {
  const std::string g = path("seed.txt") + " --undirected --length 4 --from C --to J";
  expect_error(run(g + " --backend gpu"), 2, "unknown backend 'gpu'");
  EXPECT_EQ(run(g + " --backend cpu").out, "7\n");
  // --json records the method and the time.
  const CliResult r = run(g + " --json " + path("w.json"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "7\n");
  const nlohmann::json j = nlohmann::json::parse(read_file(path("w.json")));
  EXPECT_EQ(j["vertices"], 10);
  EXPECT_EQ(j["length"], 4);
  EXPECT_FALSE(j.contains("gpu"));
  EXPECT_TRUE(j.contains("meta"));
  if (!cuda_device_available()) {
    // The device error of every command, before the graph is read (this one does not exist).
    expect_error(run(path("seed.txt") + " --undirected --length 4 --method dense --backend cuda"), 1,
                 no_device_message());
    expect_error(run(path("missing.txt") + " --length 4 --bench"), 1, no_device_message());
  } else {
    // A run the GPU engine did not take (one pair goes sparse): --bench says so.
    const CliResult bench = run(g + " --bench");
    EXPECT_EQ(bench.status, 0) << bench.err;
    EXPECT_NE(bench.err.find("--bench: the GPU engine did not run"), std::string::npos) << bench.err;
  }
}

// On a machine with a GPU: the GPU engine's files are the CPU engine's (CSV byte for byte,
// .npy limbs value for value), for a table, one row of every length, and --json's timings.
TEST_F(WalksCli, GpuEngineWritesWhatTheCpuEngineWrites) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::string edges;
  std::uint64_t state = 12345;
  auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int u = 0; u < 600; ++u)
    for (int d = 0; d < 5; ++d) {
      const auto v = next() % 600;
      const auto w = static_cast<long long>(next() % 7) - 3;
      edges += std::to_string(u) + " " + std::to_string(v) + " " + std::to_string(w == 0 ? 1 : w) + "\n";
    }
  write("g.txt", edges);
  const std::string g = path("g.txt") + " --method dense ";
  for (const std::string& query : {std::string("-k 30"), std::string("-k 7 --all-lengths --from 599")}) {
    const CliResult gpu = run(g + query + " --backend cuda -o " + path("gpu.csv") + " --json " + path("j.json"));
    ASSERT_EQ(gpu.status, 0) << gpu.err;
    const CliResult cpu = run(g + query + " --backend cpu -o " + path("cpu.csv"));
    ASSERT_EQ(cpu.status, 0) << cpu.err;
    EXPECT_EQ(read_file(path("gpu.csv")), read_file(path("cpu.csv"))) << query;
    const nlohmann::json j = nlohmann::json::parse(read_file(path("j.json")));
    ASSERT_TRUE(j.contains("gpu")) << j.dump();
    for (const char* key : {"gemm_seconds", "build_seconds", "crt_seconds", "copy_seconds", "engine_seconds"})
      EXPECT_TRUE(j["gpu"].contains(key)) << key;
    EXPECT_TRUE(j.contains("write_seconds"));
  }
  // Counts past int64 (length 40 reaches about 2^85): the same .npy limbs, byte for byte.
  ASSERT_EQ(run(g + "-k 40 --backend cuda -o " + path("gpu.npy")).status, 0);
  ASSERT_EQ(run(g + "-k 40 --backend cpu -o " + path("cpu.npy")).status, 0);
  EXPECT_GE(read_limb_table(path("gpu.npy")).limbs, 2);
  EXPECT_EQ(read_file(path("gpu.npy")), read_file(path("cpu.npy")));
}

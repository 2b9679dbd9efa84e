// 'gemmkit walks' as a user meets it: the teaching texts' answer, tables, exit statuses, one-line
// errors, and output files that appear only when complete.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arith/int128.hpp"
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
  r = run(path("seed.txt") + " --undirected -k 60 --all-lengths -o " + path("all.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string all = read_file(path("all.csv"));
  EXPECT_EQ(all.substr(0, all.find('\n')), "length,from/to,A,B,C,D,E,F,G,H,I,J");
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1 + 60 * 10);
}

namespace {

// The seed graph's walk counts of every length 1..k, A^t by plain u128 products (the counts
// stay below 2^112 up to length 60), independent of the engines: [t - 1][u][v].
std::vector<std::vector<std::vector<u128>>> seed_powers(int k) {
  const std::string edges = "AB AC BC BD EC DF BF CD FG EH FH FI GH GI GJ HJ IJ";
  std::vector<std::vector<u128>> a(10, std::vector<u128>(10, 0));
  for (std::size_t i = 0; i < edges.size(); i += 3) {
    const int u = edges[i] - 'A', v = edges[i + 1] - 'A';
    a[u][v] = a[v][u] = 1;
  }
  std::vector<std::vector<std::vector<u128>>> powers{a};
  for (int t = 2; t <= k; ++t) {
    std::vector<std::vector<u128>> next(10, std::vector<u128>(10, 0));
    for (int u = 0; u < 10; ++u)
      for (int w = 0; w < 10; ++w)
        for (int v = 0; v < 10; ++v) next[u][v] += powers.back()[u][w] * a[w][v];
    powers.push_back(next);
  }
  return powers;
}

// The decimal text of `limbs` two's-complement words.
std::string words_text(const std::uint64_t* w, int limbs) { return io::decimal_text(w, limbs); }

// A .npy file's header text and its data, split at the data offset (version 1.0 headers).
std::pair<std::string, std::string> npy_parts(const std::string& bytes) {
  const std::size_t length = std::size_t(std::uint8_t(bytes.at(8))) | std::size_t(std::uint8_t(bytes.at(9))) << 8;
  return {bytes.substr(10, length), bytes.substr(10 + length)};
}

// The --all-lengths CSV's counts as text: [t - 1][row][col].
std::vector<std::vector<std::vector<std::string>>> csv_counts(const std::string& csv, int lengths, int rows) {
  std::vector<std::vector<std::vector<std::string>>> out(lengths, std::vector<std::vector<std::string>>(rows));
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);  // the header
  for (int t = 0; t < lengths; ++t)
    for (int r = 0; r < rows; ++r) {
      std::getline(lines, line);
      std::istringstream fields(line);
      std::string field;
      std::getline(fields, field, ',');
      EXPECT_EQ(field, std::to_string(t + 1));
      std::getline(fields, field, ',');  // the source's label
      while (std::getline(fields, field, ',')) out[t][r].push_back(field);
    }
  return out;
}

}  // namespace

// --all-lengths -o FILE.npy: the lengths' tables as one array with the lengths' axis in
// front, in the single length's forms: exact words (read back by read_limb_tables, several
// words past 2^64), int64 when every count fits (also when the bound needed two words),
// float64 in float mode; every count equal to the CSV of the same run and to u128 powers.
TEST_F(WalksCli, AllLengthsNpy) {
  const auto powers = seed_powers(60);
  const std::string g = path("seed.txt") + " --undirected --all-lengths ";
  // Exact, past 2^64: (60, 10, 10, limbs) words.
  ASSERT_EQ(run(g + "-k 60 -o " + path("all.npy")).status, 0);
  ASSERT_EQ(run(g + "-k 60 -o " + path("all.csv")).status, 0);
  const LimbTables t = read_limb_tables(path("all.npy"));
  EXPECT_TRUE(t.stacked);
  ASSERT_EQ(t.tables, 60);
  ASSERT_EQ(t.rows, 10);
  ASSERT_EQ(t.cols, 10);
  ASSERT_GE(t.limbs, 2);
  const auto csv = csv_counts(read_file(path("all.csv")), 60, 10);
  bool past_64_bits = false;
  for (int k = 0; k < 60; ++k)
    for (int u = 0; u < 10; ++u) {
      ASSERT_EQ(csv[k][u].size(), 10u);
      for (int v = 0; v < 10; ++v) {
        const std::string text = words_text(t.table(k).words + std::size_t(u * 10 + v) * t.limbs, t.limbs);
        ASSERT_EQ(text, u128_text(powers[k][u][v])) << "length " << k + 1 << ", " << u << " -> " << v;
        ASSERT_EQ(text, csv[k][u][v]);
        past_64_bits = past_64_bits || (powers[k][u][v] >> 64) != 0;
      }
    }
  EXPECT_TRUE(past_64_bits);
  // The library's CPU engine, read back from the same file.
  GraphReadOptions undirected;
  undirected.undirected = true;
  const Graph graph = read_graph(path("seed.txt"), undirected);
  WalkQuery q;
  q.length = 60;
  q.all_lengths = true;
  q.backend = WalkBackend::cpu;
  const WalkCounts w = count_walks(graph, q);
  for (int k = 0; k < 60; ++k)
    for (int u = 0; u < 10; ++u)
      for (int v = 0; v < 10; ++v)
        ASSERT_EQ(w.at(k, u, v).to_string(), csv[k][u][v]) << k << " " << u << " " << v;

  // One source: (60, 1, 10, limbs), its row of every length.
  ASSERT_EQ(run(g + "-k 60 --from C -o " + path("row.npy")).status, 0);
  const LimbTables row = read_limb_tables(path("row.npy"));
  ASSERT_EQ(row.tables, 60);
  ASSERT_EQ(row.rows, 1);
  ASSERT_EQ(row.cols, 10);
  for (int k = 0; k < 60; ++k)
    for (int v = 0; v < 10; ++v)
      ASSERT_EQ(words_text(row.table(k).words + std::size_t(v) * row.limbs, row.limbs), csv[k][2][v]);

  // Every count fits int64 (and a double: length 29 stays below 2^53) while the bound, 5^29,
  // needs two words: '<i8' of shape (29, 10, 10), '<f8' in float mode.
  for (const char* mode : {"exact", "int64", "float"}) {
    ASSERT_EQ(run(g + "-k 29 --mode " + mode + " -o " + path("n.npy")).status, 0) << mode;
    const auto [header, data] = npy_parts(read_file(path("n.npy")));
    const bool real = std::string(mode) == "float";
    EXPECT_NE(header.find(real ? "'descr': '<f8'" : "'descr': '<i8'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': (29, 10, 10)"), std::string::npos) << header;
    ASSERT_EQ(data.size(), 29u * 100 * 8) << mode;
    for (int k = 0; k < 29; ++k)
      for (int u = 0; u < 10; ++u)
        for (int v = 0; v < 10; ++v) {
          const std::size_t at = (std::size_t(k) * 100 + std::size_t(u * 10 + v)) * 8;
          std::int64_t i = 0;
          double d = 0;
          std::memcpy(real ? static_cast<void*>(&d) : static_cast<void*>(&i), data.data() + at, 8);
          ASSERT_EQ(real ? u128(d) : u128(i), powers[k][u][v]) << mode << " " << k << " " << u << " " << v;
        }
  }
  // One length's file is unchanged: a matrix.
  ASSERT_EQ(run(path("seed.txt") + " --undirected -k 30 -o " + path("one.npy")).status, 0);
  EXPECT_EQ(std::get<Matrix<std::int64_t>>(read_npy(path("one.npy")))(2, 9), std::int64_t(powers[29][2][9]));
}

// Output failures with --all-lengths .npy: a folder that does not exist is refused before any
// work and creates nothing; a run that fails after the table is staged (its --json cannot be
// written) leaves the existing file as it was and no temporary; a run that succeeds
// replaces it.
TEST_F(WalksCli, AllLengthsNpyIsWrittenAtomically) {
  const std::string g = path("seed.txt") + " --undirected --all-lengths -k 40 ";
  expect_error(run(g + "-o " + path("missing/all.npy")), 2, "missing");
  EXPECT_FALSE(fs::exists(path("missing")));
  write("all.npy", "original");
  const CliResult r = run(g + "-o " + path("all.npy") + " --json /dev/full");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(read_file(path("all.npy")), "original");
  EXPECT_EQ(listing(), (std::set<std::string>{"all.npy", "seed.txt"}));
  ASSERT_EQ(run(g + "-o " + path("all.npy")).status, 0);
  EXPECT_EQ(read_limb_tables(path("all.npy")).tables, 40);
  EXPECT_EQ(listing(), (std::set<std::string>{"all.npy", "seed.txt"}));
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

// Issue 39: an empty or comment-only edge list gave exit 0, "(exact, )" and a header-only
// file. There is no graph in it: exit 2 naming the file, and no output.
TEST_F(WalksCli, FilesWithNoGraphAreInputErrors) {
  write("empty.txt", "");
  write("comments.txt", "# no edges\n\n   \n# still none\n");
  write("empty.mtx", "%%MatrixMarket matrix coordinate pattern general\n0 0 0\n");
  for (const char* name : {"empty.txt", "comments.txt"})
    for (const std::string& extra : std::vector<std::string>{"", " -o " + path("w.csv"),
                                                             " -o " + path("w.npy") + " --json " + path("w.json"),
                                                             " --from 0"}) {
      SCOPED_TRACE(name + extra);
      expect_error(run(path(name) + " -k 5" + extra), 2, quoted_path(path(name)) + ": no edges");
      EXPECT_FALSE(fs::exists(path("w.csv")));
      EXPECT_FALSE(fs::exists(path("w.npy")));
      EXPECT_FALSE(fs::exists(path("w.json")));
    }
  expect_error(run(path("empty.mtx") + " -k 2 -o " + path("w.csv")), 2, quoted_path(path("empty.mtx")) + ": the adjacency matrix is 0 x 0");
  EXPECT_FALSE(fs::exists(path("w.csv")));
  // One edge is a graph.
  write("one.txt", "# a loop\n0 0\n");
  const CliResult r = run(path("one.txt") + " -k 5");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "from/to 0\n0       1\n");
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

// On a machine with a GPU: the GPU engine's files are the CPU engine's (CSV and .npy byte for
// byte), for a table, one row of every length, every length of the table, and --json's timings.
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
    // The .npy too (--all-lengths: every length's table in one array), byte for byte.
    ASSERT_EQ(run(g + query + " --backend cuda -o " + path("gpu.npy")).status, 0) << query;
    ASSERT_EQ(run(g + query + " --backend cpu -o " + path("cpu.npy")).status, 0) << query;
    EXPECT_EQ(read_file(path("gpu.npy")), read_file(path("cpu.npy"))) << query;
  }
  // Every length 1..30 of the whole table, past int64: (30, 600, 600, limbs) words.
  ASSERT_EQ(run(g + "-k 30 --all-lengths --backend cuda -o " + path("gpu.npy")).status, 0);
  ASSERT_EQ(run(g + "-k 30 --all-lengths --backend cpu -o " + path("cpu.npy")).status, 0);
  const LimbTables all = read_limb_tables(path("gpu.npy"));
  EXPECT_EQ(all.tables, 30);
  EXPECT_GE(all.limbs, 2);
  EXPECT_EQ(read_file(path("gpu.npy")), read_file(path("cpu.npy")));
  // Counts past int64 (length 40 reaches about 2^85): the same .npy limbs, byte for byte.
  ASSERT_EQ(run(g + "-k 40 --backend cuda -o " + path("gpu.npy")).status, 0);
  ASSERT_EQ(run(g + "-k 40 --backend cpu -o " + path("cpu.npy")).status, 0);
  EXPECT_GE(read_limb_table(path("gpu.npy")).limbs, 2);
  EXPECT_EQ(read_file(path("gpu.npy")), read_file(path("cpu.npy")));
}

// Exact integer tables (write_limb_table(s) / read_limb_table(s)): the CSV text of every value
// against BigInt's decimal text (GMP), widths of one to seven words, signs, zero and the
// extremes of each width, labels and their quoting, tables large enough for several
// parallel blocks, the .npy round trip and its header (one table, and a sequence of tables),
// malformed files, and failures that leave no file behind.
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <random>
#include <sstream>

#include "gemmkit/walks.hpp"
#include "host/io_test_support.hpp"

namespace gemmkit::test {
namespace {

// The integer that `limbs` two's-complement words hold.
BigInt value_of(const std::uint64_t* w, int limbs) {
  const bool negative = w[limbs - 1] >> 63;
  std::vector<std::uint64_t> magnitude(w, w + limbs);
  if (negative) {  // invert and add one
    std::uint64_t carry = 1;
    for (auto& x : magnitude) {
      x = ~x + carry;
      carry = carry && x == 0;
    }
  }
  while (!magnitude.empty() && magnitude.back() == 0) magnitude.pop_back();
  return BigInt::from_limbs(std::move(magnitude), negative);
}

// A rows x cols table of `limbs` words: every awkward value of the width first (zero, +-1,
// the extremes, the edges of each word and of 10^19 powers), then random words, some of
// them sign-extended from a shorter width.
LimbTable awkward_table(std::int64_t rows, std::int64_t cols, int limbs, std::uint64_t seed) {
  LimbTable t;
  t.rows = rows;
  t.cols = cols;
  t.limbs = limbs;
  std::vector<std::vector<std::uint64_t>> special;
  auto from_int = [&](std::int64_t v) {
    std::vector<std::uint64_t> w(limbs, v < 0 ? ~std::uint64_t{0} : 0);
    w[0] = std::uint64_t(v);
    return w;
  };
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{9}, std::int64_t{10},
                         std::int64_t{-10}, INT64_MAX, INT64_MIN, std::int64_t{999999999999999999},
                         std::int64_t{-1000000000000000000}})
    special.push_back(from_int(v));
  for (int width = 1; width <= limbs; ++width) {
    // The largest and smallest value of `width` words, sign-extended to limbs.
    std::vector<std::uint64_t> top(limbs, 0), bottom(limbs, ~std::uint64_t{0});
    for (int i = 0; i < width; ++i) top[i] = ~std::uint64_t{0};
    top[width - 1] = ~std::uint64_t{0} >> 1;
    for (int i = 0; i < width; ++i) bottom[i] = 0;
    bottom[width - 1] = std::uint64_t{1} << 63;
    special.push_back(top);
    special.push_back(bottom);
    // 2^(64 (width - 1)) and its negation: a word boundary.
    std::vector<std::uint64_t> edge(limbs, 0);
    edge[width - 1] = 1;
    special.push_back(edge);
  }
  if (limbs >= 2) {  // 10^19 and 10^38 - 1: the long division's base and a whole chunk of nines
    std::vector<std::uint64_t> ten19(limbs, 0);
    ten19[0] = 10'000'000'000'000'000'000ull;
    special.push_back(ten19);
    std::vector<std::uint64_t> nines(limbs, 0);
    // 10^38 - 1 = 0x4B3B4CA85A86C47A_098A223FFFFFFFFF
    nines[0] = 0x098A223FFFFFFFFFull;
    nines[1] = 0x4B3B4CA85A86C47Aull;
    special.push_back(nines);
  }
  std::mt19937_64 rng(seed);
  t.words.resize(std::size_t(rows * cols) * limbs);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    std::uint64_t* w = &t.words[std::size_t(i) * limbs];
    if (std::size_t(i) < special.size()) {
      std::copy(special[i].begin(), special[i].end(), w);
      continue;
    }
    const int width = 1 + int(rng() % limbs);  // random words up to `width`, sign-extended
    for (int l = 0; l < limbs; ++l) w[l] = rng();
    const std::uint64_t extension = (w[width - 1] >> 63) ? ~std::uint64_t{0} : 0;
    for (int l = width; l < limbs; ++l) w[l] = extension;
  }
  return t;
}

// The CSV the writer must produce, built one value at a time through GMP.
std::string expected_csv(const LimbTable& t, const LimbTableLabels* labels) {
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out;
  if (labels && (!labels->corner.empty() || !labels->columns.empty())) {
    std::string head;
    for (const auto* list : {&labels->corner, &labels->columns})
      for (const auto& s : *list) {
        if (!head.empty()) head += ',';
        head += field(s);
      }
    out += head + "\n";
  }
  for (std::int64_t r = 0; r < t.rows; ++r) {
    std::string line;
    if (labels && !labels->rows.empty())
      for (const auto& s : labels->rows[r]) {
        if (!line.empty()) line += ',';
        line += field(s);
      }
    for (std::int64_t c = 0; c < t.cols; ++c) {
      if (!line.empty() || c > 0) line += ",";
      line += value_of(&t.words[std::size_t(r * t.cols + c) * t.limbs], t.limbs).to_string();
    }
    out += line + "\n";
  }
  return out;
}

class LimbTableTest : public ScratchDirTest {};

TEST_F(LimbTableTest, CsvTextEqualsBigIntForEveryWidth) {
  for (int limbs = 1; limbs <= 7; ++limbs) {
    const LimbTable t = awkward_table(13, 11, limbs, std::uint64_t(limbs));
    std::string name = "t";  // appended piecewise: GCC 12's -Wrestrict misfires on "t" + ...
    name += std::to_string(limbs);
    const std::string p = path(name + ".csv");
    write_limb_table(p, t.view());
    EXPECT_EQ(read_file(p), expected_csv(t, nullptr)) << limbs << " limbs";
  }
}

TEST_F(LimbTableTest, ManyBlocksInParallelKeepTheRowOrder) {
  // 3000 rows of 40 three-word values: several blocks of rows, split among the threads.
  const LimbTable t = awkward_table(3000, 40, 3, 7);
  write_limb_table(path("big.csv"), t.view());
  EXPECT_EQ(read_file(path("big.csv")), expected_csv(t, nullptr));
}

TEST_F(LimbTableTest, WritesAWalkSizedTableFastAndRight) {
  // 512 rows of the 4096-vertex walk table's width, six-word counts of about 320 bits (the
  // length-64 counts of the benchmark graph): the MB/s go to the log; sampled lines are
  // checked against GMP.
  LimbTable t;
  t.rows = 512;
  t.cols = 4096;
  t.limbs = 6;
  t.words.resize(std::size_t(t.rows * t.cols) * 6);
  std::mt19937_64 rng(9);
  for (std::size_t i = 0; i < t.words.size(); i += 6) {
    for (int l = 0; l < 5; ++l) t.words[i + l] = rng();
    t.words[i + 5] = rng() >> 60;
  }
  const auto start = std::chrono::steady_clock::now();
  write_limb_table(path("w.csv"), t.view());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string text = read_file(path("w.csv"));
  std::cout << "[   NOTE   ] " << text.size() / 1e6 << " MB of decimal text in " << seconds << " s: "
            << text.size() / 1e6 / seconds << " MB/s (to the test's scratch folder, synced)" << std::endl;
  std::istringstream lines(text);
  std::string line;
  std::int64_t r = 0;
  for (; std::getline(lines, line); ++r) {
    if (r % 97 != 0) continue;
    std::istringstream fields(line);
    std::string field;
    for (std::int64_t c = 0; std::getline(fields, field, ','); ++c)
      if (c % 101 == 0) {
        ASSERT_EQ(field, value_of(&t.words[std::size_t(r * t.cols + c) * 6], 6).to_string());
      }
  }
  EXPECT_EQ(r, t.rows);
}

TEST_F(LimbTableTest, LabelsAndTheirQuoting) {
  const LimbTable t = awkward_table(3, 2, 2, 3);
  LimbTableLabels labels;
  labels.corner = {"length", "from/to"};
  labels.columns = {"x", "a,b"};
  labels.rows = {{"1", "say \"hi\""}, {"1", "plain"}, {"2", "line\nbreak"}};
  write_limb_table(path("l.csv"), t.view(), &labels);
  const std::string text = read_file(path("l.csv"));
  EXPECT_EQ(text, expected_csv(t, &labels));
  EXPECT_EQ(text.substr(0, text.find('\n')), "length,from/to,x,\"a,b\"");
  EXPECT_NE(text.find("\n1,\"say \"\"hi\"\"\",0,1\n"), std::string::npos) << text;
  // Column labels alone, rows without labels.
  LimbTableLabels head;
  head.columns = {"p", "q"};
  write_limb_table(path("h.csv"), t.view(), &head);
  EXPECT_EQ(read_file(path("h.csv")), expected_csv(t, &head));
}

TEST_F(LimbTableTest, NpyRoundTripAndHeader) {
  for (int limbs : {1, 2, 6}) {
    const LimbTable t = awkward_table(5, 7, limbs, 11);
    const std::string p = path("t.npy");
    write_limb_table(p, t.view());
    const std::string bytes = read_file(p);
    ASSERT_GT(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header = 10 + std::size_t(std::uint8_t(bytes[8])) + 256 * std::size_t(std::uint8_t(bytes[9]));
    EXPECT_EQ(header % 64, 0u);
    EXPECT_EQ(bytes.size(), header + t.words.size() * 8);
    EXPECT_NE(bytes.find("'descr': '<u8', 'fortran_order': False, 'shape': (5, 7, " + std::to_string(limbs) + "), }"),
              std::string::npos);
    const LimbTable back = read_limb_table(p);
    EXPECT_EQ(back.rows, 5);
    EXPECT_EQ(back.cols, 7);
    EXPECT_EQ(back.limbs, limbs);
    EXPECT_EQ(back.words, t.words);
  }
  // Empty tables too.
  LimbTable empty;
  empty.rows = 0;
  empty.cols = 4;
  empty.limbs = 3;
  write_limb_table(path("e.npy"), empty.view());
  const LimbTable back = read_limb_table(path("e.npy"));
  EXPECT_EQ(back.rows, 0);
  EXPECT_EQ(back.cols, 4);
  EXPECT_EQ(back.limbs, 3);
}

// A sequence of tables (walk counts of every length): one '<u8' array with the tables' axis
// in front, read back table by table; its CSV is the tables' rows one after another; a file
// of one table reads through read_limb_tables as one table, and read_limb_table refuses a
// sequence.
TEST_F(LimbTableTest, SequenceOfTablesRoundTrip) {
  for (int limbs : {1, 3}) {
    const LimbTable all = awkward_table(4 * 5, 3, limbs, 21);  // 4 tables of 5 x 3
    const LimbTableView first{all.words.data(), 5, 3, limbs};
    const std::string p = path("s.npy");
    write_limb_tables(p, first, 4);
    const std::string bytes = read_file(p);
    EXPECT_NE(bytes.find("'descr': '<u8', 'fortran_order': False, 'shape': (4, 5, 3, " + std::to_string(limbs) + "), }"),
              std::string::npos);
    const std::size_t header = 10 + std::size_t(std::uint8_t(bytes[8])) + 256 * std::size_t(std::uint8_t(bytes[9]));
    EXPECT_EQ(header % 64, 0u);
    ASSERT_EQ(bytes.size(), header + all.words.size() * 8);
    const LimbTables back = read_limb_tables(p);
    EXPECT_TRUE(back.stacked);
    EXPECT_EQ(back.tables, 4);
    EXPECT_EQ(back.rows, 5);
    EXPECT_EQ(back.cols, 3);
    EXPECT_EQ(back.limbs, limbs);
    EXPECT_EQ(back.words, all.words);
    // Table 2's entry (1, 2) is row 2 * 5 + 1 of the flat table.
    const LimbTableView t2 = back.table(2);
    EXPECT_EQ(value_of(t2.words + std::size_t(1 * 3 + 2) * limbs, limbs),
              value_of(&all.words[std::size_t(11 * 3 + 2) * limbs], limbs));
    expect_input_error([&] { read_limb_table(p); }, p, "read_limb_tables");

    write_limb_tables(path("s.csv"), first, 4);
    EXPECT_EQ(read_file(path("s.csv")), expected_csv(all, nullptr));
  }
  const LimbTable one = awkward_table(2, 3, 2, 4);
  write_limb_table(path("one.npy"), one.view());
  const LimbTables back = read_limb_tables(path("one.npy"));
  EXPECT_FALSE(back.stacked);
  EXPECT_EQ(back.tables, 1);
  EXPECT_EQ(back.rows, 2);
  EXPECT_EQ(back.words, one.words);
  // No tables, and tables without rows.
  write_limb_tables(path("none.npy"), LimbTableView{nullptr, 3, 2, 1}, 0);
  EXPECT_EQ(read_limb_tables(path("none.npy")).tables, 0);
  write_limb_tables(path("flat.npy"), LimbTableView{nullptr, 0, 2, 1}, 5);
  EXPECT_EQ(read_limb_tables(path("flat.npy")).tables, 5);
  expect_error([&] { write_limb_tables(path("bad.npy"), LimbTableView{nullptr, 0, 0, 1}, -1); }, ErrorCategory::usage, "-1 tables");
  expect_error([&] { write_limb_tables(path("s.mtx"), one.view(), 1); }, ErrorCategory::usage, ".csv or .npy");
}

TEST_F(LimbTableTest, MalformedNpyFilesAreInputErrors) {
  auto npy = [&](const std::string& dict, const std::string& data) {
    std::string d = dict;
    while ((10 + d.size() + 1) % 64 != 0) d += ' ';
    d += '\n';
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out += char(d.size() & 0xff);
    out += char(d.size() >> 8);
    return out + d + data;
  };
  const std::string eight(8, '\0');
  const std::string i8 = write_file("i8.npy", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1, 1), }", eight));
  expect_input_error([&] { read_limb_table(i8); }, i8, "'<u8'");
  const std::string two = write_file("2d.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1, 1), }", eight));
  expect_input_error([&] { read_limb_table(two); }, two, "(rows, cols, limbs)");
  const std::string fortran = write_file("f.npy", npy("{'descr': '<u8', 'fortran_order': True, 'shape': (1, 1, 1), }", eight));
  expect_input_error([&] { read_limb_table(fortran); }, fortran, "C order");
  const std::string zero = write_file("z.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1, 1, 0), }", ""));
  expect_input_error([&] { read_limb_table(zero); }, zero, "limb count 0");
  const std::string shortfile = write_file("s.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (2, 1, 1), }", eight));
  expect_input_error([&] { read_limb_table(shortfile); }, shortfile, "needs 16 bytes");
  const std::string huge =
      write_file("h.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", eight));
  expect_input_error([&] { read_limb_table(huge); }, huge, "too large");
  // Sequences of tables: rank 4 only, checked as a table is.
  const std::string five = write_file("5d.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", eight));
  expect_input_error([&] { read_limb_tables(five); }, five, "(tables, rows, cols, limbs)");
  const std::string short4 = write_file("s4.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (2, 1, 1, 1), }", eight));
  expect_input_error([&] { read_limb_tables(short4); }, short4, "needs 16 bytes");
  const std::string huge4 =
      write_file("h4.npy", npy("{'descr': '<u8', 'fortran_order': False, 'shape': (65536, 4294967296, 65536, 1), }", eight));
  expect_input_error([&] { read_limb_tables(huge4); }, huge4, "too large");
  const std::string i8s = write_file("i8s.npy", npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", eight));
  expect_input_error([&] { read_limb_tables(i8s); }, i8s, "'<u8'");
}

TEST_F(LimbTableTest, FailuresLeaveNoFile) {
  const LimbTable t = awkward_table(4, 3, 2, 5);
  LimbTableLabels wrong;
  wrong.rows = {{"a"}, {"b"}};  // 2 labels for 4 rows
  expect_error([&] { write_limb_table(path("w.csv"), t.view(), &wrong); }, ErrorCategory::usage, "2 row labels for 4 rows");
  expect_error([&] { write_limb_table(path("w.mtx"), t.view()); }, ErrorCategory::usage, ".csv or .npy");
  EXPECT_TRUE(listing().empty());
  // A write that fails halfway (a file-size limit, as a full disk): the old file stays and no
  // temporary is left behind.
  const LimbTable big = awkward_table(2000, 50, 4, 6);
  const std::string target = write_file("big.csv", "original");
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 1 << 16;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  expect_error([&] { write_limb_table(target, big.view()); }, ErrorCategory::output, "File too large");
  expect_error([&] { write_limb_table(path("big.npy"), big.view()); }, ErrorCategory::output, "File too large");
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_file(target), "original");
  EXPECT_EQ(listing(), std::set<std::string>{"big.csv"});
}

}  // namespace
}  // namespace gemmkit::test

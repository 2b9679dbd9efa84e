// Shape suites (bench/shapes/*.txt, gemmkit/bench.hpp): every checked-in suite parses and
// keeps its own promise, malformed lines are named by file and line, and the per-kernel
// summary of a suite's rows is exact. The CLI side is test_shape_suite_cli.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "gemmkit/bench.hpp"
#include "gemmkit/registry.hpp"
#include "host/io_test_support.hpp"

namespace gemmkit {
namespace {

const std::string kShapesDir = std::string(GEMMKIT_SOURCE_DIR) + "/bench/shapes";

std::int64_t max_mn(const SuiteShape& s) { return std::max(s.shape.m, s.shape.n); }
std::int64_t min_mn(const SuiteShape& s) { return std::min(s.shape.m, s.shape.n); }

TEST(ShapeSuites, EveryCheckedInSuiteParsesAndKeepsItsPromise) {
  const std::vector<std::string> names = shape_suite_names(kShapesDir);
  EXPECT_EQ(names, (std::vector<std::string>{"long_k", "odd", "short_k", "skinny", "small_squares",
                                             "transposed"}));
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const ShapeSuite suite = find_shape_suite(name, kShapesDir);
    EXPECT_EQ(suite.name, name);
    EXPECT_FALSE(suite.description.empty()) << "a header comment says what the suite is for";
    EXPECT_GE(suite.shapes.size(), 8u);
    EXPECT_LE(suite.shapes.size(), 30u) << "minutes per dtype on one GPU, not hours";
    for (const SuiteShape& s : suite.shapes) {
      SCOPED_TRACE(s.text() + " (line " + std::to_string(s.line) + ")");
      EXPECT_FALSE(s.source.empty()) << "every shape says where it comes from";
      // One product's operands in f32 stay well inside a GPU's memory.
      const double bytes = 4.0 * double(s.shape.m * s.shape.k + s.shape.k * s.shape.n + s.shape.m * s.shape.n);
      EXPECT_LT(bytes, 4e9);
      if (name == "small_squares") {
        EXPECT_TRUE(s.shape.m == s.shape.n && s.shape.n == s.shape.k);
        EXPECT_GE(s.shape.m, 256);
        EXPECT_LE(s.shape.m, 2048);
      } else if (name == "skinny") {
        EXPECT_LE(min_mn(s), 256);
        EXPECT_GE(max_mn(s), 4096);
        EXPECT_LE(max_mn(s), 16384);
        EXPECT_GE(s.shape.k, 4096);
        EXPECT_LE(s.shape.k, 16384);
      } else if (name == "long_k") {
        EXPECT_GE(s.shape.k, 8 * max_mn(s));
      } else if (name == "short_k") {
        EXPECT_LE(s.shape.k, 256);
        EXPECT_GE(min_mn(s), 2048);
      } else if (name == "odd") {
        EXPECT_TRUE(s.shape.m % 8 || s.shape.n % 8 || s.shape.k % 8) << "a side not a multiple of 8";
      } else if (name == "transposed") {
        EXPECT_TRUE(s.trans_a || s.trans_b || s.layout == Layout::col_major);
      }
    }
    if (name == "skinny") {  // both orientations, M from 1 to 256
      for (std::int64_t side : {1, 8, 16, 32, 64, 128, 256}) {
        EXPECT_TRUE(std::any_of(suite.shapes.begin(), suite.shapes.end(),
                                [&](const SuiteShape& s) { return s.shape.m == side; })) << side;
      }
      EXPECT_TRUE(std::any_of(suite.shapes.begin(), suite.shapes.end(),
                              [](const SuiteShape& s) { return s.shape.n <= 256; }));
    }
  }
}

TEST(ShapeSuites, AllIsTheUnionOfTheSuitesEachShapeOnce) {
  const ShapeSuite all = find_shape_suite("all", kShapesDir);
  EXPECT_EQ(all.name, "all");
  std::size_t total = 0;
  for (const std::string& name : shape_suite_names(kShapesDir)) {
    const ShapeSuite suite = find_shape_suite(name, kShapesDir);
    total += suite.shapes.size();
    for (const SuiteShape& s : suite.shapes)
      EXPECT_EQ(std::count_if(all.shapes.begin(), all.shapes.end(),
                              [&](const SuiteShape& t) { return t.text() == s.text(); }),
                1)
          << s.text();
  }
  // No two suites share a problem (the same shape with other flags is another one), so the
  // union is every line.
  EXPECT_EQ(all.shapes.size(), total);
}

class ShapeSuiteFile : public test::ScratchDirTest {};

TEST_F(ShapeSuiteFile, ReadsShapesFlagsCommentsAndTheHeader) {
  const std::string path = write_file("mine.txt",
                                      "# What it is for.\n"
                                      "#   second line\n"
                                      "\n"
                                      "16x8192x4096            # decode, batch 16\n"
                                      "  300X200x100 B^T A^T col #  both, column-major\n"
                                      "# a comment between shapes is not the description\n"
                                      "7x5x3 row\n");
  const ShapeSuite s = read_shape_suite(path);
  EXPECT_EQ(s.name, "mine");
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.description, "What it is for.\nsecond line");
  ASSERT_EQ(s.shapes.size(), 3u);
  EXPECT_EQ(s.shapes[0].shape.m, 16);
  EXPECT_EQ(s.shapes[0].shape.n, 8192);
  EXPECT_EQ(s.shapes[0].shape.k, 4096);
  EXPECT_FALSE(s.shapes[0].trans_a || s.shapes[0].trans_b);
  EXPECT_EQ(s.shapes[0].source, "decode, batch 16");
  EXPECT_EQ(s.shapes[0].line, 4);
  EXPECT_EQ(s.shapes[1].text(), "300x200x100 A^T B^T col");
  EXPECT_EQ(s.shapes[1].layout, Layout::col_major);
  EXPECT_EQ(s.shapes[1].source, "both, column-major");
  EXPECT_EQ(s.shapes[1].line, 5);
  EXPECT_EQ(s.shapes[2].text(), "7x5x3");
  EXPECT_EQ(s.shapes[2].source, "");
  EXPECT_EQ(s.shapes[2].line, 7);
}

TEST_F(ShapeSuiteFile, MalformedLinesAreNamedByFileAndLine) {
  const struct {
    std::string body, message;
  } cases[] = {
      {"# header\n12x3\n", ":2: '12x3' is not MxNxK"},
      {"4x4x4\n0x4x4\n", ":2: '0x4x4' is not MxNxK"},
      {"4x-4x4\n", ":1: '4x-4x4' is not MxNxK"},
      {"4x4x4x4\n", ":1: '4x4x4x4' is not MxNxK"},
      {"99999999999999999x4x4\n", ":1: '99999999999999999x4x4' is not MxNxK"},
      {"4x4x4 C^T\n", ":1: unknown flag 'C^T'"},
      {"4x4x4 A^T A^T\n", ":1: 'A^T' is given twice"},
      {"4x4x4 row col\n", ":1: the layout is given twice"},
      {"4x4x4 B^T\n\n4X4x4 B^T # again\n", ":3: 4x4x4 B^T repeats line 1"},
  };
  for (const auto& c : cases) {
    const std::string path = write_file("bad.txt", c.body);
    try {
      read_shape_suite(path);
      ADD_FAILURE() << "accepted: " << c.body;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::input);
      EXPECT_EQ(std::string(e.what()).rfind(path + c.message, 0), 0u) << e.what();
    }
  }
  // The same shape with other flags is another problem, not a repeat.
  EXPECT_EQ(read_shape_suite(write_file("ok.txt", "4x4x4\n4x4x4 A^T\n4x4x4 col\n")).shapes.size(), 3u);
  for (const std::string& body : {std::string(""), std::string("# only a header\n\n")}) {
    try {
      read_shape_suite(write_file("empty.txt", body));
      ADD_FAILURE() << "an empty suite was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("lists no shape"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_shape_suite(path("missing.txt")), Error);
  EXPECT_THROW(read_shape_suite(path("")), Error);  // the folder itself
}

TEST_F(ShapeSuiteFile, UnknownNamesListTheKnownOnes) {
  write_file("b.txt", "2x2x2 # b\n");
  write_file("a.txt", "1x1x1 # a\n2x2x2 # a's\n");
  write_file("notes.md", "not a suite\n");
  EXPECT_EQ(shape_suite_names(path("")), (std::vector<std::string>{"a", "b"}));
  try {
    find_shape_suite("c", path(""));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("unknown shape suite 'c' (known: a, b, all, in "), std::string::npos)
        << e.what();
  }
  const ShapeSuite all = find_shape_suite("all", path(""));
  ASSERT_EQ(all.shapes.size(), 2u);  // 2x2x2 once, from a.txt (name order)
  EXPECT_EQ(all.shapes[0].text(), "1x1x1");
  EXPECT_EQ(all.shapes[1].source, "a's");
  EXPECT_TRUE(shape_suite_names(path("nowhere")).empty());
  EXPECT_THROW(find_shape_suite("all", path("nowhere")), Error);
}

TEST(ShapeSuites, ParsesMnk) {
  const auto s = parse_bench_shape("16x8192X4096");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->m, 16);
  EXPECT_EQ(s->n, 8192);
  EXPECT_EQ(s->k, 4096);
  for (const char* bad : {"", "x", "1x2", "1x2x", "x1x2", "1xx2x3", "1x2x3x", "1 x2x3", "+1x2x3", "1x2x0", "1.5x2x3"})
    EXPECT_FALSE(parse_bench_shape(bad)) << bad;
}

BenchRow row(const std::string& kernel, BenchShape shape, double percent) {
  BenchRow r;
  r.kernel = kernel;
  r.gemm.emplace().shape = shape;
  r.percent_of_reference = percent;
  r.check.passed = true;
  return r;
}

TEST(ShapeSuites, SummaryIsTheGeometricMeanAndMinimumOfWhatRanAndPassed) {
  std::vector<BenchRow> rows;
  rows.push_back(row("ref", {1, 1, 1}, 100));
  rows.back().reference = true;
  rows.push_back(row("k", {1, 1, 1}, 25));
  rows.push_back(row("ref", {2, 2, 2}, 100));
  rows.back().reference = true;
  rows.push_back(row("k", {2, 2, 2}, 400));
  rows.back().gemm->trans_b = true;
  rows.push_back(row("k", {3, 3, 3}, 100));
  rows.push_back(row("slow", {1, 1, 1}, 80));
  rows.push_back(row("slow", {2, 2, 2}, 20));
  rows.back().gemm->trans_a = true;
  rows.back().gemm->layout = Layout::col_major;
  rows.push_back(row("slow", {3, 3, 3}, 5));  // failed verification: not counted
  rows.back().check.passed = false;
  rows.push_back(row("slow", {4, 4, 4}, -1));  // skipped
  rows.back().skipped = true;
  rows.push_back(row("slow", {5, 5, 5}, -1));  // threw
  rows.back().skipped = rows.back().failed = true;
  rows.push_back(row("slow", {6, 6, 6}, -1));  // ran, but no reference to compare with
  rows.push_back(row("never", {1, 1, 1}, -1));
  rows.back().skipped = true;

  const std::vector<SuiteKernelSummary> s = summarize_suite(rows);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].kernel, "ref");
  EXPECT_TRUE(s[0].reference);
  EXPECT_DOUBLE_EQ(s[0].geomean_percent, 100.0);
  EXPECT_EQ(s[0].measured, 2u);

  EXPECT_EQ(s[1].kernel, "k");  // (25 * 400 * 100)^(1/3) = 100
  EXPECT_FALSE(s[1].reference);
  EXPECT_DOUBLE_EQ(s[1].geomean_percent, 100.0);
  EXPECT_EQ(s[1].min_percent, 25.0);
  EXPECT_EQ(s[1].min_shape.text(), "1x1x1");
  EXPECT_EQ(s[1].measured, 3u);
  EXPECT_EQ(s[1].missing, 0u);

  EXPECT_EQ(s[2].kernel, "slow");  // sqrt(80 * 20) = 40
  EXPECT_DOUBLE_EQ(s[2].geomean_percent, 40.0);
  EXPECT_EQ(s[2].min_percent, 20.0);
  EXPECT_EQ(s[2].min_shape.text(), "2x2x2 A^T col");
  EXPECT_EQ(s[2].measured, 2u);
  EXPECT_EQ(s[2].missing, 4u);
  EXPECT_EQ(s[2].failed, 2u);

  EXPECT_EQ(s[3].kernel, "never");
  EXPECT_EQ(s[3].measured, 0u);
  EXPECT_EQ(s[3].missing, 1u);
  EXPECT_EQ(s[3].geomean_percent, 0.0);

  const std::string table = suite_summary_table("mine", DType::bf16, "ref", s);
  EXPECT_EQ(table.rfind("suite mine, bf16: % of ref over the suite's shapes\n", 0), 0u) << table;
  EXPECT_NE(table.find("slow" + std::string(24, ' ') + "40.0%    20.0%  2x2x2 A^T col                2 of 6 (2 failed)\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("never" + std::string(27, ' ') + "-        -  -                            0 of 1\n"),
            std::string::npos)
      << table;
  EXPECT_TRUE(summarize_suite({}).empty());
}

// `auto`'s decision with its reasons is the dispatcher's own: the same kernel for every dtype.
TEST(AutoChoice, ExplainsTheKernelTheDispatcherRuns) {
  Context ctx(Backend::cpu);
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64, DType::f16, DType::bf16, DType::tf32}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    GemmProblem p;
    p.dtype = dtype;
    p.m = 30, p.n = 20, p.k = 10;
    p.trans_b = true;
    p.lda = 10, p.ldb = 10, p.ldc = 20;
    const AutoChoice choice = explain_auto_choice(Backend::cpu, std::nullopt, p);
    ASSERT_NE(choice.chosen, nullptr);
    EXPECT_EQ(choice.chosen, &choose_gemm_kernel(ctx, p));
    EXPECT_TRUE(choice.device_checked);  // nothing to check on the CPU
    EXPECT_FALSE(choice.rule.empty());
    // Candidates by priority, highest first; all before the chosen one refused with a reason.
    bool seen = false;
    for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
      const AutoCandidate& c = choice.candidates[i];
      EXPECT_GT(c.entry->auto_priority, 0);
      if (i > 0) {
        EXPECT_LE(c.entry->auto_priority, choice.candidates[i - 1].entry->auto_priority);
      }
      if (c.entry == choice.chosen) {
        EXPECT_EQ(c.verdict, AutoCandidate::Verdict::chosen);
        EXPECT_TRUE(c.reason.empty());
        seen = true;
      } else {
        EXPECT_EQ(c.verdict, seen ? AutoCandidate::Verdict::passed_over : AutoCandidate::Verdict::refused);
        EXPECT_FALSE(c.reason.empty());
        if (!seen) {
          EXPECT_EQ(c.reason, *gemm_registry().get(c.entry->name).rejects(p));
        }
      }
    }
    EXPECT_TRUE(seen);
  }
  // i64: OpenBLAS refuses the dtype, and the blocked kernel is chosen.
  GemmProblem p;
  p.dtype = DType::i64;
  p.m = p.n = p.k = 4;
  p.lda = p.ldb = p.ldc = 4;
  const AutoChoice choice = explain_auto_choice(Backend::cpu, 0, p);
  EXPECT_EQ(choice.chosen->name, "cpu_blocked");
  EXPECT_EQ(choice.candidates.front().entry->name, "cpu_openblas");
  EXPECT_EQ(choice.candidates.front().reason, "dtype i64 is not supported");
}

}  // namespace
}  // namespace gemmkit

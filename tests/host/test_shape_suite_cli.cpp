// `gemmkit bench --suite` end to end on a tiny CPU suite, its usage errors, and
// `gemmkit list --auto` (the library side is test_shape_suite.cpp).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gemmkit/device.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

using test::CliResult;

class SuiteCli : public test::CliTest {
 protected:
  // Three groups of transposes/layout: three engine runs, one summary.
  std::string tiny_suite() const {
    return write_file("tiny.txt",
                      "# A test-only suite of small shapes.\n"
                      "24x20x16          # plain\n"
                      "17x9x33 B^T       # odd, B transposed\n"
                      "8x8x8             # plain again\n"
                      "13x11x7 A^T col   # column-major, A transposed\n");
  }
};

TEST_F(SuiteCli, RunsASuiteFileAndSummarisesEveryKernel) {
  const std::string suite = tiny_suite();
  const CliResult r = run("bench --suite " + suite + " --kernels cpu_naive,cpu_blocked --reps 2 --json " +
                          path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("suite tiny: 2 shapes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("suite tiny: 1 shape, stored B^T\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("suite tiny: 1 shape, stored A^T col\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("suite tiny, f32: % of cpu_openblas over the suite's shapes"), std::string::npos) << r.out;

  const auto j = nlohmann::json::parse(read_file(path("r.json")));
  ASSERT_EQ(j.at("rows").size(), 12u);  // 4 shapes x (OpenBLAS + 2 kernels)
  const auto& s = j.at("suite");
  EXPECT_EQ(s.at("name"), "tiny");
  EXPECT_EQ(s.at("path"), suite);
  EXPECT_EQ(s.at("description"), "A test-only suite of small shapes.");
  ASSERT_EQ(s.at("shapes").size(), 4u);
  EXPECT_EQ(s.at("shapes")[1].at("source"), "odd, B transposed");
  EXPECT_EQ(s.at("shapes")[1].at("trans_b"), true);
  EXPECT_EQ(s.at("shapes")[3].at("layout"), "col");
  // Every row carries its own transposes and layout.
  for (const auto& row : j.at("rows")) {
    const std::int64_t m = row.at("m");
    EXPECT_EQ(row.at("trans_b"), m == 17) << row;
    EXPECT_EQ(row.at("trans_a"), m == 13) << row;
    EXPECT_EQ(row.at("layout"), m == 13 ? "col" : "row") << row;
  }
  // The summary is the geometric mean and minimum of the rows' own ratios.
  ASSERT_EQ(s.at("summary").size(), 3u);
  for (const auto& k : s.at("summary")) {
    SCOPED_TRACE(k.dump());
    double log_sum = 0, min = 1e300;
    nlohmann::json min_row;
    int n = 0;
    for (const auto& row : j.at("rows"))
      if (row.at("kernel") == k.at("kernel")) {
        const double pct = row.at("percent_of_reference");
        log_sum += std::log(pct);
        if (pct < min) min = pct, min_row = row;
        ++n;
      }
    EXPECT_EQ(n, 4);
    EXPECT_EQ(k.at("measured"), 4);
    EXPECT_EQ(k.at("missing"), 0);
    EXPECT_NEAR(double(k.at("geomean_percent")), std::exp(log_sum / n), 1e-9 * std::exp(log_sum / n));
    EXPECT_EQ(double(k.at("min_percent")), min);
    EXPECT_EQ(k.at("min_shape").at("m"), min_row.at("m"));
    EXPECT_EQ(k.at("min_shape").at("trans_a"), min_row.at("trans_a"));
    EXPECT_EQ(k.at("min_shape").at("layout"), min_row.at("layout"));
  }
  EXPECT_EQ(s.at("summary")[0].at("kernel"), "cpu_openblas");
  EXPECT_EQ(s.at("summary")[0].at("reference"), true);

  // A run without --suite says so in the same field.
  ASSERT_EQ(run("bench --sizes 8 --kernels cpu_naive --reps 1 --json " + path("p.json")).status, 0);
  EXPECT_TRUE(nlohmann::json::parse(read_file(path("p.json"))).at("suite").is_null());
}

TEST_F(SuiteCli, FindsSuitesByNameInTheShapesFolder) {
  write_file("one.txt", "# first\n8x8x8 # a\n12x4x4 B^T # b\n");
  write_file("two.txt", "# second\n8x8x8 # the same as one's\n4x4x12 # c\n");
  ASSERT_EQ(setenv("GEMMKIT_SHAPES_DIR", path("").c_str(), 1), 0);
  const CliResult one = run("bench --suite one --kernels cpu_naive --reps 1 --json " + path("one.json"));
  const CliResult all = run("bench --suite all --kernels cpu_naive --reps 1 --json " + path("all.json"));
  const CliResult unknown = run("bench --suite three");
  unsetenv("GEMMKIT_SHAPES_DIR");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(path("one.json"))).at("suite").at("shapes").size(), 2u);
  ASSERT_EQ(all.status, 0) << all.err;
  const auto j = nlohmann::json::parse(read_file(path("all.json")));
  EXPECT_EQ(j.at("suite").at("name"), "all");
  EXPECT_EQ(j.at("suite").at("shapes").size(), 3u);  // 8x8x8 once
  expect_error(unknown, 2, "unknown shape suite 'three' (known: one, two, all, in ");
  // The build tree's own suites, as installed beside the binary.
  expect_error(run("bench --suite three"), 2, "known: long_k, odd, short_k, skinny, small_squares, transposed, all");
}

TEST_F(SuiteCli, UsageErrorsSayWhatIsWrong) {
  const std::string suite = tiny_suite();
  expect_error(run("bench --suite " + suite + " --sizes 8"), 2, "give one of --suite, --sizes, --shapes or --m/--n/--k");
  expect_error(run("bench --suite " + suite + " --shapes 8x8x8"), 2, "give one of --suite");
  expect_error(run("bench --suite " + suite + " --m 8 --n 8 --k 8"), 2, "give one of --suite");
  expect_error(run("bench --suite " + suite + " --transpose-a"), 2, "--suite takes transposes and layout from its file");
  expect_error(run("bench --suite " + suite + " --layout col"), 2, "--suite takes transposes and layout");
  const std::string bad = write_file("bad.txt", "# header\n8x8x8\n8x8 # two sides\n");
  expect_error(run("bench --suite " + bad), 2, bad + ":3: '8x8' is not MxNxK");
  expect_error(run("bench --suite " + path("missing.txt")), 2, "cannot read shape suite");
  EXPECT_FALSE(std::filesystem::exists(path("r.json")));
}

TEST_F(SuiteCli, ListAutoSaysWhatAutoPicksOnTheCpuAndWhy) {
  CliResult r = run("list --auto 300x200x100 --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("auto for the f32 GEMM 300x200x100 on the cpu backend\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npicks: cpu_openblas\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule: "), std::string::npos) << r.out;

  r = run("list --auto 3x2x1 --backend cpu --dtype i64 --transpose-a --layout col");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("i64 GEMM 3x2x1 (A^T, column-major)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npicks: cpu_blocked\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dtype i64 is not supported"), std::string::npos) << r.out;

  r = run("list --auto 64x64x64 --backend cpu --dtype bf16 --json -");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("chosen"), "cpu_widened");
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_TRUE(j.contains("meta"));
  const auto& c = j.at("candidates");
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0].at("kernel"), "cpu_openblas");
  EXPECT_EQ(c[0].at("verdict"), "refused");
  EXPECT_EQ(c[1].at("kernel"), "cpu_widened");
  EXPECT_EQ(c[1].at("verdict"), "chosen");
  EXPECT_EQ(c[2].at("verdict"), "passed over");
}

TEST_F(SuiteCli, ListAutoErrors) {
  expect_error(run("list --auto 10x10"), 2, "--auto: '10x10' is not MxNxK");
  expect_error(run("list --auto 10x10x0"), 2, "is not MxNxK");
  expect_error(run("list --auto 8x8x8 --dtype f12"), 2, "unknown dtype 'f12'");
  expect_error(run("list --auto 8x8x8 --backend gpu"), 2, "unknown backend 'gpu'");
  expect_error(run("list --auto 8x8x8 --layout diagonal"), 2, "--layout: 'diagonal' is not row or col");
  expect_error(run("list --dtype f64"), 2, "--dtype goes with --auto MxNxK");
  expect_error(run("list --transpose-b"), 2, "--transpose-b goes with --auto");
  expect_error(run("list --auto 8x8x8 --operation spmv"), 2, "--auto explains the GEMM choice");
  if (!cuda_compiled()) {
    expect_error(run("list --auto 8x8x8 --backend cuda"), 2, "this build has no CUDA backend");
  } else if (!cuda_device_available()) {
    // The CUDA decision is host logic: made without a device, the compute capability said,
    // and the library's own choice.
    const CliResult r = run("list --auto 4096x4096x4096 --backend cuda --dtype bf16");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("no device here"), std::string::npos) << r.out;
    GemmProblem p;
    p.dtype = DType::bf16;
    p.m = p.n = p.k = p.lda = p.ldb = p.ldc = 4096;
    const AutoChoice choice = explain_auto_choice(Backend::cuda, std::nullopt, p);
    ASSERT_NE(choice.chosen, nullptr);
    // A shape of the tuning table: its winner, on a device like the one it was measured on.
    EXPECT_NE(choice.tuned_compute_capability, 0);
    EXPECT_NE(r.out.find("picks: " + choice.chosen->name + " on a device of compute capability " +
                         std::to_string(choice.tuned_compute_capability) + ", where it was tuned"),
              std::string::npos)
        << r.out;
  }
}

}  // namespace
}  // namespace gemmkit

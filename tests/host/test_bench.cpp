// The benchmark engine (gemmkit/bench.hpp) on the CPU backend, and the result schema every
// --json shares (gemmkit/run_meta.hpp). Kernels of its own (register_kernel) are tested in
// tests/outside/test_bench_outside.cpp, apart from the host tests' loops over every kernel.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>

#include "gemmkit/bench.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/run_meta.hpp"
#include "gemmkit/timing.hpp"
#include "host/cli_test_support.hpp"
#include "bench_test_support.hpp"

namespace gemmkit {
namespace {

using test::bench_row;
using test::small_bench_options;

// `auto` is a row per shape for what the dispatcher runs there, named in the note; the
// references still run beside it, and its ratio is against them like any kernel's.
// The one rule of every timed row: the spread of the runs, noisy past kNoisySpread of the
// median, or when the reference's paired runs drift as much; a CPU run also when its cores
// are shared (the load check, which depends on the machine, is tested through CoreLoad).
TEST(TimingSpread, SpreadAndNoisyRows) {
  TimingSpread t = timing_spread({1.0, 1.02, 1.05, 0.99, 1.01}, false);
  EXPECT_EQ(t.reps, 5);
  EXPECT_DOUBLE_EQ(t.min_s, 0.99);
  EXPECT_DOUBLE_EQ(t.median_s, 1.01);
  EXPECT_DOUBLE_EQ(t.max_s, 1.05);
  EXPECT_NEAR(t.spread, 0.06 / 1.01, 1e-12);
  EXPECT_FALSE(t.noisy) << t.noisy_reason;
  EXPECT_EQ(t.noisy_reason, "");
  EXPECT_EQ(t.reference_spread, -1);
  EXPECT_LT(t.load.load1, 0);  // not a CPU run: no load looked at
  EXPECT_EQ(spread_text(t), "5.9%");

  t = timing_spread({2.0, 1.0, 1.2, 1.1}, false);  // median 1.15, spread 1/1.15
  EXPECT_DOUBLE_EQ(t.median_s, 1.15);
  EXPECT_TRUE(t.noisy);
  EXPECT_EQ(t.noisy_reason, "spread 87.0% > 10.0%");
  EXPECT_EQ(spread_text(t), "87.0%*");

  // Steady runs beside a reference that drifted between the pairs.
  t = timing_spread({1.0, 1.0, 1.01}, false, {1.0, 1.3, 1.0});
  EXPECT_NEAR(t.reference_spread, 0.3, 1e-12);
  EXPECT_TRUE(t.noisy);
  EXPECT_EQ(t.noisy_reason, "the reference's paired runs spread 30.0% > 10.0%");

  EXPECT_EQ(timing_spread({}, false).reps, 0);
  EXPECT_FALSE(timing_spread({3.0}, false).noisy);  // one run: no spread to see

  // A CPU run reads the load: the cores are shared when the others' load is above the
  // idle cores.
  t = timing_spread({1.0, 1.0}, true);
  EXPECT_GE(t.load.cores, 1);
  EXPECT_GE(t.load.threads, 1);
  EXPECT_EQ(t.noisy, t.load.shared());
  CoreLoad load{3.1, 2, 2};  // a parallel build beside a 2-thread run on 2 cores
  EXPECT_TRUE(load.shared());
  load = {1.9, 2, 2};  // the run alone
  EXPECT_FALSE(load.shared());
  load = {2.5, 4, 1};  // a 1-thread run, 1.5 of load elsewhere, 3 idle cores
  EXPECT_FALSE(load.shared());
  load = {-1, 2, 2};  // no /proc/loadavg
  EXPECT_FALSE(load.shared());
}

// The load is the kernel's 1-minute average, as /proc/loadavg shows it (read without a C++
// stream: see core_load).
TEST(TimingSpread, CoreLoadIsTheOneMinuteLoadAverage) {
  const CoreLoad load = core_load(3);
  EXPECT_EQ(load.threads, 3);
  EXPECT_GE(load.cores, 1);
  std::ifstream in("/proc/loadavg");
  double want = -1;
  if (!(in >> want)) GTEST_SKIP() << "no /proc/loadavg here";
  EXPECT_GE(load.load1, 0.0);
  EXPECT_NEAR(load.load1, want, 0.5);  // read moments apart: the average moves slowly
}

// The one loop of every benchmark: warm-up runs within half the budget, then timed runs
// until reps or the budget; pairs in ABBA order.
TEST(Timing, TheLoopEveryBenchmarkFollows) {
  int calls = 0;
  const TimedRun second = [&] { return ++calls, 1.0; };
  // Warm-up: runs while under 1.25 s spent (2); timed: until 2.5 s (3 of the 5 asked).
  EXPECT_EQ(time_runs({3, 5, 2.5}, second).size(), 3u);
  EXPECT_EQ(calls, 5);
  calls = 0;
  EXPECT_EQ(time_runs(fixed_runs(2, 4), second), std::vector<double>(4, 1.0));
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(time_runs({0, 0, 1.0}, second).size(), 1u);  // at least one run
  std::string order;
  const PairedTimes t = time_runs_paired({1, 4, 10.0}, [&] { return order += 'E', 1.0; },
                                         [&] { return order += 'R', 2.0; });
  EXPECT_EQ(order, "ER" "ERREERRE");
  EXPECT_EQ(t.entry, std::vector<double>(4, 1.0));
  EXPECT_EQ(t.reference, std::vector<double>(4, 2.0));
  EXPECT_GE(cpu_seconds([] {}), 0.0);
  EXPECT_DOUBLE_EQ(median_of({3.0, 1.0, 2.0, 10.0}), 2.5);
}

// Every operation's rows: the rate from the median, the ratio to the reference's rate (or to
// its runs paired with the row), the copy's share of the row's time.
TEST(BenchReport, RatesAndRatiosOfEveryOperation) {
  std::vector<BenchRow> rows(4);
  for (BenchRow& r : rows) r.unit = RateUnit::gbs;
  record_runs(rows[0], {{2.0, 1.0, 4.0}, {}}, 4e9, false);  // the reference: 2 GB/s
  rows[0].reference = true;
  record_runs(rows[1], {{1.0, 1.0}, {}}, 4e9, false);
  record_runs(rows[2], {{1.0}, {3.0}}, 4e9, false);  // timed in pairs with the reference
  rows[3].skipped = true;
  EXPECT_EQ(rows[0].seconds, (std::vector<double>{2.0, 1.0, 4.0}));
  EXPECT_EQ(rows[0].timing.reps, 3);
  EXPECT_DOUBLE_EQ(rows[0].timing.median_s, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].rate, 2.0);
  EXPECT_DOUBLE_EQ(rows[2].reference_median_s, 3.0);
  set_ratios(rows.begin(), rows.end(), &rows[0], 0.5);
  EXPECT_DOUBLE_EQ(rows[0].percent_of_reference, 100.0);
  EXPECT_DOUBLE_EQ(rows[1].percent_of_reference, 200.0);
  EXPECT_DOUBLE_EQ(rows[2].percent_of_reference, 300.0);
  EXPECT_DOUBLE_EQ(rows[1].percent_of_copy, 50.0);
  EXPECT_EQ(rows[3].percent_of_reference, -1);
  EXPECT_EQ(rows[3].percent_of_copy, -1);
  EXPECT_EQ(rate_unit_name(RateUnit::gbs), "GB/s");
  EXPECT_EQ(rate_unit_name(RateUnit::gflops), "GFLOP/s");
}

TEST(BenchEngine, AutoRowsRunWhatTheDispatcherPicksAtEachShape) {
  Context ctx(Backend::cpu);
  const BenchReport r = run_gemm_bench(ctx, small_bench_options({"auto"}));
  std::size_t autos = 0;
  for (const BenchRow& row : r.rows) {
    if (row.kernel != "auto") continue;
    ++autos;
    ASSERT_FALSE(row.skipped) << row.note;
    EXPECT_FALSE(row.reference);
    EXPECT_TRUE(row.check.passed) << row.check.detail;
    GemmProblem p;
    const BenchShape& s = row.gemm->shape;
    p.m = s.m, p.n = s.n, p.k = s.k;
    p.lda = p.k, p.ldb = p.n, p.ldc = p.n;
    EXPECT_EQ(row.note, "auto ran " + choose_gemm_kernel(ctx, p, {}).name);
    EXPECT_GT(row.percent_of_reference, 0.0);
  }
  EXPECT_EQ(autos, 2u);  // one per shape
  EXPECT_NE(bench_table(r, run_meta(&ctx)).find("(auto ran "), std::string::npos);
}

TEST(BenchEngine, TimesVerifiesAndComparesEveryKernelOnTheCpu) {
  Context ctx(Backend::cpu);
  std::vector<std::string> progress;
  const BenchReport r = run_gemm_bench(ctx, small_bench_options({"cpu_naive", "cpu_blocked"}),
                                       [&](const BenchProgress& at) {
                                         EXPECT_LE(at.done, at.total);
                                         progress.push_back(at.kernel + " " + at.shape.text());
                                       });
  EXPECT_EQ(r.backend, Backend::cpu);
  EXPECT_EQ(r.percent_of, "cpu_openblas");
  EXPECT_FALSE(r.paired);  // CPU thread pools are not interleaved
  EXPECT_FALSE(r.l2_flushed);
  // Smallest shape first; the reference first at each shape.
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(progress.front(), "cpu_openblas 8x8x8");
  EXPECT_EQ(progress.back(), "cpu_blocked 24x20x16");
  EXPECT_EQ(r.rows[0].kernel, "cpu_openblas");
  EXPECT_EQ(r.rows[0].gemm->shape.m, 8);
  EXPECT_EQ(r.rows[0].size, "8x8x8");
  EXPECT_TRUE(r.rows[0].reference);
  for (const BenchRow& row : r.rows) {
    EXPECT_FALSE(row.skipped) << row.kernel << ": " << row.note;
    EXPECT_TRUE(row.check.passed) << row.kernel << ": " << row.check.detail;
    EXPECT_EQ(row.check.method, VerifyMode::full);
    EXPECT_GT(row.check.tolerance, 0.0);
    EXPECT_EQ(row.operation, "gemm");
    EXPECT_EQ(row.unit, RateUnit::gflops);
    EXPECT_GT(row.rate, 0.0);
    EXPECT_EQ(row.timing.reps, 2);
    EXPECT_EQ(row.seconds.size(), 2u);
    EXPECT_LE(row.timing.min_s, row.timing.median_s);
    EXPECT_DOUBLE_EQ(row.rate, row.gemm->shape.flops() / row.timing.median_s / 1e9);
    // The ratio is against the reference's GFLOP/s at the same shape.
    const BenchRow& ref = bench_row(r, "cpu_openblas", row.gemm->shape.m);
    EXPECT_DOUBLE_EQ(row.percent_of_reference, 100.0 * row.rate / ref.rate);
  }
  EXPECT_TRUE(r.all_passed());
  EXPECT_EQ(r.failed_rows(), 0u);
  EXPECT_FALSE(r.first_failure);
  const std::string table = bench_table(r, run_meta(&ctx));
  EXPECT_NE(table.find("% OpenBLAS"), std::string::npos) << table;
  EXPECT_NE(table.find("cpu_blocked              24x20x16"), std::string::npos) << table;
  EXPECT_EQ(table.find("FAILED"), std::string::npos) << table;
}

TEST(BenchEngine, ColumnMajorAndTransposedOperands) {
  Context ctx(Backend::cpu);
  BenchOptions o = small_bench_options({"cpu_naive", "cpu_blocked"});
  o.layout = Layout::col_major;
  o.trans_a = true;
  o.batch = 2;
  const BenchReport r = run_gemm_bench(ctx, o);
  ASSERT_EQ(r.rows.size(), 6u);
  for (const BenchRow& row : r.rows) {
    EXPECT_FALSE(row.skipped) << row.kernel << ": " << row.note;
    EXPECT_TRUE(row.check.passed) << row.kernel << ": " << row.check.detail;
  }
}

TEST(BenchEngine, RefusesWhatItCannotRun) {
  Context ctx(Backend::cpu);
  const auto usage = [&](const BenchOptions& o, const std::string& says) {
    try {
      run_gemm_bench(ctx, o);
      ADD_FAILURE() << "no error; expected one saying " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  usage(small_bench_options({"no_such_kernel"}), "no_such_kernel");
  BenchOptions o = small_bench_options({"cpu_naive"});
  o.shapes.clear();
  usage(o, "no shapes");
  o = small_bench_options({"cpu_naive"});
  o.dtype = DType::bf16;
  usage(o, "does not support");
  o = small_bench_options({"cpu_naive"});
  o.batch = 0;
  usage(o, "batch");
}

TEST(BenchEngine, CopyCeilingOnTheCpu) {
  Context ctx(Backend::cpu);
  const double seconds = copy_ceiling_seconds(ctx, std::size_t(4) << 20, 1, 3);
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 1.0);  // 4 MiB: well under a second on any machine
}

TEST(RunMeta, DescribesTheBuildAndTheMachine) {
  const RunMeta meta = run_meta();
  EXPECT_EQ(meta.schema_version, kResultSchemaVersion);
  EXPECT_FALSE(meta.gemmkit_version.empty());
  EXPECT_FALSE(meta.commit.empty());
  // The dirty flag is split off the commit, never left in it.
  EXPECT_EQ(meta.commit.find("-dirty"), std::string::npos) << meta.commit;
  ASSERT_EQ(meta.date_utc.size(), 20u) << meta.date_utc;  // 2026-11-24T01:30:00Z
  EXPECT_EQ(meta.date_utc.back(), 'Z');
  EXPECT_FALSE(meta.host.empty());
  EXPECT_FALSE(meta.device_name().empty());
  EXPECT_GT(meta.cpu_threads, 0);
  EXPECT_EQ(meta.cuda_build, cuda_compiled());
  if (!cuda_compiled()) {
    EXPECT_EQ(meta.cublas_version, 0);
    EXPECT_FALSE(meta.gpu.has_value());
    EXPECT_FALSE(meta.device_note.empty());
  }
}

class ResultSchema : public test::CliTest {};

// Every --json of gemmkit starts with the same meta object.
TEST_F(ResultSchema, EveryJsonCarriesTheMeta) {
  const std::string json = path("r.json");
  const auto expect_meta = [](const nlohmann::json& j, const std::string& what) {
    ASSERT_TRUE(j.contains("meta")) << what << ": " << j.dump();
    const nlohmann::json& meta = j["meta"];
    EXPECT_EQ(meta["schema_version"], kResultSchemaVersion) << what;
    for (const char* key : {"gemmkit_version", "commit", "date", "host", "device"})
      EXPECT_FALSE(meta[key].get<std::string>().empty()) << what << ": " << key;
    for (const char* key : {"dirty", "driver_version", "cuda_runtime_version", "cublas_version", "gpu"})
      EXPECT_TRUE(meta.contains(key)) << what << ": " << key;
    EXPECT_TRUE(meta["dirty"].is_boolean()) << what;
  };
  test::CliResult r = run("bench --backend cpu --sizes 8 --reps 1 --warmup 0 --kernels cpu_naive --json " + json);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto bench = nlohmann::json::parse(read_file(json));
  expect_meta(bench, "bench");
  EXPECT_EQ(bench["rows"].size(), 2u);  // cpu_openblas and cpu_naive
  r = run("device --json -");
  expect_meta(nlohmann::json::parse(r.out), "device");
}

TEST_F(ResultSchema, BenchBatchAndColumnMajor) {
  const std::string json = path("r.json"), csv = path("r.csv");
  const test::CliResult r = run("bench --backend cpu --sizes 16 --batch 3 --layout col --reps 1 "
                                "--warmup 0 --kernels cpu_naive --json " + json + " --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cpu_naive                3 x 16x16x16"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["batch"], 3);
  EXPECT_EQ(j["layout"], "col");
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["batch"], 3);
    EXPECT_TRUE(row["passed"].get<bool>()) << row.dump();
  }
  EXPECT_EQ(read_file(csv).rfind("kernel,backend,dtype,m,n,k,batch,reps,", 0), 0u);
  expect_error(run("bench --backend cpu --sizes 16 --layout diagonal"), 2, "--layout");
  expect_error(run("bench --backend cpu --sizes 16 --batch 0"), 2, "--batch");
}

}  // namespace
}  // namespace gemmkit

// One condition, one exit status and one sentence: the no-device error of every command,
// the device diagnosis, "did you mean" for subcommands, file names escaped on one line, and
// the refusals of gen (ranges beyond the dtype, negative seeds) and of sizes that overflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "host/cli_test_support.hpp"

using namespace gemmkit;
using test::CliResult;

namespace {

using Status = CudaProbe::Status;

CudaProbe probe(Status status, int driver, int runtime, bool module = true, int count = 0) {
  CudaProbe p;
  p.status = status;
  p.error_text = "CUDA driver version is insufficient for CUDA runtime version";
  p.device_count = count;
  p.driver_version = driver;
  p.runtime_version = runtime;
  p.kernel_module_loaded = module;
  return p;
}

}  // namespace

// The runtime says "insufficient driver" both without a driver and with an old one; the
// diagnosis tells them apart (the machine in the issue had no driver at all).
TEST(DeviceDiagnosis, TellsNoDriverFromOldDriverFromNoDevice) {
  DeviceQuery q = diagnose_devices(probe(Status::insufficient_driver, 0, 13000));
  EXPECT_EQ(q.reason, NoDeviceReason::no_driver);
  EXPECT_NE(q.message.find("no NVIDIA driver is installed"), std::string::npos) << q.message;

  q = diagnose_devices(probe(Status::no_device, 13000, 13000, /*module=*/false));
  EXPECT_EQ(q.reason, NoDeviceReason::no_driver);
  EXPECT_NE(q.message.find("no NVIDIA driver is loaded"), std::string::npos) << q.message;

  q = diagnose_devices(probe(Status::insufficient_driver, 12020, 13000));
  EXPECT_EQ(q.reason, NoDeviceReason::driver_too_old);
  EXPECT_NE(q.message.find("too old: it supports CUDA 12.2, this gemmkit's CUDA runtime is 13.0"),
            std::string::npos)
      << q.message;

  q = diagnose_devices(probe(Status::no_device, 13000, 13000));
  EXPECT_EQ(q.reason, NoDeviceReason::no_device);
  EXPECT_NE(q.message.find("sees no device"), std::string::npos) << q.message;
  EXPECT_EQ(diagnose_devices(probe(Status::success, 13000, 13000, true, 0)).reason,
            NoDeviceReason::no_device);

  q = diagnose_devices(probe(Status::other, 13000, 13000));
  EXPECT_EQ(q.reason, NoDeviceReason::runtime_error);
  EXPECT_NE(q.message.find(": CUDA driver version"), std::string::npos) << q.message;

  EXPECT_EQ(diagnose_devices(probe(Status::success, 13000, 13000, true, 2)).reason, NoDeviceReason::none);
  // Never the doubled prefix of the old messages.
  for (const auto& p : {probe(Status::no_device, 13000, 13000), probe(Status::insufficient_driver, 0, 1)})
    EXPECT_EQ(diagnose_devices(p).message.find("no CUDA device"), std::string::npos);
  EXPECT_EQ(no_device_reason_name(NoDeviceReason::driver_too_old), "driver_too_old");
}

namespace {

class CliMessages : public test::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    write_file("a.csv", "1,2\n3,4\n");
    write_file("x.csv", "1\n2\n");
    write_file("a.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 2.0\n");
    write_file("g.txt", "A B\nB C\n");
  }
};

}  // namespace

// "No device" is exit 1 with the same line in every subcommand that needs one, refused before
// any input is read or anything computed (the input files named here do not exist).
TEST_F(CliMessages, NoDeviceIsTheSameSentenceAndExitOneEverywhere) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const std::string sentence = "gemmkit: error: " + no_device_message() + "\n";
  EXPECT_EQ(sentence.rfind("gemmkit: error: no CUDA device: ", 0), 0u) << sentence;
  EXPECT_EQ(sentence.find("no CUDA device", 20), std::string::npos) << "doubled: " << sentence;
  const std::string a = path("a.csv"), x = path("x.csv"), missing = path("missing.csv");
  for (const std::string& args : std::vector<std::string>{
           "multiply " + a + " " + a + " -o " + path("c.npy") + " --backend cuda",
        "bench --backend cuda --sizes 16", "walks " + missing + " --length 2 --bench",
        "walks " + missing + " --length 2 --backend cuda", "reduce " + missing + " --backend cuda",
        "reduce --bench --n 1000", "spmv " + path("a.mtx") + " " + missing + " --backend cuda",
        "spmv --bench --rows 100", "conv1d --bench --n 100",
        "conv1d " + missing + " " + x + " --backend cuda", "device"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err, sentence) << args;
  }
  // A GPU kernel by name: in a build with CUDA but no device, the same sentence; in a build
  // without CUDA the kernel is not in it at all, and the error says so (usage, exit 2).
  for (const std::string& args : std::vector<std::string>{
           "conv1d " + x + " " + x + " --kernel tiled", "spmv " + path("a.mtx") + " " + missing + " --kernel vector"}) {
    const CliResult r = run(args);
    if (cuda_compiled()) {
      EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
      EXPECT_EQ(r.err, sentence) << args;
    } else {
      expect_error(r, 2, "built without the CUDA backend");
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path("c.npy")));
  // device --json - says why on stdout too, as data.
  const CliResult r = run("device --json -");
  EXPECT_EQ(r.status, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reason"], std::string(no_device_reason_name(query_devices().reason)));
  EXPECT_EQ(j["message"], query_devices().message);
}

TEST_F(CliMessages, MisspelledSubcommandGetsASuggestion) {
  CliResult r = run("mutliply " + path("a.csv") + " " + path("a.csv"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "gemmkit: error: unknown subcommand 'mutliply' (did you mean 'multiply'?)\n");
  r = run("walk g.txt --length 2");
  EXPECT_EQ(r.err, "gemmkit: error: unknown subcommand 'walk' (did you mean 'walks'?)\n");
  r = run("devcie");
  EXPECT_EQ(r.err, "gemmkit: error: unknown subcommand 'devcie' (did you mean 'device'?)\n");
  r = run("frobnicate");
  EXPECT_EQ(r.status, 2);
  expect_error(r, 2, "unknown subcommand 'frobnicate' (expected one of: multiply, gen,");
  // No subcommand at all is still the parser's own message.
  expect_error(run(""), 2, "A subcommand is required");
}

// A file name holding a newline is escaped, so every message stays one line. (The shell gets
// each name in single quotes, newline and all.)
TEST_F(CliMessages, FileNamesWithANewlineStayOnOneLine) {
  const std::string odd = path("bad\nname"), shown = path("bad") + "\\x0aname";
  std::ofstream(odd + ".csv") << "1,2,3\n4,5,6\n";  // 2 x 3: not a vector, and not 2 x k
  std::ofstream(odd + "x.csv") << "1\n2\n3\n";     // 3 entries where a.mtx needs 2
  const std::string a = path("a.csv"), c = " -o " + path("c.npy");
  expect_error(run("multiply '" + odd + ".csv' " + a + c), 2, "shape mismatch: '" + shown + ".csv' is 2x3");
  expect_error(run("multiply " + a + " " + a + " --beta 1 --c '" + odd + ".csv'" + c), 2,
               "shape mismatch: '" + shown + ".csv' is 2x3");
  expect_error(run("conv1d '" + odd + ".csv' " + path("x.csv")), 2, "'" + shown + ".csv': X must be a vector");
  expect_error(run("spmv " + path("a.mtx") + " '" + odd + "x.csv' --backend cpu"), 2,
               "size mismatch: '" + shown + "x.csv' has 3 entries");
  expect_error(run("multiply " + a + " " + a + " -o '" + odd + ".bin'"), 2, "'" + shown + ".bin'");
  expect_error(run("walks '" + odd + ".txt' --length 2"), 2, "'" + shown + ".txt'");
  EXPECT_FALSE(std::filesystem::exists(path("c.npy")));
  // The status lines of a run that worked, too.
  for (const std::string& args : {"gen 2 2 -o '" + odd + ".npy'", "walks " + path("g.txt") + " -k 2 -o '" + odd + ".csv'",
                                  "multiply " + a + " " + a + " -o '" + odd + ".npy'"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    EXPECT_NE(r.out.find("'" + shown), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(odd), std::string::npos) << r.out;
  }
}

TEST_F(CliMessages, GenRefusesRangesBeyondTheDtypeAndNegativeSeeds) {
  const std::string out = path("g.npy");
  expect_error(run("gen 2 2 -o " + out + " --dist uniform:-1e39:1e39"), 2,
               "uniform:-1e+39:1e+39 reaches 1e+39, beyond the largest finite f32 3.40282e+38");
  expect_error(run("gen 2 2 -o " + out + " --dtype f16 --dist uniform:0:70000"), 2,
               "beyond the largest finite f16 65504");
  expect_error(run("gen 2 2 -o " + out + " --dtype f16 --dist ints:-100000:0"), 2, "f16 65504");
  expect_error(run("gen 2 2 -o " + out + " --dtype bf16 --dist normal:0:1e38"), 2,
               "mean + 8.58 deviations");
  expect_error(run("gen 2 2 -o " + out + " --dtype f64 --dist uniform:-1e308:1e308"), 2,
               "width of the range overflows");
  expect_error(run("gen 2 2 -o " + out + " --seed -1"), 2, "--seed: must be a non-negative integer, not -1");
  expect_error(run("gen 0 2 -o " + out), 2, "ROWS and COLS must be at least 1");
  EXPECT_FALSE(std::filesystem::exists(out));
  for (const char* sub : {"reduce --bench", "spmv --bench", "conv1d --bench", "bench --backend cpu"})
    expect_error(run(std::string(sub) + " --seed -2"), 2, "must be a non-negative integer, not -2");
  // The edges of what fits are accepted, and the largest seed is a seed.
  EXPECT_EQ(run("gen 2 2 -o " + out + " --dtype f16 --dist uniform:-65504:65504").status, 0);
  const CliResult r = run("gen 2 2 -o " + out + " --seed 18446744073709551615");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("seed 18446744073709551615"), std::string::npos) << r.out;
}

// Issue 39: --seed 18446744073709551616 silently became 2^64 - 1; every --seed refuses what
// is past 2^64 - 1, decimal or hexadecimal, before any work.
TEST_F(CliMessages, SeedsPastTwoToTheSixtyFourAreRefused) {
  const std::string out = path("g.npy");
  for (const std::string& sub : {"gen 2 2 -o " + out, std::string("reduce --bench"), std::string("spmv --bench"),
                                 std::string("conv1d --bench"), std::string("bench --backend cpu --sizes 8")})
    for (const char* seed : {"18446744073709551616", "99999999999999999999999", "0x10000000000000000"}) {
      SCOPED_TRACE(sub + " --seed " + seed);
      expect_error(run(sub + " --seed " + seed), 2,
                   std::string("--seed: must be at most 2^64 - 1 = 18446744073709551615, not ") + seed);
    }
  EXPECT_FALSE(std::filesystem::exists(out));
  const CliResult r = run("gen 2 2 -o " + out + " --seed 0xffffffffffffffff");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("seed 18446744073709551615"), std::string::npos) << r.out;
}

// Issue 39: bench --reps 0 was refused with the double range in full (309 digits). Counts
// and times below their least are one short line, exit 2, in every subcommand that times.
TEST_F(CliMessages, RepsWarmupAndTimesBelowTheirLeastSaySoBriefly) {
  const std::string bench = "bench --backend cpu --sizes 8 --kernels cpu_naive";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {bench + " --reps 0", "--reps: must be at least 1, not 0"},
      {bench + " --warmup -1", "--warmup: must be at least 0, not -1"},
      {bench + " --batch 0", "--batch: must be at least 1, not 0"},
      {bench + " --max-seconds 0", "--max-seconds: must be a finite number above 0, not 0"},
      {bench + " --max-run-seconds -2.5", "--max-run-seconds: must be a finite number above 0, not -2.5"},
      {"reduce --bench --reps 0", "--reps: must be at least 1, not 0"},
      {"spmv --bench --warmup -3", "--warmup: must be at least 0, not -3"},
      {"conv1d --bench --reps -1", "--reps: must be at least 1, not -1"}};
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args);
    const CliResult r = run(args);
    expect_error(r, 2, needle);
    EXPECT_LT(r.err.size(), 120u) << r.err;
  }
}

// Issue 39: gen 80 80 --kind pascal --dtype i64 exited 1, as if the computation had failed: a
// request the dtype cannot hold is bad input, exit 2, and nothing is written.
TEST_F(CliMessages, GenOfAnExactKindTheDtypeCannotHoldIsBadInput) {
  for (const char* dtype : {"i64", "i32", "f64", "f16"}) {
    SCOPED_TRACE(dtype);
    expect_error(run("gen 80 80 --kind pascal --dtype " + std::string(dtype) + " -o " + path("L.csv")), 2,
                 std::string("does not fit ") + dtype + " exactly");
  }
  EXPECT_FALSE(std::filesystem::exists(path("L.csv")));
}

// Issue 39: docs/reduce.md and docs/conv1d.md said --bench without a GPU exits 2; every
// command exits 1 then (NoDeviceIsTheSameSentenceAndExitOneEverywhere). The pages say so.
TEST_F(CliMessages, DocsGiveExitOneForNoDevice) {
  const std::regex claim(R"(without (a|one|any) (CUDA )?(device|GPU)[^.]{0,100}?exits? ([0-9]))", std::regex::icase);
  int claims = 0;
  for (const std::string page : {"README.md", "docs/reduce.md", "docs/conv1d.md", "docs/spmv.md", "docs/walks.md",
                                 "docs/tutorial.md"}) {
    std::string text = read_file(std::string(GEMMKIT_SOURCE_DIR) + "/" + page);
    ASSERT_FALSE(text.empty()) << page;
    std::replace(text.begin(), text.end(), '\n', ' ');
    for (auto it = std::sregex_iterator(text.begin(), text.end(), claim); it != std::sregex_iterator(); ++it) {
      ++claims;
      EXPECT_EQ((*it)[4].str(), "1") << page << ": " << it->str();
    }
  }
  EXPECT_GE(claims, 4);  // reduce, conv1d, spmv and the tutorial at least
}

// A size that cannot run (here: operands of 400 TB) loses nothing that finished: the table,
// JSON and CSV keep the smaller size, the failure is reported per kernel, and the run exits 1.
TEST_F(CliMessages, BenchKeepsFinishedSizesWhenALaterOneFails) {
  const std::string json = path("r.json"), csv = path("r.csv");
  const CliResult r = run("bench --backend cpu --kernels cpu_naive --sizes 16,10000000 --reps 1 "
                          "--warmup 0 --json " + json + " --csv " + csv);
  expect_error(r, 1, "2 of 4 runs failed");
  EXPECT_NE(r.err.find("a 10000000x10000000 f32 matrix needs "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("cpu_naive                16x16x16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10000000x10000000x10000000 failed: a 10000000x10000000 f32 matrix needs"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(j["rows"].size(), 4u);
  int finished = 0, failed = 0;
  for (const auto& row : j["rows"]) {
    if (row["m"] == 16) {
      ++finished;
      EXPECT_FALSE(row["failed"].get<bool>());
      EXPECT_TRUE(row["passed"].get<bool>());
      EXPECT_GT(row["gflops"].get<double>(), 0);
    } else {
      ++failed;
      EXPECT_TRUE(row["failed"].get<bool>());
      EXPECT_FALSE(row["passed"].get<bool>());
    }
  }
  EXPECT_EQ(finished, 2);  // cpu_naive and the reference, cpu_openblas
  EXPECT_EQ(failed, 2);
  EXPECT_NE(read_file(csv).find("cpu_naive,cpu,f32,16,16,16,1,"), std::string::npos);
}

// The time limit holds at the first size too: a slow kernel's rate is estimated on smaller
// shapes first, so cpu_naive at 1024^3 (over a second here) is skipped, not run.
TEST_F(CliMessages, BenchHonoursTheRunLimitFromTheFirstSize) {
  const CliResult r = run("bench --backend cpu --kernels cpu_naive --sizes 1024 --reps 1 --warmup 0 "
                          "--max-run-seconds 0.01 --json " + path("r.json"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cpu_naive                1024x1024x1024   skipped: predicted"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(--max-run-seconds 0.01 s)"), std::string::npos) << r.out;
}

// Sizes from a file reach 2^63: an out-of-memory error with the figures, never "internal:
// cannot create std::vector".
TEST_F(CliMessages, SpmvOnHugeSizesSaysHowMuchMemory) {
  write_file("huge.mtx", "%%MatrixMarket matrix coordinate real general\n9223372036854775807 2 1\n1 1 1.0\n");
  write_file("tall.mtx", "%%MatrixMarket matrix coordinate real general\n100000000000 2 1\n1 1 1.0\n");
  for (const char* name : {"huge.mtx", "tall.mtx"}) {
    const CliResult r = run("spmv " + path(name) + " " + path("x.csv") + " --backend cpu -o " + path("y.npy"));
    expect_error(r, 1, std::string(name) + "': a CSR matrix of ");
    EXPECT_NE(r.err.find("GB of host memory; this machine has"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
  }
  expect_error(run("spmv " + path("huge.mtx") + " " + path("x.csv")), 1, "9223372036854775807 rows");
  expect_error(run("reduce --bench --n -1"), 2, "--n: must be a non-negative integer");
  EXPECT_FALSE(std::filesystem::exists(path("y.npy")));
}

// Every command that converts what it read warns, naming the file and the first position,
// when integers are rounded (2^24 + 1 is not an f32): reduce, conv1d and spmv as multiply.
TEST_F(CliMessages, RoundedIntegersAreReportedByEveryCommand) {
  write_file("big.csv", "16777217\n1\n");
  write_file("mask.csv", "1\n");
  write_file("one.mtx", "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 1.0\n1 2 1.0\n");
  const std::string warning =
      "gemmkit: warning: 1 integers of '" + path("big.csv") +
      "' are not exact in f32 and were rounded, the first at row 1, column 1: 16777217 became 16777216";
  for (const std::string& args :
       {"reduce " + path("big.csv") + " --op sum --dtype f32",
        "conv1d " + path("big.csv") + " " + path("mask.csv") + " -o " + path("y.csv") + " --dtype f32",
        "spmv " + path("one.mtx") + " " + path("big.csv") + " -o " + path("y.csv") + " --dtype f32"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_NE(r.err.find(warning), std::string::npos) << args << ": " << r.err;
  }
}

// The benchmark engine (gemmkit/bench.hpp) on the CPU backend, and the result schema every
// --json shares (gemmkit/run_meta.hpp).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "gemmkit/run_meta.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

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
  r = run("device --json");
  expect_meta(nlohmann::json::parse(r.out), "device");
}

}  // namespace
}  // namespace gemmkit

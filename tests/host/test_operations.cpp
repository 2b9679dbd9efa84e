// The device API of reduce, spmv and conv1d on the CPU context (host memory, run on the
// calling thread), the one registry form of every operation, and the catalogue of every operation's kernels
// (`gemmkit list`, `list --json -`, `list --operation`).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemmkit/device.hpp"
#include "gemmkit/catalogue.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/run_meta.hpp"
#include "gemmkit/sparse.hpp"
#include "host/cli_test_support.hpp"
#include "host/io_test_support.hpp"

namespace gemmkit {
namespace {

using test::CliResult;
using test::CliTest;

template <class F>
void expect_usage_error(F&& f, const std::string& part) {
  test::expect_error(std::forward<F>(f), ErrorCategory::usage, part);
}

// ---- the registry form -----------------------------------------------------------------

struct ToyProblem {
  DType dtype = DType::f32;
  int size = 0;
};

Kernel<ToyProblem> toy(std::string name, Backend backend, int priority, int max_size) {
  Kernel<ToyProblem> e;
  e.name = std::move(name);
  e.backend = backend;
  e.dtypes = {DType::f32};
  e.auto_priority = priority;
  e.precondition = [max_size](const ToyProblem& p) -> std::optional<std::string> {
    if (p.size > max_size) return "too big";
    return std::nullopt;
  };
  e.run = [](const ToyProblem&, const KernelLaunch&) {};
  return e;
}

TEST(Registry, AutoTakesTheHighestPriorityThatAccepts) {
  Registry<ToyProblem> r("toy");
  r.add(toy("slow", Backend::cpu, 1, 1000));
  r.add(toy("fast", Backend::cpu, 5, 10));
  r.add(toy("never", Backend::cpu, 0, 1000));
  r.add(toy("gpu", Backend::cuda, 9, 1000));
  Context cpu(Backend::cpu);
  EXPECT_EQ(r.choose(cpu, {DType::f32, 5}, "auto").name, "fast");
  EXPECT_EQ(r.choose(cpu, {DType::f32, 50}, "").name, "slow");  // fast refuses; never is never auto
  EXPECT_EQ(r.choose(cpu, {DType::f32, 50}, "never").name, "never");
  EXPECT_THROW(r.choose(cpu, {DType::f64, 5}, "auto"), Error);  // no kernel takes f64
  try {
    r.choose(cpu, {DType::f32, 50}, "fast");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("too big"), std::string::npos) << e.what();
  }
  try {
    r.choose(cpu, {DType::f32, 5}, "gpu");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda backend"), std::string::npos) << e.what();
  }
  try {
    r.get("nope");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("auto, slow, fast, never, gpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(r.add(toy("fast", Backend::cuda, 1, 1)), Error);  // names are unique
}

// ---- the device API on the CPU context -------------------------------------------------

TEST(DeviceApiOnCpu, ReduceWritesTheResultAndNeedsNoWorkspace) {
  Context ctx(Backend::cpu);
  const std::vector<double> x = {3.5, -1.25, 8.0, 0.5, -7.0};
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max, ReduceOp::norm2}) {
    double result = -99;
    const ReduceKernel& ran = reduce(ctx, x.data(), x.size(), op, &result, nullptr);
    EXPECT_EQ(ran.name, "cpu_reference");
    EXPECT_EQ(result, reduce_cpu(x.data(), x.size(), op)) << reduce_op_name(op);
  }
  float result = -1;
  const std::vector<float> xf = {1.5f, 2.25f};
  reduce(ctx, xf.data(), xf.size(), ReduceOp::sum, &result, nullptr, "cpu_reference");
  EXPECT_EQ(result, 3.75f);
  EXPECT_EQ(reduce_workspace_bytes(ctx, 1000, DType::f32, ReduceOp::sum), 0u);
}

TEST(DeviceApiOnCpu, ReduceRefusesGpuKernelsNullPointersAndOtherDtypes) {
  Context ctx(Backend::cpu);
  const std::vector<float> x = {1, 2, 3};
  float result = 0;
  // A CUDA rung on the CPU's context; without the CUDA backend the build has none.
  expect_usage_error([&] { reduce(ctx, x.data(), x.size(), ReduceOp::sum, &result, nullptr, "warp_shuffle"); },
                     cuda_compiled() ? "runs on the cuda backend" : "built without the CUDA backend");
  expect_usage_error([&] { reduce(ctx, x.data(), x.size(), ReduceOp::sum, &result, nullptr, "fastest"); },
                     "unknown kernel 'fastest'");
  expect_usage_error([&] { reduce<float>(ctx, nullptr, 3, ReduceOp::sum, &result, nullptr); }, "null");
  const std::int32_t ints[2] = {1, 2};
  ReduceProblem p{DType::i32, ReduceOp::sum, ints, 2, &result};
  expect_usage_error([&] { reduce(ctx, p, nullptr); }, "i32");
}

TEST(DeviceApiOnCpu, Conv1dMatchesTheReference) {
  Context ctx(Backend::cpu);
  const std::vector<double> x = {1, -2, 3, 0.5, 4, -1, 2}, mask = {0.5, -1, 2, 0.25};
  std::vector<double> y(x.size(), -99), ref(x.size());
  const Conv1dKernel& ran = conv1d(ctx, x.data(), 7, mask.data(), 4, y.data(), nullptr);
  EXPECT_EQ(ran.name, "cpu_reference");
  conv1d_reference(x.data(), 7, mask.data(), 4, ref.data());
  EXPECT_EQ(y, ref);
  EXPECT_NE(y[0], 0.0);
  EXPECT_EQ(conv1d_workspace_bytes(ctx, DType::f64, 7, 4), 0u);
  expect_usage_error([&] { conv1d(ctx, x.data(), 7, mask.data(), 4, y.data(), nullptr, "tiled"); },
                     cuda_compiled() ? "runs on the cuda backend" : "built without the CUDA backend");
  expect_usage_error([&] { conv1d(ctx, x.data(), 7, mask.data(), 0, y.data(), nullptr); }, "empty");
}

template <class Offset>
void spmv_on_cpu_context(bool wide) {
  Context ctx(Backend::cpu);
  // [[1 0 2] [0 0 0] [-3 4 0.5]]
  const std::vector<Offset> offsets = {0, 2, 2, 5};
  const std::vector<std::int32_t> cols = {0, 2, 0, 1, 2};
  const std::vector<double> values = {1, 2, -3, 4, 0.5}, x = {2, -1, 4};
  std::vector<double> y(3, -99);
  const CsrDeviceView<double> a{3, 3, 5, offsets.data(), wide, cols.data(), values.data()};
  const SpmvKernel& ran = spmv(ctx, a, x.data(), y.data(), nullptr);
  EXPECT_EQ(ran.name, "cpu_reference");
  EXPECT_EQ(y, (std::vector<double>{10, 0, -8}));
  EXPECT_EQ(spmv_workspace_bytes(ctx, make_spmv_problem(a, x.data(), y.data())), 0u);
}

TEST(DeviceApiOnCpu, SpmvWithNarrowAndWideOffsets) {
  spmv_on_cpu_context<std::int32_t>(false);
  spmv_on_cpu_context<std::int64_t>(true);
}

TEST(DeviceApiOnCpu, SpmvRefusesInconsistentProblems) {
  Context ctx(Backend::cpu);
  SpmvProblem p;
  p.rows = 2;
  p.cols = 2;
  p.nnz = 1;
  expect_usage_error([&] { spmv(ctx, p, nullptr); }, "null");
  p.rows = -1;
  expect_usage_error([&] { spmv(ctx, p, nullptr); }, "negative");
  p.rows = 2;
  p.nnz = std::int64_t(1) << 32;
  expect_usage_error([&] { spmv(ctx, p, nullptr); }, "64-bit row offsets");
}

// ---- the catalogue ---------------------------------------------------------------------

TEST(Catalogue, EveryOperationWithUniqueNames) {
  const std::vector<CatalogueEntry> all = catalogue();
  std::map<std::string, std::set<std::string>> names;
  std::vector<std::string> order;
  for (const auto& [operation, e, gemm] : all) {
    EXPECT_TRUE(names[std::string(operation)].insert(e->name).second) << operation << " lists " << e->name << " twice";
    if (order.empty() || order.back() != operation) order.emplace_back(operation);
    EXPECT_FALSE(e->summary.empty()) << e->name;
    EXPECT_FALSE(e->dtypes.empty()) << e->name;
    EXPECT_EQ(gemm != nullptr, operation == "gemm") << e->name;  // GEMM's traits, for its kernels only
  }
  // Grouped, GEMM first, each operation once.
  EXPECT_EQ(order, (std::vector<std::string>{"gemm", "reduce", "spmv", "conv1d", "transpose", "modular", "walks"}));
  EXPECT_TRUE(names["gemm"].count("cpu_blocked"));
  // The CUDA parts register their entries only in a build that compiles them.
  const bool cuda = cuda_compiled();
  EXPECT_EQ(names["gemm"].count("cuda_naive") == 1, cuda);
  EXPECT_EQ(names["reduce"].count("vec16_two_pass") && names["reduce"].count("cub"), cuda);
  EXPECT_EQ(names["spmv"].count("merge_path") && names["spmv"].count("cusparse"), cuda);
  EXPECT_EQ(names["conv1d"].count("constant_mask") && names["conv1d"].count("streaming"), cuda);
  EXPECT_EQ(names["modular"].count("cuda_modular_fused") && names["modular"].count("cuda_modular_cublas"), cuda);
  EXPECT_EQ(names["walks"].count("cuda_dense_int8") == 1, cuda);
  EXPECT_TRUE(names["walks"].count("cpu_sparse") && names["walks"].count("cpu_dense"));
  for (const char* op : {"reduce", "spmv", "conv1d", "transpose", "modular"})
    EXPECT_TRUE(names[op].count("cpu_reference")) << op;

  const auto spmv_only = catalogue("spmv");
  EXPECT_EQ(spmv_only.size(), names["spmv"].size());
  for (const auto& e : spmv_only) EXPECT_EQ(e.operation, "spmv");
  expect_usage_error([] { catalogue("fft"); }, "gemm, reduce, spmv, conv1d, transpose, modular, walks");
}

class ListCli : public CliTest {};

TEST_F(ListCli, JsonListsEveryOperationsKernels) {
  const CliResult r = run("list --json -");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("meta").at("schema_version"), kResultSchemaVersion);
  const auto& j = doc.at("rows");
  ASSERT_TRUE(j.is_array());
  std::map<std::string, int> per_operation;
  for (const auto& e : j) {
    ++per_operation[e.at("operation").get<std::string>()];
    for (const char* key : {"name", "backend", "rung", "role", "dtypes", "min_compute_capability", "auto",
                            "batched", "available", "summary"})
      EXPECT_TRUE(e.contains(key)) << key;
  }
  for (const auto& [op, names] : std::map<std::string, std::size_t>{
           {"gemm", catalogue("gemm").size()}, {"reduce", catalogue("reduce").size()},
           {"spmv", catalogue("spmv").size()}, {"conv1d", catalogue("conv1d").size()}})
    EXPECT_EQ(std::size_t(per_operation[op]), names) << op;
  EXPECT_EQ(j.size(), catalogue().size());
}

TEST_F(ListCli, TableIsGroupedAndFilteredByOperation) {
  CliResult r = run("list");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto gemm = r.out.find("gemm\n"), reduce_at = r.out.find("\nreduce\n"),
             spmv_at = r.out.find("\nspmv\n"), conv_at = r.out.find("\nconv1d\n");
  ASSERT_NE(gemm, std::string::npos) << r.out;
  ASSERT_NE(conv_at, std::string::npos) << r.out;
  EXPECT_LT(gemm, reduce_at);
  EXPECT_LT(reduce_at, spmv_at);
  EXPECT_LT(spmv_at, conv_at);
  EXPECT_EQ(r.out.find("merge_path") != std::string::npos, cuda_compiled());

  r = run("list --operation conv1d --json -");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out).at("rows");
  ASSERT_EQ(j.size(), catalogue("conv1d").size());
  for (const auto& e : j) EXPECT_EQ(e.at("operation"), "conv1d");
  expect_error(run("list --operation fft"), 2, "unknown operation 'fft'");
}

}  // namespace
}  // namespace gemmkit

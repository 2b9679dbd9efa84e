// gemmkit explain without a GPU: launch geometry against hand-computed numbers, --thread
// answers against the kernels' index formulas written out here, the occupancy calculator
// against worked cases, every CUDA entry's plans against the records made at build time.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gemmkit/catalogue.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/registry.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

#define SKIP_WITHOUT_CUDA_ENTRIES()                                                   \
  if (!gemm_registry().find("cuda_naive")) GTEST_SKIP() << "no CUDA kernels in this build"

Explanation recorded(const std::string& kernel, std::int64_t m, std::int64_t n, std::int64_t k,
                     std::optional<DType> dtype = std::nullopt) {
  ExplainRequest r;
  r.kernel = kernel, r.m = m, r.n = n, r.k = k, r.dtype = dtype;
  r.live = false;
  r.recorded_path = GEMMKIT_KERNEL_RESOURCES_PATH;
  return explain(r);
}

Explanation thread_of(const std::string& kernel, std::int64_t m, std::int64_t n, std::int64_t k, Dim3 b, Dim3 t) {
  ExplainRequest r;
  r.kernel = kernel, r.m = m, r.n = n, r.k = k;
  r.block_idx = b, r.thread_idx = t;
  r.live = false;
  r.recorded_path = GEMMKIT_KERNEL_RESOURCES_PATH;
  return explain(r);
}

void expect_dims(const Dim3& d, std::int64_t x, std::int64_t y, std::int64_t z) {
  EXPECT_EQ(d.x, x);
  EXPECT_EQ(d.y, y);
  EXPECT_EQ(d.z, z);
}

// Every element the lattices name, as (row, column) pairs.
std::vector<std::pair<std::int64_t, std::int64_t>> cells(const std::vector<CElements>& lattices) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const CElements& e : lattices)
    for (std::int64_t i = 0; i < e.rows; ++i)
      for (std::int64_t j = 0; j < e.cols; ++j) out.emplace_back(e.row + i * e.row_step, e.col + j * e.col_step);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Explain, NormalizedNamesAgreeBetweenDemangledAndPrettyPrinted) {
  EXPECT_EQ(normalized_kernel_name("void gemmkit::cuda::kernels::naive_kernel<false, false, float>("
                                   "gemmkit::cuda::kernels::GemmArgs<float>)"),
            "naive_kernel<false,false,float>");
  EXPECT_EQ(normalized_kernel_name("const std::string& gemmkit::cuda::kernel_name() [with auto Kernel = "
                                   "gemmkit::cuda::kernels::naive_kernel<false, false, float>; std::string = x]"),
            "naive_kernel<false,false,float>");
  EXPECT_EQ(normalized_kernel_name("void gemmkit::(anonymous namespace)::fill<ns::Cfg<64u, 8>, true>(float*)"),
            "fill<Cfg<64,8>,true>");
  EXPECT_EQ(normalized_kernel_name("void gemmkit::cuda::kernels::transpose<signed char>(signed char const*, long)"),
            "transpose<signed char>");
  // A demangled type that holds the kernel: default template arguments spelled out.
  EXPECT_EQ(normalized_kernel_name("gemmkit::cuda::KernelTag<&(void gemmkit::cuda::kernels::ws<"
                                   "gemmkit::cuda::kernels::Cfg<__half, 2, 4>, false>(CUtensorMap_st))>"),
            "ws<Cfg<__half,2,4>,false>");
}

TEST(Explain, ThreadIdFormulaFollowsTheLaunchShape) {
  EXPECT_NE(thread_id_formula({10, 1, 1}, {256, 1, 1}).find("threadId = blockIdx.x * blockDim.x + threadIdx.x"),
            std::string::npos);
  const std::string two = thread_id_formula({5, 13, 1}, {16, 16, 1});
  EXPECT_NE(two.find("blockId = blockIdx.y * gridDim.x + blockIdx.x"), std::string::npos) << two;
  EXPECT_NE(two.find("threadId = blockId * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x"),
            std::string::npos) << two;
  const std::string three = thread_id_formula({4, 4, 2}, {8, 8, 4});
  EXPECT_NE(three.find("blockIdx.z * (gridDim.x * gridDim.y)"), std::string::npos) << three;
  EXPECT_NE(three.find("threadIdx.z * (blockDim.x * blockDim.y)"), std::string::npos) << three;
}

TEST(Explain, OccupancyOfWorkedCases) {
  const SmLimits l = sm90_limits();
  // 256 threads of 32 registers, no shared memory: 8 blocks fill the SM's 2048 threads, and
  // their 8 x 8 warps x 1024 registers fill the register file too.
  Occupancy o = compute_occupancy({32, 0, 0, ""}, {16, 16, 1}, 0, l);
  EXPECT_EQ(o.by_threads, 8);
  EXPECT_EQ(o.by_registers, 8);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_EQ(o.warps_per_sm, 64);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  // 255 registers: 255 * 32 = 8160 rounds to 8192 a warp, 2 warps per quarter of the SM's
  // 65536: 8 warps, 2 blocks of 128 threads.
  o = compute_occupancy({255, 0, 0, ""}, {128, 1, 1}, 0, l);
  EXPECT_EQ(o.by_registers, 2);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "registers");
  // 100 KiB of dynamic shared memory (+ 1 KiB reserved): two fit in 228 KiB.
  o = compute_occupancy({64, 0, 0, ""}, {128, 1, 1}, 100 * 1024, l);
  EXPECT_EQ(o.smem_per_block, std::size_t(101 * 1024));
  EXPECT_EQ(o.by_smem, 2);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limited_by, "shared memory");
  // Tiny blocks: the 32-blocks-per-SM limit.
  o = compute_occupancy({16, 0, 0, ""}, {32, 1, 1}, 0, l);
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limited_by, "blocks per SM");
  // More shared memory than a block may have: none fit.
  o = compute_occupancy({16, 0, 0, ""}, {32, 1, 1}, 228 * 1024, l);
  EXPECT_EQ(o.blocks_per_sm, 0);
}

TEST(Explain, NaiveCoversA70By200MatrixWith16By16Blocks) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  const Explanation x = recorded("cuda_naive", 70, 200, 64);
  ASSERT_EQ(x.launches.size(), 1u);
  const LaunchExplanation& e = x.launches[0];
  // Rung 3 puts row blocks on x: ceil(70 / 16) = 5 of them, ceil(200 / 16) = 13 column blocks on y.
  expect_dims(e.plan.grid, 5, 13, 1);
  expect_dims(e.plan.block, 16, 16, 1);
  EXPECT_EQ(e.plan.dynamic_smem, 0u);
  EXPECT_EQ(e.plan.kernel, "naive_kernel<false,false,float>");
  ASSERT_TRUE(e.resources_known) << e.note;
  EXPECT_GT(e.resources.registers, 0);
  EXPECT_EQ(e.resources.source, "recorded at build time for sm_90");
  EXPECT_FALSE(x.live);
}

TEST(Explain, ThreadAnswersFollowTheKernelsFormulas) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  // Rung 3: row = blockIdx.x * 16 + threadIdx.y, column = blockIdx.y * 16 + threadIdx.x.
  for (const auto& [bx, by, tx, ty] : {std::array<int, 4>{2, 3, 5, 7}, {0, 0, 0, 0}, {4, 12, 5, 5}}) {
    const Explanation x = thread_of("cuda_naive", 70, 200, 64, {bx, by, 0}, {tx, ty, 0});
    ASSERT_TRUE(x.launches[0].thread);
    const ThreadAnswer& t = *x.launches[0].thread;
    EXPECT_EQ(t.block_id, by * 5 + bx);
    EXPECT_EQ(t.thread_in_block, ty * 16 + tx);
    EXPECT_EQ(t.global_id, (by * 5 + bx) * 256 + ty * 16 + tx);
    const std::int64_t row = bx * 16 + ty, col = by * 16 + tx;
    if (row < 70 && col < 200) {
      ASSERT_EQ(cells(t.elements), (std::vector<std::pair<std::int64_t, std::int64_t>>{{row, col}}));
    } else {
      EXPECT_TRUE(t.elements.empty());
    }
  }
  // Past the bottom edge: row 4 * 16 + 15 = 79 >= 70 writes nothing.
  EXPECT_TRUE(thread_of("cuda_naive", 70, 200, 64, {4, 0, 0}, {0, 15, 0}).launches[0].thread->elements.empty());

  // Rung 1: one row per thread, 64 threads a block.
  const ThreadAnswer row = *thread_of("cuda_row_per_thread", 70, 200, 64, {1, 0, 0}, {3, 0, 0}).launches[0].thread;
  EXPECT_EQ(row.global_id, 67);
  ASSERT_EQ(row.elements.size(), 1u);
  EXPECT_EQ(row.elements[0].row, 67);
  EXPECT_EQ(row.elements[0].cols, 200);

  // Rung 7: a block on a 32x32 tile at (blockIdx.y * 32, blockIdx.x * 32), thread t at (t / 32, t % 32).
  const Explanation c = thread_of("cuda_coalesced", 70, 200, 64, {6, 2, 0}, {100, 0, 0});
  expect_dims(c.launches[0].plan.grid, 7, 3, 1);
  expect_dims(c.launches[0].plan.block, 1024, 1, 1);
  EXPECT_EQ(cells(c.launches[0].thread->elements),
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{2 * 32 + 100 / 32, 6 * 32 + 100 % 32}}));

  // Rung 9: 128x128 tiles, thread t on rows (t / 16) * 8 + 0..7, columns (t % 16) * 8 + 0..7.
  const Explanation b = thread_of("cuda_blocktile_2d", 300, 300, 64, {1, 2, 0}, {37, 0, 0});
  expect_dims(b.launches[0].plan.grid, 3, 3, 1);
  std::vector<std::pair<std::int64_t, std::int64_t>> want;
  for (int r = 0; r < 8; ++r)
    for (int col = 0; col < 8; ++col) {
      const std::int64_t i = 2 * 128 + (37 / 16) * 8 + r, j = 128 + (37 % 16) * 8 + col;
      if (i < 300 && j < 300) want.emplace_back(i, j);
    }
  EXPECT_EQ(cells(b.launches[0].thread->elements), want);

  // Rung 11: four 4x4 sub-tiles, at rows ty * 4 and 64 + ty * 4, columns tx * 4 and 64 + tx * 4.
  const Explanation s = thread_of("cuda_bank_conflict_free", 256, 256, 64, {0, 1, 0}, {18, 0, 0});
  want.clear();
  for (const int r0 : {4, 68})
    for (const int c0 : {8, 72})
      for (int r = 0; r < 4; ++r)
        for (int col = 0; col < 4; ++col) want.emplace_back(128 + r0 + r, c0 + col);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(cells(s.launches[0].thread->elements), want);
}

// The thread-to-element maps of the rungs that write every element of C once: over the
// whole grid, each element of C exactly once and nothing outside.
TEST(Explain, EveryElementOfCHasExactlyOneThread) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  for (const char* kernel : {"cuda_row_per_thread", "cuda_col_per_thread", "cuda_naive", "cuda_tiled8",
                             "cuda_tiled_unrolled", "cuda_coalesced", "cuda_blocktile_1d", "cuda_blocktile_2d",
                             "cuda_vectorized", "cuda_bank_conflict_free", "cuda_warptile", "cuda_cp_async",
                             "cuda_tuned_64x64"}) {
    const std::int64_t m = 133, n = 70;
    const Explanation x = recorded(kernel, m, n, 16);
    ASSERT_EQ(x.launches.size(), 1u) << kernel;
    const LaunchPlan& p = x.launches[0].plan;
    ASSERT_TRUE(p.elements) << kernel;
    std::vector<int> hits(std::size_t(m * n), 0);
    for (std::int64_t bz = 0; bz < p.grid.z; ++bz)
      for (std::int64_t by = 0; by < p.grid.y; ++by)
        for (std::int64_t bx = 0; bx < p.grid.x; ++bx)
          for (std::int64_t ty = 0; ty < p.block.y; ++ty)
            for (std::int64_t tx = 0; tx < p.block.x; ++tx)
              for (const auto& [i, j] : cells(p.elements({bx, by, bz}, {tx, ty, 0}))) {
                ASSERT_TRUE(i >= 0 && i < m && j >= 0 && j < n) << kernel << ": " << i << "," << j;
                ++hits[std::size_t(i * n + j)];
              }
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), m * n) << kernel;
  }
}

// Every CUDA entry with a launch description explains a few shapes from the records alone,
// and its occupancy figures keep to the limits they were computed from.
TEST(Explain, EveryCudaEntryExplainsFromTheRecords) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  int explained = 0;
  for (const KernelEntry& entry : gemm_registry().entries()) {
    if (entry.backend != Backend::cuda || entry.role != KernelRole::ladder) continue;
    // The exact residue GEMM picks its launches from the data (the operands' magnitudes),
    // and so does the Ozaki emulation (its moduli from the operands' spread).
    if (entry.name == "cuda_exact_residues" || entry.name.rfind("cuda_ozaki_", 0) == 0) continue;
    ASSERT_TRUE(entry.launches) << entry.name << " has no launch description";
    for (const DType dtype : entry.dtypes)
      for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{1, 1, 1}, {70, 200, 64}, {1024, 1024, 1024},
                                    {4097, 33, 3000}, {8192, 8192, 8192}}) {
        Explanation x;
        try {
          x = recorded(entry.name, m, n, k, dtype);
        } catch (const Error& e) {
          // A problem the entry refuses (its precondition) is said so; nothing else may fail.
          EXPECT_NE(std::string(e.what()).find("does not run"), std::string::npos)
              << entry.name << " " << dtype_name(dtype) << " " << m << "x" << n << "x" << k << ": " << e.what();
          continue;
        }
        ++explained;
        const SmLimits& l = x.limits;
        ASSERT_FALSE(x.launches.empty()) << entry.name;
        for (const LaunchExplanation& e : x.launches) {
          ASSERT_TRUE(e.resources_known) << entry.name << ": " << e.note;
          const Occupancy& o = e.occupancy;
          const std::int64_t threads = e.plan.block.count(), warps = (threads + 31) / 32;
          EXPECT_GE(o.blocks_per_sm, 1) << entry.name << " " << e.plan.kernel;
          EXPECT_EQ(o.blocks_per_sm, std::min({o.by_threads, o.by_registers, o.by_smem, o.by_blocks}));
          EXPECT_LE(o.blocks_per_sm * threads, l.max_threads_per_sm);
          EXPECT_LE(o.blocks_per_sm, l.max_blocks_per_sm);
          EXPECT_LE(std::size_t(o.blocks_per_sm) * o.smem_per_block, l.smem_per_sm);
          EXPECT_GE(o.smem_per_block, e.static_smem + e.plan.dynamic_smem + l.smem_reserved_per_block);
          EXPECT_LE(std::int64_t(o.blocks_per_sm) * o.registers_per_block, l.registers_per_sm);
          EXPECT_EQ(o.warps_per_sm, o.blocks_per_sm * warps);
          EXPECT_GE(e.plan.grid.count(), 1);
          EXPECT_LE(threads, l.max_threads_per_block);
          EXPECT_FALSE(e.plan.mapping.empty()) << entry.name;
          EXPECT_FALSE(e.thread_id_formula.empty());
        }
      }
  }
  EXPECT_GT(explained, 20);
}

TEST(Explain, ClearErrors) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  const auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { recorded("cuda_nope", 8, 8, 8); }).find("cuda_naive"), std::string::npos);
  EXPECT_NE(message([] { recorded("cuda_vectorized", 8, 8, 8, DType::f64); }).find("does not take f64"),
            std::string::npos);
  EXPECT_NE(message([] { recorded("cpu_naive", 8, 8, 8); }).find("CPU kernel"), std::string::npos);
  EXPECT_NE(message([] { recorded("cuda_cublas", 8, 8, 8); }).find("vendor library"), std::string::npos);
  EXPECT_NE(message([] { recorded("cuda_naive", 0, 8, 8); }).find("at least 1"), std::string::npos);
  EXPECT_NE(message([] { thread_of("cuda_naive", 70, 200, 64, {5, 0, 0}, {0, 0, 0}); }).find("outside every launch"),
            std::string::npos);
}

Explanation recorded_op(const std::string& op, const std::string& kernel, std::int64_t m, std::int64_t n = 1,
                        std::int64_t k = 1) {
  ExplainRequest r;
  r.kernel = kernel, r.m = m, r.n = n, r.k = k;
  r.live = false;
  r.recorded_path = GEMMKIT_KERNEL_RESOURCES_PATH;
  return explain_operation(op, r);
}

TEST(Explain, PrimitivesLaunchesFromTheirLaunchers) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  // Rung 4 of reduce: 4 blocks per SM (132 SMs: 528) of 256 threads over the input, then one
  // block of 512 over their values.
  Explanation x = recorded_op("reduce", "reduce4_unrolled", 1000000);
  ASSERT_EQ(x.launches.size(), 2u);
  expect_dims(x.launches[0].plan.grid, 4 * 132, 1, 1);
  expect_dims(x.launches[0].plan.block, 256, 1, 1);
  expect_dims(x.launches[1].plan.grid, 1, 1, 1);
  expect_dims(x.launches[1].plan.block, 512, 1, 1);
  // Rung 0 folds halves: ceil(log2(1000)) = 10 launches, the first of ceil(500 / 256) = 2 blocks.
  x = recorded_op("reduce", "reduce0_fold", 1000);
  EXPECT_EQ(x.launches.size(), 10u);
  expect_dims(x.launches[0].plan.grid, 2, 1, 1);
  // SpMV: a thread per row, a warp per row, the merge path's three launches.
  x = recorded_op("spmv", "scalar", 1000, 1000, 5000);
  ASSERT_EQ(x.launches.size(), 1u);
  expect_dims(x.launches[0].plan.grid, 4, 1, 1);
  x = recorded_op("spmv", "vector", 1000, 1000, 5000);
  expect_dims(x.launches[0].plan.grid, 1000 * 32 / 256, 1, 1);
  x = recorded_op("spmv", "merge_path", 1000, 1000, 5000);
  ASSERT_EQ(x.launches.size(), 3u);
  expect_dims(x.launches[1].plan.grid, (1000 + 5000 + 256 * 9 - 1) / (256 * 9), 1, 1);
  // conv1d basic: the taps into global memory, then one output per thread.
  x = recorded_op("conv1d", "basic", 1000, 5);
  ASSERT_EQ(x.launches.size(), 2u);
  expect_dims(x.launches[1].plan.grid, 4, 1, 1);
  for (const char* op : {"reduce", "spmv", "conv1d"})
    for (const CatalogueEntry& c : catalogue(op)) {
      const KernelInfo& e = *c.kernel;
      if (e.backend != Backend::cuda || e.role != KernelRole::ladder) continue;
      const Explanation y = recorded_op(op, e.name, 100000, std::string(op) == "conv1d" ? 7 : 1000, 50000);
      ASSERT_FALSE(y.launches.empty()) << e.name;
      for (const LaunchExplanation& l : y.launches) EXPECT_TRUE(l.resources_known) << e.name << ": " << l.note;
    }
}

class ExplainCli : public test::CliTest {};

TEST_F(ExplainCli, PrintsTheWorkedExampleAndJson) {
  SKIP_WITHOUT_CUDA_ENTRIES();
  test::CliResult r = run("explain cuda_naive --shape 70x200x64 --thread 2,3,5,7 --recorded");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("grid      5 x 13 x 1 blocks (65)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threadId = 17 * 256 + 117 = 4469"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("writes C rows 39 x columns 53 (1 element)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recorded at build time for sm_90"), std::string::npos) << r.out;
  r = run("explain cuda_tiled16 --shape 70x200x64 --thread 0,0,1,2 --json - --recorded");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "cuda_tiled16");
  EXPECT_EQ(j["launches"][0]["grid"], nlohmann::json({5, 13, 1}));
  EXPECT_EQ(j["launches"][0]["thread"]["elements"][0]["row"], 2);
  EXPECT_EQ(j["launches"][0]["thread"]["elements"][0]["col"], 1);
  EXPECT_GT(j["launches"][0]["registers_per_thread"].get<int>(), 0);
  r = run("explain warp_shuffle --shape 1000000 --recorded");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("problem: reduce 1000000 values"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch 2 of 2"), std::string::npos) << r.out;
}

TEST_F(ExplainCli, BadInputIsOneLineExit2) {
  expect_error(run("explain cuda_naive --shape 70x200"), 2, "--shape");
  expect_error(run("explain cuda_naive --shape 8x8x8 --thread 1,2,3"), 2, "--thread");
  expect_error(run("explain cuda_naive --shape 8x8x8 --dtype f7"), 2, "dtype");
  expect_error(run("explain no_such_kernel --shape 8x8x8"), 2, "no_such_kernel");
  // A GPU rung of reduce: in a build without CUDA, no kernel of that name at all.
  expect_error(run("explain reduce4_unrolled --shape 8x8"), 2, cuda_compiled() ? "N (values)" : "reduce4_unrolled");
}

}  // namespace
}  // namespace gemmkit

// Host-side logic of the CUDA backend that CI can test without a GPU: the ladder's registry
// entries, their preconditions, and the autotune table.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <set>
#include <tuple>

#include "ops/gemm/auto_table.hpp"
#include "ops/gemm/cuda/simt/autotune_table.hpp"
#include "gemmkit/registry.hpp"

using namespace gemmkit;

namespace {

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.lda = k, p.ldb = n, p.ldc = n;
  return p;
}

}  // namespace

TEST(AutotuneTable, PicksTheConfigurationMeasuredBestPerShape) {
  using cuda::TunedConfig;
  using cuda::choose_tuned_config;
  // The shapes the table was tuned on (src/ops/gemm/cuda/simt/autotune_table.hpp names the run).
  EXPECT_EQ(choose_tuned_config(shape(8192, 8192, 8192)), TunedConfig::tile_64x128);
  EXPECT_EQ(choose_tuned_config(shape(4096, 4096, 4096)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(4000, 4000, 4000)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(8192, 1024, 8192)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(1024, 8192, 256)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(2048, 2048, 2048)), TunedConfig::tile_128x256);
  EXPECT_EQ(choose_tuned_config(shape(1024, 1024, 1024)), TunedConfig::tile_64x128);
  EXPECT_EQ(choose_tuned_config(shape(256, 256, 256)), TunedConfig::tile_64x64);
  EXPECT_EQ(choose_tuned_config(shape(1, 1, 1)), TunedConfig::tile_64x64);
}

#ifdef GEMMKIT_HAVE_CUDA

TEST(CudaRegistry, TheLadderHasEveryRungInOrder) {
  std::set<int> rungs;
  std::set<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    EXPECT_TRUE(names.insert(e->name).second) << e->name;
    EXPECT_EQ(e->name.rfind("cuda_", 0), 0u) << e->name;
    EXPECT_FALSE(e->summary.empty()) << e->name;
    EXPECT_GE(e->min_compute_capability, 50) << e->name;
    // SIMT rungs take f32; tensor-core rungs (16 up, but for rung 23's split-K over the
    // SIMT rung 14) take bf16 and need sm_80 at least.
    if (e->name == "cuda_exact_residues") {  // integers only: the exact GEMM by residues
      EXPECT_TRUE(e->supports(DType::i32) && e->supports(DType::i64)) << e->name;
    } else if (e->name.rfind("cuda_ozaki_", 0) == 0) {  // one float dtype each, on int8 tensor cores
      EXPECT_NE(e->supports(DType::f64), e->supports(DType::f32)) << e->name;
      EXPECT_GE(e->min_compute_capability, 75) << e->name;
    } else if (e->role == KernelRole::ladder && e->supports(DType::i8)) {  // rung 24: int8 wgmma
      EXPECT_GE(e->min_compute_capability, 90) << e->name;
    } else if (e->role == KernelRole::ladder && e->rung >= 16 && e->name != "cuda_split_k") {
      EXPECT_TRUE(e->supports(DType::bf16)) << e->name;
      EXPECT_GE(e->min_compute_capability, 80) << e->name;
    } else if (e->role == KernelRole::ladder) {
      EXPECT_TRUE(e->supports(DType::f32)) << e->name;
    }
    if (e->role == KernelRole::ladder) rungs.insert(e->rung);
  }
  for (int r = 1; r <= 19; ++r) EXPECT_TRUE(rungs.count(r)) << "rung " << r << " is missing";
  // TF32 results are judged by the TF32 tolerance; everything else by its dtype's.
  const KernelEntry* tf32 = gemm_registry().find("cuda_cublas_tf32");
  ASSERT_NE(tf32, nullptr);
  EXPECT_EQ(tf32->accuracy, DType::tf32);
  // auto never answers an f32 problem with it (on any device), but takes it for a tf32 one
  // that no rung of ours accepts (rows not on 16 bytes) where the priorities decide (cc 8.0;
  // on 9.0 the tuning table may name a rung of ours that pads such rows).
  for (const int cc : {80, 90}) {
    GemmProblem p = shape(65, 33, 17);
    const AutoChoice f32 = explain_auto_choice(Backend::cuda, cc, p);
    ASSERT_NE(f32.chosen, nullptr);
    EXPECT_FALSE(gemm_registry().get(f32.chosen->name).accuracy.has_value()) << f32.chosen->name << " for f32 at cc " << cc;
    p.dtype = DType::tf32;
    const AutoChoice t = explain_auto_choice(Backend::cuda, cc, p);
    ASSERT_NE(t.chosen, nullptr);
    EXPECT_TRUE(t.chosen->supports(DType::tf32)) << t.chosen->name;
    if (cc == 80) {
      EXPECT_EQ(t.chosen->name, "cuda_cublas_tf32");
    }
  }
}

TEST(CudaRegistry, AutoForInt8FollowsTheMeasuredTable) {
  // On the H200 (bench/results/2026-11-29_h200_78f9f2e/suite_i8): cuBLAS INT8 is fastest
  // on skinny products (rung 24: 25% at 1 x 16384 x 16384); in its own K-major "TN" form the
  // two are level at 4096^3 with B^T (rung 24 100.4% in that run, so the table takes it);
  // every other layout runs cuBLAS at an eighth of its TN speed, where rung 24 (which
  // transposes into K-major form first) is 6-8 times faster; and where cuBLAS refuses (rows
  // off 4 bytes) only rung 24 runs. Skinny products in TN form
  // (bench/results/2026-11-29_h200_290ea9e): cuBLAS, twice rung 24's speed at 4096 x 128 x
  // 14336, except where rung 24 measured faster (256 x 8192 x 8192: 139%).
  struct Case {
    std::int64_t m, n, k;
    bool trans_b;
    const char* expected;
  };
  for (const Case& c : {Case{1, 16384, 16384, false, "cuda_cublas_i8"}, Case{4096, 4096, 4096, true, "cuda_wgmma_i8"},
                        Case{4096, 4096, 4096, false, "cuda_wgmma_i8"}, Case{999, 1001, 1003, false, "cuda_wgmma_i8"},
                        Case{4096, 128, 14336, true, "cuda_cublas_i8"}, Case{4096, 128, 14336, false, "cuda_wgmma_i8"},
                        Case{256, 8192, 8192, true, "cuda_wgmma_i8"}}) {
    GemmProblem p = shape(c.m, c.n, c.k);
    p.dtype = DType::i8, p.out_dtype = DType::i32;
    p.trans_b = c.trans_b;
    if (c.trans_b) p.ldb = c.k;
    const AutoChoice choice = explain_auto_choice(Backend::cuda, 90, p);
    ASSERT_NE(choice.chosen, nullptr);
    EXPECT_EQ(choice.chosen->name, c.expected) << p.shape_string();
  }
}

TEST(CudaRegistry, PreconditionsAcceptOrdinaryShapesAndRejectHugeOnes) {
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    if (e->role != KernelRole::ladder) continue;
    // Rung 20 takes skinny products only (M or N <= 64).
    GemmProblem ok = shape(e->name.rfind("cuda_skinny", 0) == 0 ? 64 : 4097, 3001, 2049);
    ok.dtype = e->dtypes.front();
    ok.lda = ok.ldb = ok.ldc = 4104;  // rows on 16-byte boundaries for the TMA rungs
    if (e->name == "cuda_wgmma_padded") ok.lda = 4099;  // it takes only what TMA cannot read
    EXPECT_EQ(e->rejects(ok), std::nullopt) << e->name;
    // Sizes past the kernels' 32-bit index range are declined, not run wrongly.
    GemmProblem huge = shape(std::int64_t(INT_MAX) + 1, 1, 1);
    huge.lda = 1, huge.ldb = 1, huge.ldc = 1;
    EXPECT_NE(e->rejects(huge), std::nullopt) << e->name;
  }
}

namespace {

// A 16-byte aligned bf16 problem with rows of whole 16 bytes, as the TMA rungs want it.
GemmProblem aligned_bf16(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p = shape(m, n, k);
  p.dtype = DType::bf16;
  p.lda = (k + 7) / 8 * 8, p.ldb = (n + 7) / 8 * 8, p.ldc = n;
  return p;
}

}  // namespace

TEST(CudaRegistry, HopperRungsDeclareWhatTmaAndWgmmaNeed) {
  for (const char* name : {"cuda_wgmma_tma", "cuda_wgmma_ws"}) {
    const KernelEntry& e = gemm_registry().get(name);
    EXPECT_EQ(e.min_compute_capability, 90) << name;
    EXPECT_EQ(e.rejects(aligned_bf16(4096, 4096, 4096)), std::nullopt) << name;
    EXPECT_EQ(e.rejects(aligned_bf16(1, 1, 1)), std::nullopt) << name;  // lda 8, ldb 8
    GemmProblem odd = aligned_bf16(100, 100, 100);
    odd.lda = 101;  // rows of A no longer on 16-byte boundaries
    EXPECT_NE(e.rejects(odd), std::nullopt) << name;
    GemmProblem shifted = aligned_bf16(64, 64, 64);
    shifted.b = reinterpret_cast<const void*>(std::uintptr_t{0x1002});  // B off by 2 bytes
    EXPECT_NE(e.rejects(shifted), std::nullopt) << name;
    EXPECT_NE(e.rejects(aligned_bf16(64, 64, 0)), std::nullopt) << name << ": K = 0";
    // tf32 wgmma reads K-major operands only; an MN-major one (A^T, or B as stored) is
    // first copied into K-major form, so only the operands read as they are need TMA's
    // alignment.
    GemmProblem tf32 = shape(256, 256, 256);
    tf32.dtype = DType::tf32;
    EXPECT_EQ(e.rejects(tf32), std::nullopt) << name;
    tf32.ldb = 257;  // B is copied: any leading dimension
    EXPECT_EQ(e.rejects(tf32), std::nullopt) << name;
    tf32.lda = 257;  // A is read as stored
    EXPECT_NE(e.rejects(tf32), std::nullopt) << name;
    tf32.trans_a = true;  // now A is copied too
    EXPECT_EQ(e.rejects(tf32), std::nullopt) << name;
    tf32.trans_b = true;  // B^T is read as stored, with ld 257
    EXPECT_NE(e.rejects(tf32), std::nullopt) << name;
    // C in f32 for half inputs.
    GemmProblem f32_out = aligned_bf16(128, 128, 128);
    f32_out.out_dtype = DType::f32;
    EXPECT_EQ(e.rejects(f32_out), std::nullopt) << name;
  }
}

TEST(CudaRegistry, OnlyKernelsThatSayTheyCanWriteF32FromHalfInputsGetIt) {
  GemmProblem p = aligned_bf16(128, 128, 128);
  p.out_dtype = DType::f32;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cuda)) {
    if (!e->supports(DType::bf16)) continue;
    GemmProblem q = p;
    if (e->name.rfind("cuda_skinny", 0) == 0) q.m = 64;  // skinny products only
    if (e->name == "cuda_wgmma_padded") q.lda = 129;  // it takes only what TMA cannot read
    if (e->half_inputs_f32_output) EXPECT_EQ(e->rejects(q), std::nullopt) << e->name;
    else EXPECT_NE(e->rejects(q), std::nullopt) << e->name;
  }
}

// The tuning table behind auto (src/ops/gemm/auto_table.inc): every row names a kernel of this
// build that runs its own shape, and auto on a device of the table's compute capability
// picks it there; elsewhere the priorities decide.
TEST(AutoTable, EveryMeasuredShapeGetsItsMeasuredWinner) {
  const detail::TuningRun& run = detail::tuning_run();
  GemmProblem probe = shape(64, 64, 64);
  probe.dtype = DType::bf16;
  ASSERT_FALSE(detail::nearest_tuned_shapes(probe, 1).empty()) << "no bf16 rows in the table";
  for (const DType dtype : {DType::bf16, DType::f16, DType::tf32, DType::f32}) {
    probe.dtype = dtype;
    const auto all = detail::nearest_tuned_shapes(probe, 100000);
    for (const detail::TunedMatch& match : all) {
      const detail::TunedShape& s = *match.shape;
      GemmProblem p = shape(s.m, s.n, s.k);
      p.dtype = s.dtype, p.trans_a = s.trans_a, p.trans_b = s.trans_b;
      p.lda = std::max<std::int64_t>(1, p.a_cols()), p.ldb = std::max<std::int64_t>(1, p.b_cols());
      const std::string what = detail::tuned_shape_string(s) + " " + std::string(dtype_name(dtype));
      const KernelEntry* e = gemm_registry().find(s.kernel);
      ASSERT_NE(e, nullptr) << s.kernel << " at " << what;
      EXPECT_EQ(e->rejects(p), std::nullopt) << s.kernel << " at " << what;
      EXPECT_GE(s.percent_of_cublas, 99.0) << "auto would pick a kernel slower than cuBLAS at " << what;
      // Its own nearest shape is itself (distance 0), or an equal one earlier in the table.
      const auto nearest = detail::nearest_tuned_shapes(p, 1);
      ASSERT_EQ(nearest.size(), 1u);
      EXPECT_EQ(nearest[0].distance, 0.0) << what;
      const AutoChoice choice = explain_auto_choice(Backend::cuda, run.compute_capability, p);
      ASSERT_NE(choice.chosen, nullptr) << what;
      EXPECT_EQ(choice.chosen->name, nearest[0].shape->kernel) << what;
      EXPECT_EQ(choice.tuned_compute_capability, run.compute_capability) << what;
      // On a device of another compute capability the table does not apply.
      EXPECT_EQ(explain_auto_choice(Backend::cuda, 80, p).tuned_compute_capability, 0) << what;
    }
  }
}

TEST(AutoTable, NearbyShapesOfTheSameClassTakeTheNearestMeasurement) {
  GemmProblem p = aligned_bf16(1000, 1000, 1000);  // near 1024^3, rows on 16 bytes
  const auto near = detail::nearest_tuned_shapes(p, 3);
  ASSERT_FALSE(near.empty());
  EXPECT_LT(near[0].distance, 1.0);
  EXPECT_TRUE(near[0].shape->rows_on_16_bytes);
  for (std::size_t i = 1; i < near.size(); ++i) EXPECT_GE(near[i].distance, near[i - 1].distance);
  // Rows off 16 bytes are another class: the kernels that need TMA cannot run them.
  p.lda = 1001;
  for (const detail::TunedMatch& m : detail::nearest_tuned_shapes(p, 10))
    EXPECT_FALSE(m.shape->rows_on_16_bytes);
  // A kernel the nearest measurement names but that refuses the problem gives way.
  const AutoChoice choice = explain_auto_choice(Backend::cuda, 90, p);
  ASSERT_NE(choice.chosen, nullptr);
  EXPECT_EQ(gemm_registry().get(choice.chosen->name).rejects(p), std::nullopt) << choice.chosen->name;
}

#endif

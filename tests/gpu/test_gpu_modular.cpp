// The modular int8 GEMM (gemmkit/modular.hpp) against an exact CPU reference: int64 sums
// of the residues' products, reduced mod p and centred. Every kernel, several moduli in one
// batch, both outputs, padded leading dimensions and strides, odd sizes, K = 1, the
// longest K whose int32 sums cannot overflow, and longer K (in chunks).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "fault_injection.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/modular.hpp"
#include "gpu/gpu_test_support.hpp"

using namespace gemmkit;

namespace {

constexpr std::int8_t kPoison = 0x55;  // in outputs before the call; never a valid result here

std::int64_t centred(std::int64_t x, std::int64_t p) {
  std::int64_t r = x % p;
  const std::int64_t half = (p - 1) / 2;
  if (r > half) r -= p;
  if (r < -half) r += p;
  return r;
}

struct Case {
  std::int64_t m, n, k;
  std::vector<std::uint32_t> moduli;
  std::int64_t pad = 0;           // extra elements per row of every matrix
  bool shared_b = false;          // one B for every modulus (stride 0)
  bool write_c = true, write_ct = true;
  bool extreme = false;           // every residue the largest of its modulus
  bool dense = false;             // strides of exactly one matrix (else a few bytes more)
};

std::string describe(const Case& c, const std::string& kernel) {
  return std::to_string(c.moduli.size()) + " x " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + " pad " + std::to_string(c.pad) + (c.shared_b ? " shared B" : "") +
         " kernel " + kernel;
}

// plant_faults: also check that the check fails on each planted fault of the outputs.
void check_case(const Case& cs, const std::string& kernel, std::uint32_t seed, bool plant_faults = false) {
  SCOPED_TRACE(describe(cs, kernel));
  const std::int64_t nq = std::int64_t(cs.moduli.size());
  const std::int64_t lda = cs.k + cs.pad, ldb = cs.k + cs.pad, ldc = cs.n + cs.pad, ldct = cs.m + cs.pad;
  // Strides a little longer than a matrix, so that matrices do not start on 16 bytes.
  const std::int64_t gap = cs.dense ? 0 : 1;
  const std::int64_t sa = cs.m * lda + 3 * gap, sb = cs.shared_b ? 0 : cs.n * ldb + 5 * gap,
                     sc = cs.m * ldc + 7 * gap, sct = cs.n * ldct + gap;
  std::vector<std::int8_t> a(std::size_t(nq * sa)), b(std::size_t(cs.shared_b ? cs.n * ldb : nq * sb));
  std::mt19937 rng(seed);
  // Residues of each modulus (B's of the smallest when shared: valid for every modulus).
  std::uint32_t smallest = 255;
  for (auto p : cs.moduli) smallest = std::min(smallest, p);
  auto fill = [&](std::vector<std::int8_t>& v, std::int64_t rows, std::int64_t ld, std::int64_t stride,
                  std::int64_t count, bool shared) {
    for (std::int64_t q = 0; q < count; ++q) {
      const int half = int(((shared ? smallest : cs.moduli[std::size_t(q)]) - 1) / 2);
      std::uniform_int_distribution<int> d(-half, half);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < ld; ++c)  // padding random too: it must not be read
          v[std::size_t(q * stride + r * ld + c)] = std::int8_t(cs.extreme && c < cs.k ? half : d(rng));
    }
  };
  fill(a, cs.m, lda, sa, nq, false);
  fill(b, cs.n, ldb, sb, cs.shared_b ? 1 : nq, cs.shared_b);

  const std::size_t c_count = std::size_t(nq * sc), ct_count = std::size_t(nq * sct);
  cuda::DeviceBuffer<std::int8_t> da(a.size()), db(b.size()), dc(c_count), dct(ct_count);
  da.copy_from_host(a.data(), a.size());
  db.copy_from_host(b.data(), b.size());
  const std::vector<std::int8_t> poison_c(c_count, kPoison), poison_ct(ct_count, kPoison);
  dc.copy_from_host(poison_c.data(), c_count);
  dct.copy_from_host(poison_ct.data(), ct_count);

  ModularGemmProblem p;
  p.m = cs.m, p.n = cs.n, p.k = cs.k, p.moduli = cs.moduli;
  p.a = da.data(), p.lda = lda, p.stride_a = sa;
  p.b = db.data(), p.ldb = ldb, p.stride_b = sb;
  if (cs.write_c) p.c = dc.data(), p.ldc = ldc, p.stride_c = sc;
  if (cs.write_ct) p.ct = dct.data(), p.ldct = ldct, p.stride_ct = sct;
  Context ctx(Backend::cuda);
  const std::size_t bytes = modular_gemm_workspace_bytes(ctx, p, kernel);
  EXPECT_EQ(modular_gemm(ctx, p, nullptr, bytes ? ctx.workspace(nullptr, bytes) : Workspace{}, kernel).name, kernel);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int8_t> c(c_count), ct(ct_count);
  dc.copy_to_host(c.data(), c_count);
  dct.copy_to_host(ct.data(), ct_count);

  // Every output entry equal to the reference; nothing written outside the outputs (padding,
  // gaps between matrices, unasked outputs).
  const auto term = [&](std::int64_t q, std::int64_t i, std::int64_t j, std::int64_t l) {
    return std::int64_t(a[std::size_t(q * sa + i * lda + l)]) * b[std::size_t(q * sb + j * ldb + l)];
  };
  const auto outputs_right = [&]() -> ::testing::AssertionResult {
    for (std::int64_t q = 0; q < nq; ++q) {
      const std::int64_t mod = cs.moduli[std::size_t(q)];
      for (std::int64_t i = 0; i < cs.m; ++i)
        for (std::int64_t j = 0; j < cs.n; ++j) {
          std::int64_t sum = 0;
          for (std::int64_t l = 0; l < cs.k; ++l) sum += term(q, i, j, l);
          const std::int64_t want = centred(sum, mod);
          if (cs.write_c && c[std::size_t(q * sc + i * ldc + j)] != want)
            return ::testing::AssertionFailure() << "C_" << q << "(" << i << ", " << j << ") mod " << mod << " = "
                                                 << int(c[std::size_t(q * sc + i * ldc + j)]) << ", want " << want;
          if (cs.write_ct && ct[std::size_t(q * sct + j * ldct + i)] != want)
            return ::testing::AssertionFailure() << "C^T_" << q << "(" << j << ", " << i << ") mod " << mod << " = "
                                                 << int(ct[std::size_t(q * sct + j * ldct + i)]) << ", want " << want;
        }
    }
    for (std::size_t i = 0; i < c_count; ++i) {
      const std::int64_t q = std::int64_t(i) / sc, r = (std::int64_t(i) % sc) / ldc, col = (std::int64_t(i) % sc) % ldc;
      const bool inside = cs.write_c && q < nq && r < cs.m && col < cs.n;
      if (!inside && c[i] != kPoison) return ::testing::AssertionFailure() << "C written outside the output at " << i;
    }
    for (std::size_t i = 0; i < ct_count; ++i) {
      const std::int64_t q = std::int64_t(i) / sct, r = (std::int64_t(i) % sct) / ldct, col = (std::int64_t(i) % sct) % ldct;
      const bool inside = cs.write_ct && q < nq && r < cs.n && col < cs.m;
      if (!inside && ct[i] != kPoison) return ::testing::AssertionFailure() << "C^T written outside the output at " << i;
    }
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(outputs_right());
  if (!plant_faults) return;

  // The check fails on each planted fault of these outputs (C and C^T asked for, m, n >= 2).
  std::vector<std::int8_t> both(c);
  both.insert(both.end(), ct.begin(), ct.end());
  ASSERT_TRUE(cs.write_c && cs.write_ct && cs.m >= 2 && cs.n >= 2 && cs.k >= 1 && !cs.dense);
  const std::int64_t last = nq - 1;
  const auto cell = [&](std::int64_t q, std::int64_t i, std::int64_t j) -> std::int8_t& {
    return c[std::size_t(q * sc + i * ldc + j)];
  };
  const auto change_term = [&](std::int64_t q, std::int64_t i, std::int64_t j, int times) {
    std::int64_t largest = 0;
    for (std::int64_t l = 1; l < cs.k; ++l)
      if (std::abs(term(q, i, j, l)) > std::abs(term(q, i, j, largest))) largest = l;
    cell(q, i, j) = std::int8_t(centred(cell(q, i, j) + times * term(q, i, j, largest), cs.moduli[std::size_t(q)]));
  };
  std::int64_t nonzero_j = cs.n - 1;
  while (nonzero_j > 0 && cell(last, 0, nonzero_j) == 0) --nonzero_j;
  const std::vector<test::PlantedFault> faults = {
      {"a term of C_last(m-1, n-1) dropped", [&] { change_term(last, cs.m - 1, cs.n - 1, -1); }},
      {"a term of C_0(0, 0) counted twice", [&] { change_term(0, 0, 0, 1); }},
      {"the residue C_last(0, " + std::to_string(nonzero_j) + ") with the wrong sign",
       [&] { cell(last, 0, nonzero_j) = std::int8_t(-cell(last, 0, nonzero_j)); }},
      {"the last row of C_0 computed as the row before it",
       [&] { for (std::int64_t j = 0; j < cs.n; ++j) cell(0, cs.m - 1, j) = cell(0, cs.m - 2, j); }},
      {"the last column of C^T_0 computed as the column before it", [&] {
         for (std::int64_t j = 0; j < cs.n; ++j) ct[std::size_t(j * ldct + cs.m - 1)] = ct[std::size_t(j * ldct + cs.m - 2)];
       }},
      {"the gap after C_last written", [&] { c[c_count - 1] = 0; }},
  };
  // The harness saves and restores one buffer: C and C^T are saved here around each fault.
  const std::vector<std::int8_t> c_clean = c, ct_clean = ct;
  std::vector<test::PlantedFault> restoring;
  for (const test::PlantedFault& f : faults)
    restoring.push_back({f.name, [&, plant = f.plant] {
                           c = c_clean, ct = ct_clean;
                           plant();
                         }});
  EXPECT_EQ(test::expect_faults_caught({nullptr, 0}, outputs_right, restoring), int(faults.size()));
  c = c_clean, ct = ct_clean;
}

// The registry's CUDA kernels this device runs.
std::vector<std::string> kernels() {
  std::vector<std::string> v = {"cuda_modular_cublas"};
  Context ctx(Backend::cuda);
  if (ctx.compute_capability() == 90) v.push_back("cuda_modular_fused");
  return v;
}

const std::vector<std::uint32_t> kFive = {251, 3, 127, 255, 241};

}  // namespace

TEST(GpuModular, EdgeShapesEveryPathBothOutputs) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<Case> cases = {
      {1, 1, 1, kFive},
      {1, 1, 1, {251}, 0, false, true, false},
      {5, 7, 9, kFive, 3},
      {64, 64, 64, kFive},
      {65, 63, 33, kFive, 1},
      {130, 257, 1, {251, 7}, 0},
      {200, 150, 300, kFive, 16},
      {129, 131, 1000, {239, 233}, 0, true},
      {256, 256, 128, {251, 3}, 0, false, false, true},
      {3, 300, 77, {199}, 2, false, true, false},
      {300, 3, 77, {199, 197}, 0, false, false, true},
      {128, 256, 64, {251, 241, 239}, 0},
      // Operands read in place (rows and matrices on 16 bytes), 16-byte stores of C and C^T.
      {256, 512, 320, {251, 241, 239}, 0, false, true, true, false, true},
      {384, 128, 64, {5, 3}, 0, true, true, true, false, true},
      {200, 176, 96, {251, 11}, 0, false, true, true, false, true},
      // Outputs TMA can store (rows of whole 16 bytes), edge tiles clipped by the copy engine:
      // C and C^T, C only, C^T only, and rows padded past the matrix.
      {208, 272, 96, {251, 241}, 0, false, true, true, false, true},
      {208, 272, 96, {251}, 0, false, true, false, false, true},
      {208, 272, 96, {3, 5}, 0, false, false, true, false, true},
      {144, 400, 64, {251, 239}, 16, false, true, true, false, true},
  };
  std::uint32_t seed = 1;
  for (const std::string& kernel : kernels())
    for (const Case& c : cases) check_case(c, kernel, seed++);
}

TEST(GpuModular, CatchesPlantedFaults) {
  SKIP_WITHOUT_DEVICE();
  for (const std::string& kernel : kernels()) check_case({65, 63, 33, kFive, 1}, kernel, 21, true);
}

TEST(GpuModular, PersistentRoundsAndStreamK) {
  SKIP_WITHOUT_DEVICE();
  // Two moduli of 48 tiles (128 x 256, clusters of two): 96 for 66 clusters on 132 SMs, the
  // last round of 30 shared out by stream-K.
  Case c{1024, 3072, 768, {251, 241}};
  c.dense = true;
  for (const std::string& kernel : kernels()) check_case(c, kernel, 11);
}

// Callers size one workspace for their largest batch or pass and run smaller ones in it: the
// walks' last batch and warm-up of fewer moduli, Ozaki's last pass of fewer rows, the exact
// GEMM's plan of fewer moduli than its worst case. Smaller products can plan stream-K where
// the declared one plans none (an 8192-vertex walk at k = 32 failed so). Every count of
// moduli 1..64 and a sweep of fewer rows, each in exactly the bytes declared for 64 moduli of
// the largest shape, each product against the exact residues. One A and B serve every
// modulus (stride 0), so one int64 reference serves all.
TEST(GpuModular, ADeclaredWorkspaceServesEverySmallerBatchAndPass) {
  SKIP_WITHOUT_DEVICE();
  const std::int64_t m = 512, n = 512, k = 640, max_moduli = 64;
  std::vector<std::uint32_t> moduli;
  for (std::int64_t q = 0; q < max_moduli; ++q) moduli.push_back(std::uint32_t(255 - 2 * (q % 60)));
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> residue(-3, 3);  // a residue of every modulus above 7
  std::vector<std::int8_t> a(std::size_t(m * k)), b(std::size_t(n * k));
  for (auto& x : a) x = std::int8_t(residue(rng));
  for (auto& x : b) x = std::int8_t(residue(rng));
  std::vector<std::int64_t> sums(std::size_t(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t s = 0;
      for (std::int64_t l = 0; l < k; ++l) s += std::int64_t(a[std::size_t(i * k + l)]) * b[std::size_t(j * k + l)];
      sums[std::size_t(i * n + j)] = s;
    }
  cuda::DeviceBuffer<std::int8_t> da(a.size()), db(b.size()), dc(std::size_t(max_moduli * m * n));
  da.copy_from_host(a.data(), a.size());
  db.copy_from_host(b.data(), b.size());
  for (const std::string& kernel : kernels()) {
    ModularGemmProblem p;
    p.m = m, p.n = n, p.k = k, p.moduli = moduli;
    p.a = da.data(), p.lda = k, p.stride_a = 0;
    p.b = db.data(), p.ldb = k, p.stride_b = 0;
    p.c = dc.data(), p.ldc = n, p.stride_c = m * n;
    Context ctx(Backend::cuda);
    const std::size_t declared = modular_gemm_workspace_bytes(ctx, p, kernel);
    const Workspace ws = declared ? ctx.workspace(nullptr, declared) : Workspace{};
    const Workspace exact{ws.data, declared};  // not a byte more than declared
    auto run_and_check = [&](std::int64_t rows, std::int64_t count) {
      SCOPED_TRACE(kernel + ": " + std::to_string(count) + " moduli of " +
                   std::to_string(rows) + " x " + std::to_string(n) + " x " + std::to_string(k));
      ModularGemmProblem q = p;
      q.m = rows;
      q.moduli.assign(moduli.begin(), moduli.begin() + count);
      ASSERT_LE(modular_gemm_workspace_bytes(ctx, q, kernel), declared);
      ASSERT_NO_THROW(modular_gemm(ctx, q, nullptr, exact, kernel));
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<std::int8_t> c(std::size_t(count * m * n));
      dc.copy_to_host(c.data(), c.size());
      int errors = 0;
      for (std::int64_t t = 0; t < count; ++t)
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t want = centred(sums[std::size_t(i * n + j)], moduli[std::size_t(t)]);
            const std::int64_t got = c[std::size_t(t * m * n + i * n + j)];
            if (got != want && ++errors <= 3)
              ADD_FAILURE() << "C_" << t << "(" << i << ", " << j << ") = " << got << ", want " << want;
          }
    };
    for (std::int64_t count = 1; count <= max_moduli; ++count) run_and_check(m, count);
    for (std::int64_t rows : {511, 384, 300, 257, 256, 200, 129, 128, 65, 1})
      for (std::int64_t count : {max_moduli, std::int64_t(50), std::int64_t(27)}) run_and_check(rows, count);
  }
}

TEST(GpuModular, LongestKDoesNotOverflow) {
  SKIP_WITHOUT_DEVICE();
  // Every residue 125 (mod 251): each sum is K * 15625, just below 2^31.
  Case c{2, 3, int8_k_limit(), {251}};
  c.extreme = true;
  for (const std::string& kernel : kernels()) check_case(c, kernel, 7);
}

TEST(GpuModular, LongerKRunsInChunks) {
  SKIP_WITHOUT_DEVICE();
  // Every residue at its largest: an int32 sum of K products would wrap past K =
  // int8_k_limit(); in chunks each sum holds, and the chunks' residues add up mod p. Three
  // chunks, the last short, two moduli (the largest residue is 127 for 255: its own,
  // shorter limit), padded rows off 16 bytes.
  Case c{5, 19, 2 * int8_k_limit() + 1000, {251, 255}, 3};
  c.extreme = true;
  for (const std::string& kernel : kernels()) check_case(c, kernel, 9);
  // Random residues, C only and C^T only.
  Case r{17, 33, int8_k_limit() + 17, {241, 3}};
  r.write_ct = false;
  for (const std::string& kernel : kernels()) check_case(r, kernel, 10);
  r.write_ct = true, r.write_c = false;
  for (const std::string& kernel : kernels()) check_case(r, kernel, 11);
}

TEST(GpuModular, EmptyKWritesZeros) {
  SKIP_WITHOUT_DEVICE();
  for (const std::string& kernel : kernels()) check_case({9, 17, 0, {251, 3}, 1}, kernel, 3);
}

TEST(GpuModular, FusedNeedsSm90) {
  SKIP_WITHOUT_DEVICE();
  Context ctx(Backend::cuda);
  if (ctx.compute_capability() == 90) GTEST_SKIP() << "an sm_90 device runs the fused kernel";
  ModularGemmProblem p;
  p.m = p.n = p.k = 16, p.moduli = {251};
  cuda::DeviceBuffer<std::int8_t> x(256);
  p.a = p.b = x.data(), p.c = x.data(), p.lda = p.ldb = p.ldc = 16;
  EXPECT_THROW(modular_gemm_workspace_bytes(ctx, p, "cuda_modular_fused"), Error);
  EXPECT_EQ(modular_gemm(ctx, p, nullptr, {}).name, "cuda_modular_cublas");  // auto's choice there
}

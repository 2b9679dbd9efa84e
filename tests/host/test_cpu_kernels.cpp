// Every CPU kernel in the registry, for every dtype it declares, on the edge shapes of the
// GEMM contract, against the oracle of verify.hpp.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ops/gemm/cpu/cpu_kernels.hpp"
#include "fault_injection.hpp"
#include "gemmkit/registry.hpp"
#include "test_support.hpp"

namespace gemmkit {
namespace {

using test::ProblemSpec;
using test::TestProblem;

struct KernelCase {
  std::string kernel;
  DType dtype;
};

// What gtest prints for a case, instead of its bytes.
void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.kernel << " " << dtype_name(c.dtype); }

std::vector<KernelCase> cpu_cases(bool integers_only) {
  std::vector<KernelCase> cases;
  // int8 (C in int32) has no host matrix type of TestProblem's: test_integer_rule.cpp tests it.
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu))
    for (DType d : e->dtypes)
      if ((!integers_only || is_integer(d)) && d != DType::i8) cases.push_back({e->name, d});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<KernelCase>& info) {
  return info.param.kernel + "_" + std::string(dtype_name(info.param.dtype));
}

// Register and cache tiles of cpu_blocked for a dtype, to aim shapes at their edges.
struct Tiles {
  int mr, nr, kc, mc, nc;
};
Tiles tiles_of(DType dtype) {
  auto of = [](auto blocking) {
    using B = decltype(blocking);
    return Tiles{B::mr, B::nr, B::kc, B::mc, B::nc};
  };
  switch (dtype) {
    case DType::f64: return of(cpu::Blocking<double>{});
    case DType::i32: return of(cpu::Blocking<std::uint32_t>{});
    case DType::i64: return of(cpu::Blocking<std::uint64_t>{});
    default: return of(cpu::Blocking<float>{});
  }
}

struct Shape {
  std::int64_t m, n, k;
};

// The edge set of shapes: 1, tile-1/tile/tile+1 of the register and cache tiles, primes,
// tall-skinny, K below a tile and K not a multiple of KC, M past MC, N past NC.
std::vector<Shape> edge_shapes(DType dtype) {
  const Tiles t = tiles_of(dtype);
  return {
      {1, 1, 1},
      {1, 1, 7},
      {2, 3, 4},
      {t.mr - 1, t.nr + 1, 5},
      {t.mr, t.nr, 16},
      {t.mr + 1, t.nr - 1, 3},
      {t.mr, t.nr + 1, t.kc},
      {17, 31, 67},
      {127, 17, 31},
      {31, 127, 17},
      {67, 67, 67},
      {1000, 3, 7},
      {7, 3, 1000},
      {40, 41, 3},
      {50, 60, 1},
      {13, 20, t.kc + 1},
      {9, 37, 2 * t.kc + 3},
      {t.mc + 1, t.nr + 3, 5},
      {2 * t.mc + 7, 33, 19},
      {2, t.nc + 1, 3},
      {101, 90, 300},
  };
}

// alpha, beta pairs; beta == 0 makes C write-only (NaN-poisoned by TestProblem).
std::vector<std::pair<double, double>> scalars(DType dtype) {
  if (is_integer(dtype)) return {{1, 0}, {3, -2}, {-1, 0}, {1, 1}, {0, 4}, {2, 1}, {-5, 0}};
  return {{1, 0}, {0.75, -1.25}, {-1.5, 0}, {1, 1}, {0, 0.5}, {2.5, 0.25}, {1, 0}};
}

class CpuKernels : public ::testing::TestWithParam<KernelCase> {
 protected:
  const KernelEntry& entry() const { return gemm_registry().get(GetParam().kernel); }

  // Runs the kernel on a fresh problem and checks it against the oracle.
  void check(ProblemSpec spec) {
    spec.dtype = GetParam().dtype;
    TestProblem t(spec);
    const GemmProblem p = t.problem();
    validate(p);
    ASSERT_FALSE(entry().rejects(p)) << *entry().rejects(p);
    entry().run(p, test::cpu_launch());
    EXPECT_TRUE(t.matches_reference());
  }
};

TEST_P(CpuKernels, EdgeShapes) {
  const DType dtype = GetParam().dtype;
  const auto ab = scalars(dtype);
  int index = 0;
  for (const Shape& s : edge_shapes(dtype)) {
    ProblemSpec spec;
    spec.m = s.m, spec.n = s.n, spec.k = s.k;
    spec.trans_a = index % 2 == 1;
    spec.trans_b = index / 2 % 2 == 1;
    std::tie(spec.alpha, spec.beta) = ab[index % ab.size()];
    spec.pad = index % 3 == 0 ? 0 : index % 3 == 1 ? 1 : 5;
    spec.seed = 100 + index;
    ++index;
    SCOPED_TRACE(spec.to_string());
    check(spec);
  }
}

TEST_P(CpuKernels, AllFourTransposeCombinations) {
  const Tiles t = tiles_of(GetParam().dtype);
  for (const Shape& s : {Shape{t.mr + 1, t.nr + 1, t.kc + 1}, Shape{23, 29, 31}})
    for (int combo = 0; combo < 4; ++combo) {
      ProblemSpec spec;
      spec.m = s.m, spec.n = s.n, spec.k = s.k;
      spec.trans_a = combo & 1;
      spec.trans_b = combo & 2;
      spec.alpha = 2, spec.beta = -1;
      spec.pad = 3;
      spec.seed = 7 + combo;
      SCOPED_TRACE(spec.to_string());
      check(spec);
    }
}

TEST_P(CpuKernels, BetaZeroIgnoresNaNInC) {
  ProblemSpec spec;
  spec.dtype = GetParam().dtype;
  spec.m = 19, spec.n = 23, spec.k = 29;
  spec.alpha = 1, spec.beta = 0;
  spec.pad = 2;
  TestProblem t(spec);  // C starts as NaN (floats) or garbage (integers)
  entry().run(t.problem(), test::cpu_launch());
  EXPECT_TRUE(t.matches_reference());  // a NaN that leaked would make the error NaN
}

TEST_P(CpuKernels, LeadingDimensionsFarWiderThanTheMatrices) {
  ProblemSpec spec;
  spec.m = 33, spec.n = 35, spec.k = 37;
  spec.alpha = -1, spec.beta = 1;
  spec.pad = 61;  // poison in every padding column: reading it would show
  spec.trans_a = true;
  check(spec);
}

TEST_P(CpuKernels, EmptyDimensionsLeaveCAsTheContractSays) {
  // m == 0 or n == 0: nothing to do; k == 0: C = beta * C (zero for beta == 0, despite NaN).
  for (const Shape& s : {Shape{0, 5, 4}, Shape{5, 0, 4}, Shape{6, 7, 0}})
    for (double beta : {0.0, 2.0}) {
      ProblemSpec spec;
      spec.m = s.m, spec.n = s.n, spec.k = s.k;
      spec.alpha = 3, spec.beta = beta;
      spec.pad = 1;
      SCOPED_TRACE(spec.to_string());
      check(spec);
    }
}

TEST_P(CpuKernels, AlphaZeroScalesCByBeta) {
  for (double beta : {0.0, 1.0, -3.0}) {
    ProblemSpec spec;
    spec.m = 11, spec.n = 21, spec.k = 9;
    spec.alpha = 0, spec.beta = beta;
    SCOPED_TRACE(spec.to_string());
    check(spec);
  }
}

TEST_P(CpuKernels, RunsThroughTheDispatcherByName) {
  ProblemSpec spec;
  spec.dtype = GetParam().dtype;
  spec.m = 14, spec.n = 15, spec.k = 16;
  spec.beta = 1;
  TestProblem t(spec);
  EXPECT_EQ(gemm(t.problem(), {Backend::cpu, GetParam().kernel}), GetParam().kernel);
  EXPECT_TRUE(t.matches_reference());
}

// The check above fails on each planted fault of a real result: integer-valued data (exact
// in every dtype here), a shape past one register tile each way, beta != 0, padded C.
TEST_P(CpuKernels, CatchesPlantedFaults) {
  const Tiles t = tiles_of(GetParam().dtype);
  ProblemSpec spec;
  spec.dtype = GetParam().dtype;
  spec.m = t.mr + 3, spec.n = t.nr + 2, spec.k = 37;
  spec.alpha = 2, spec.beta = -1;
  spec.pad = 2;
  spec.trans_b = true;
  spec.distribution = Distribution::parse("ints:-9:9");
  TestProblem t_problem(spec);
  const GemmProblem p = t_problem.problem();
  entry().run(p, test::cpu_launch());
  std::vector<test::PlantedFault> faults = test::gemm_faults(p);
  faults.push_back(test::gemm_padding_fault(p));
  const test::OutputBytes c{p.c, std::size_t(p.m * p.ldc) * dtype_size(p.c_dtype())};
  EXPECT_EQ(test::expect_faults_caught(c, [&] { return t_problem.matches_reference(); }, faults),
            int(faults.size()));
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuKernels, ::testing::ValuesIn(cpu_cases(false)), case_name);

// Integer kernels compute modulo 2^bits: products and partial sums may wrap, and the result
// is still exact whenever the exact result fits.
class CpuKernelsIntegers : public CpuKernels {};

TEST_P(CpuKernelsIntegers, ExactWhenIntermediateProductsWrap) {
  const DType dtype = GetParam().dtype;
  const bool wide = dtype == DType::i64;
  // op(A) columns come in pairs (u, d - u) and op(B) rows in equal pairs (v, v): each pair
  // adds d * v to C, but u * v alone does not fit the dtype.
  const std::int64_t big = wide ? 3'000'000'000 : 46'000, small = 3;
  for (int combo = 0; combo < 4; ++combo) {
    ProblemSpec spec;
    spec.dtype = dtype;
    spec.m = 13, spec.n = 18, spec.k = 2 * 21;
    spec.trans_a = combo & 1, spec.trans_b = combo & 2;
    spec.alpha = -1, spec.beta = combo == 3 ? 2 : 0;
    spec.pad = 2;
    spec.seed = 40 + combo;
    TestProblem t(spec);
    std::uint64_t state = 12345 + combo;
    auto next = [&](std::int64_t lo, std::int64_t hi) {  // a 64-bit LCG: test data only
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return lo + static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(hi - lo + 1));
    };
    int128_t largest_product = 0;
    auto fill = [&]<class T>() {
      for (std::int64_t i = 0; i < spec.m; ++i)
        for (std::int64_t q = 0; q < spec.k; q += 2) {
          const std::int64_t u = next(big, big + big / 4) * (next(0, 1) ? 1 : -1);
          t.op_a<T>(i, q) = static_cast<T>(u);
          t.op_a<T>(i, q + 1) = static_cast<T>(next(-small, small) - u);
        }
      for (std::int64_t q = 0; q < spec.k; q += 2)
        for (std::int64_t j = 0; j < spec.n; ++j) {
          const std::int64_t v = next(big, big + big / 4) * (next(0, 1) ? 1 : -1);
          t.op_b<T>(q, j) = t.op_b<T>(q + 1, j) = static_cast<T>(v);
          const int128_t product = int128_t{t.op_a<T>(0, q)} * v;
          largest_product = std::max(largest_product, product < 0 ? -product : product);
        }
    };
    if (wide) fill.template operator()<std::int64_t>();
    else fill.template operator()<std::int32_t>();
    const int128_t type_max = wide ? int128_t{INT64_MAX} : int128_t{INT32_MAX};
    ASSERT_GT(largest_product, type_max) << "the data must make single products wrap";
    SCOPED_TRACE(spec.to_string());
    entry().run(t.problem(), test::cpu_launch());
    EXPECT_TRUE(t.matches_reference());
  }
}

TEST_P(CpuKernelsIntegers, LargeEntriesStayExact) {
  // Entries as large as they can be while k * max|a| * max|b| still fits the dtype.
  ProblemSpec spec;
  spec.m = 25, spec.n = 27, spec.k = 7;
  spec.beta = 1;
  spec.distribution = Distribution::parse(GetParam().dtype == DType::i64 ? "ints:-1000000000:1000000000"
                                                                         : "ints:-15000:15000");
  spec.dtype = GetParam().dtype;
  TestProblem t(spec);
  entry().run(t.problem(), test::cpu_launch());
  EXPECT_TRUE(t.matches_reference());
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuKernelsIntegers, ::testing::ValuesIn(cpu_cases(true)),
                         case_name);

TEST(CpuRegistry, LadderAndReference) {
  const auto entries = gemm_registry().of_backend(Backend::cpu);
  std::set<std::string> names;
  for (const KernelEntry* e : entries) names.insert(e->name);
  for (const char* name : {"cpu_openblas", "cpu_naive", "cpu_restrict", "cpu_interchanged", "cpu_blocked"})
    EXPECT_TRUE(names.count(name)) << name;
  const KernelEntry& openblas = gemm_registry().get("cpu_openblas");
  EXPECT_EQ(openblas.role, KernelRole::reference);
  EXPECT_EQ(openblas.rung, 0);
  EXPECT_EQ(gemm_registry().get("cpu_naive").rung, 1);
  EXPECT_EQ(gemm_registry().get("cpu_restrict").rung, 2);
  EXPECT_EQ(gemm_registry().get("cpu_interchanged").rung, 3);
  EXPECT_EQ(gemm_registry().get("cpu_blocked").rung, 4);
  for (DType d : {DType::f32, DType::f64, DType::i32, DType::i64})
    for (const char* name : {"cpu_naive", "cpu_blocked"})
      EXPECT_TRUE(gemm_registry().get(name).supports(d)) << name << " " << dtype_name(d);
}

TEST(CpuRegistry, AutoPicksOpenBlasForFloatsAndBlockedForIntegers) {
  auto best = [](DType dtype) {
    const KernelEntry* chosen = nullptr;
    for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu))
      if (e->supports(dtype) && e->auto_priority > 0 &&
          (!chosen || e->auto_priority > chosen->auto_priority))
        chosen = e;
    return chosen ? chosen->name : std::string("none");
  };
  EXPECT_EQ(best(DType::f32), "cpu_openblas");
  EXPECT_EQ(best(DType::f64), "cpu_openblas");
  EXPECT_EQ(best(DType::i32), "cpu_blocked");
  EXPECT_EQ(best(DType::i64), "cpu_blocked");
}

TEST(CpuRegistry, OpenBlasRejectsSizesBeyondInt) {
  const KernelEntry& openblas = gemm_registry().get("cpu_openblas");
  float dummy = 0;
  GemmProblem p;
  p.m = std::int64_t{INT_MAX} + 1, p.n = 2, p.k = 2;
  p.a = p.b = p.c = &dummy;
  p.lda = 2, p.ldb = 2, p.ldc = 2;
  const auto why = openblas.rejects(p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("m = 2147483648"), std::string::npos) << *why;
  p.m = 2;
  p.ldc = std::int64_t{INT_MAX} + 7;
  ASSERT_TRUE(openblas.rejects(p));
  EXPECT_NE(openblas.rejects(p)->find("ldc"), std::string::npos);
  p.ldc = 2;
  EXPECT_FALSE(openblas.rejects(p));
}

}  // namespace
}  // namespace gemmkit

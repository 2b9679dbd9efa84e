// Core: dtypes, matrices, conversion, random matrices, problem validation, registry, dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "gemmkit/device.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/timing.hpp"
#include "gemmkit/verify.hpp"

using namespace gemmkit;

TEST(DType, NamesRoundTripAndSizes) {
  for (DType d : all_dtypes()) {
    auto parsed = parse_dtype(dtype_name(d));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(parse_dtype("float64"), DType::f64);
  EXPECT_EQ(parse_dtype("int32"), DType::i32);
  EXPECT_FALSE(parse_dtype("f128").has_value());
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_TRUE(is_integer(DType::i64));
  EXPECT_FALSE(is_integer(DType::tf32));
}

TEST(Error, CategoriesMapToExitStatus) {
  EXPECT_EQ(exit_status(ErrorCategory::usage), 2);
  EXPECT_EQ(exit_status(ErrorCategory::input), 2);
  EXPECT_EQ(exit_status(ErrorCategory::numeric), 1);
  EXPECT_EQ(exit_status(ErrorCategory::device), 1);
  EXPECT_EQ(exit_status(ErrorCategory::out_of_memory), 1);
}

TEST(Error, OverflowNamesItsEntryInEitherOrientation) {
  const OverflowError e(5, 7, "2147483652", "i32");
  EXPECT_EQ(e.category(), ErrorCategory::numeric);
  EXPECT_STREQ(e.what(), "numeric overflow: the exact result at (5, 7) is 2147483652, which does not fit i32");
  const OverflowError t = e.transposed();
  EXPECT_EQ(t.row(), 7);
  EXPECT_EQ(t.col(), 5);
  EXPECT_EQ(t.value(), "2147483652");
  EXPECT_STREQ(t.what(), "numeric overflow: the exact result at (7, 5) is 2147483652, which does not fit i32");
}

TEST(Matrix, LeadingDimensionAndViews) {
  Matrix<float> m(3, 4, 7);
  EXPECT_EQ(m.ld(), 7);
  m(2, 3) = 5.0f;
  EXPECT_EQ(m.data()[2 * 7 + 3], 5.0f);
  MatrixView<const float> v = m.view();
  EXPECT_EQ(v(2, 3), 5.0f);
  EXPECT_THROW(Matrix<float>(3, 4, 3), Error);
  EXPECT_THROW(MatrixView<float>(m.data(), 3, 8, 7), Error);
}

TEST(Matrix, ElementCountOverflowIsAnInputError) {
  try {
    checked_element_count(std::int64_t(1) << 40, std::int64_t(1) << 40, "test.mtx");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::input);
    EXPECT_NE(std::string(e.what()).find("test.mtx"), std::string::npos);
  }
  EXPECT_EQ(checked_element_count(3, 5, "x"), 15);
}

TEST(Matrix, ConvertChecksIntegerValues) {
  Matrix<double> d(1, 3);
  d(0, 0) = 1.0;
  d(0, 1) = -7.0;
  d(0, 2) = 9007199254740992.0;
  auto i = std::get<Matrix<std::int64_t>>(convert(AnyMatrix(d), DType::i64));
  EXPECT_EQ(i(0, 2), 9007199254740992LL);
  EXPECT_EQ(i(0, 1), -7);
  d(0, 1) = 0.5;
  EXPECT_THROW(convert(AnyMatrix(d), DType::i64), Error);
  Matrix<std::int64_t> big(1, 1);
  big(0, 0) = std::int64_t(1) << 40;
  try {
    convert(AnyMatrix(big), DType::i32);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_NE(std::string(e.what()).find("row 1, column 1"), std::string::npos);
  }
  EXPECT_EQ(common_dtype(DType::f32, DType::f64), DType::f64);
  EXPECT_EQ(common_dtype(DType::i32, DType::i64), DType::i64);
  EXPECT_EQ(common_dtype(DType::f32, DType::i64), DType::f64);
  EXPECT_EQ(common_dtype(DType::f32, DType::f32), DType::f32);
}

TEST(Matrix, HalfPrecisionConversionsAndPromotion) {
  Matrix<double> d(1, 4);
  d(0, 0) = 1.0 + 0x1p-11 + 0x1p-40;  // just above an f16 tie: rounds up, once
  d(0, 1) = -3.0;
  d(0, 2) = 1e6;                       // past f16's 65504: infinity; bf16 keeps its range
  d(0, 3) = 0.1;
  const auto h = std::get<Matrix<Half>>(convert(AnyMatrix(d), DType::f16));
  EXPECT_EQ(static_cast<float>(h(0, 0)), 1.0f + 0x1p-10f);
  EXPECT_EQ(static_cast<float>(h(0, 1)), -3.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(h(0, 2))));
  const auto b = std::get<Matrix<BFloat16>>(convert(AnyMatrix(d), DType::bf16));
  EXPECT_EQ(static_cast<float>(b(0, 2)), 999424.0f);  // 1e6 to 8 significant bits
  EXPECT_EQ(b(0, 3).bits, BFloat16(0.1f).bits);
  // Back out: exact to f32/f64; to integers only where the value is an integer.
  const auto f = std::get<Matrix<float>>(convert(AnyMatrix(h), DType::f32));
  EXPECT_EQ(f(0, 1), -3.0f);
  EXPECT_THROW(convert(AnyMatrix(h), DType::i32), Error);  // 1 + 2^-10 is no integer
  Matrix<Half> ints(1, 1);
  ints(0, 0) = Half(2048.0f);
  EXPECT_EQ(std::get<Matrix<std::int32_t>>(convert(AnyMatrix(ints), DType::i32))(0, 0), 2048);
  // tf32 is f32 storage; i8 has no host matrix.
  EXPECT_TRUE(std::holds_alternative<Matrix<float>>(convert(AnyMatrix(d), DType::tf32)));
  EXPECT_THROW(convert(AnyMatrix(d), DType::i8), Error);

  EXPECT_EQ(common_dtype(DType::f16, DType::f16), DType::f16);
  EXPECT_EQ(common_dtype(DType::f16, DType::bf16), DType::f32);
  EXPECT_EQ(common_dtype(DType::bf16, DType::f32), DType::f32);
  EXPECT_EQ(common_dtype(DType::f16, DType::f64), DType::f64);
  EXPECT_EQ(common_dtype(DType::f16, DType::i32), DType::f64);
  EXPECT_EQ(common_dtype(DType::tf32, DType::f32), DType::f32);
}

TEST(GemmProblem, FromAnyMatricesTakesHalfInputsWithAnF32Output) {
  AnyMatrix a = Matrix<Half>(4, 3), b = Matrix<Half>(3, 5, 8);
  AnyMatrix c = Matrix<float>(4, 5, 6);
  GemmProblem p = make_problem(a, false, b, false, c, 2.0, 0.0);
  EXPECT_EQ(p.dtype, DType::f16);
  EXPECT_EQ(p.c_dtype(), DType::f32);
  EXPECT_EQ(p.m, 4);
  EXPECT_EQ(p.n, 5);
  EXPECT_EQ(p.k, 3);
  EXPECT_EQ(p.ldb, 8);
  EXPECT_EQ(p.ldc, 6);
  EXPECT_EQ(p.c, std::get<Matrix<float>>(c).data());
  EXPECT_EQ(p.alpha, 2.0);
  AnyMatrix same = Matrix<Half>(4, 5);
  EXPECT_FALSE(make_problem(a, false, b, false, same).out_dtype.has_value());
  AnyMatrix other = Matrix<BFloat16>(3, 5), wrong_shape = Matrix<float>(5, 4);
  EXPECT_THROW(make_problem(a, false, other, false, c), Error);        // A f16, B bf16
  EXPECT_THROW(make_problem(a, false, b, false, wrong_shape), Error);  // C is 5x4
}

TEST(Random, SeededAndInRange) {
  const Distribution u = Distribution::parse("uniform");
  auto a = std::get<Matrix<float>>(random_matrix(50, 40, DType::f32, u, 7));
  auto b = std::get<Matrix<float>>(random_matrix(50, 40, DType::f32, u, 7));
  auto c = std::get<Matrix<float>>(random_matrix(50, 40, DType::f32, u, 8));
  int differ = 0;
  std::set<float> distinct;
  for (std::int64_t i = 0; i < 50; ++i)
    for (std::int64_t j = 0; j < 40; ++j) {
      EXPECT_EQ(a(i, j), b(i, j));
      EXPECT_GE(a(i, j), -1.0f);
      EXPECT_LT(a(i, j), 1.0f);
      differ += a(i, j) != c(i, j);
      distinct.insert(a(i, j));
    }
  EXPECT_GT(differ, 1900);
  EXPECT_GT(distinct.size(), 1900u);

  auto ints = std::get<Matrix<std::int64_t>>(
      random_matrix(100, 100, DType::i64, Distribution::parse("ints:-3:4"), 1));
  std::set<std::int64_t> seen;
  for (std::int64_t i = 0; i < 100; ++i)
    for (std::int64_t j = 0; j < 100; ++j) seen.insert(ints(i, j));
  EXPECT_EQ(seen, (std::set<std::int64_t>{-3, -2, -1, 0, 1, 2, 3, 4}));

  auto normal = std::get<Matrix<double>>(
      random_matrix(200, 200, DType::f64, Distribution::parse("normal"), 3));
  double sum = 0, sum2 = 0;
  for (std::int64_t i = 0; i < 200; ++i)
    for (std::int64_t j = 0; j < 200; ++j) sum += normal(i, j), sum2 += normal(i, j) * normal(i, j);
  EXPECT_NEAR(sum / 40000, 0.0, 0.03);
  EXPECT_NEAR(sum2 / 40000, 1.0, 0.05);
}

TEST(Random, RejectsBadDistributions) {
  EXPECT_THROW(Distribution::parse("gauss"), Error);
  EXPECT_THROW(Distribution::parse("ints"), Error);
  EXPECT_THROW(Distribution::parse("ints:5:1"), Error);
  EXPECT_THROW(Distribution::parse("ints:0.5:3"), Error);
  EXPECT_THROW(Distribution::parse("uniform:a:b"), Error);
  EXPECT_THROW(random_matrix(2, 2, DType::i32, Distribution::parse("uniform"), 1), Error);
  EXPECT_THROW(random_matrix(2, 2, DType::i32, Distribution::parse("ints:0:5000000000"), 1), Error);
}

TEST(GemmProblem, ValidateCatchesInconsistentProblems) {
  Matrix<float> a(4, 3), b(3, 5), c(4, 5);
  GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  EXPECT_NO_THROW(validate(p));
  EXPECT_EQ(p.m, 4);
  EXPECT_EQ(p.n, 5);
  EXPECT_EQ(p.k, 3);
  GemmProblem bad = p;
  bad.lda = 2;
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.ldc = 4;
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.c = nullptr;
  EXPECT_THROW(validate(bad), Error);
  // Integer problems need integer scalars.
  Matrix<std::int32_t> ai(2, 2), bi(2, 2), ci(2, 2);
  GemmProblem pi = make_problem<std::int32_t>(ai.view(), false, bi.view(), false, ci.view(), 0.5);
  EXPECT_THROW(validate(pi), Error);
  // Shape mismatch while building.
  Matrix<float> wrong(4, 4);
  EXPECT_THROW(make_problem<float>(a.view(), false, wrong.view(), false, c.view()), Error);
  // Transposed A: stored K x M.
  Matrix<float> at(3, 4);
  GemmProblem pt = make_problem<float>(at.view(), true, b.view(), false, c.view());
  EXPECT_EQ(pt.m, 4);
  EXPECT_EQ(pt.k, 3);
  EXPECT_EQ(pt.shape_string(), "4x5x3 (A^T)");
}

TEST(Layout, NamesRoundTrip) {
  for (Layout layout : {Layout::row_major, Layout::col_major})
    EXPECT_EQ(parse_layout(layout_name(layout)), layout);
  EXPECT_EQ(layout_name(Layout::col_major), "col");
  EXPECT_FALSE(parse_layout("column").has_value());
  EXPECT_FALSE(parse_layout("").has_value());
}

TEST(GemmProblem, OutputDtypeIsF32ForHalfInputsOnly) {
  Matrix<float> a(4, 3), b(3, 5), c(4, 5);
  GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  EXPECT_EQ(p.c_dtype(), DType::f32);
  p.out_dtype = DType::f32;  // the same as the inputs: allowed
  EXPECT_NO_THROW(validate(p));
  p.out_dtype = DType::f64;
  EXPECT_THROW(validate(p), Error);
  for (DType half : {DType::f16, DType::bf16}) {
    p.dtype = half;
    p.out_dtype = DType::f32;
    EXPECT_NO_THROW(validate(p));
    EXPECT_EQ(p.c_dtype(), DType::f32);
    p.out_dtype = half == DType::f16 ? DType::bf16 : DType::f16;
    EXPECT_THROW(validate(p), Error);
  }
}

TEST(Registry, EntriesAreWellFormed) {
  const Registry<GemmProblem>& r = gemm_registry();
  ASSERT_FALSE(r.entries().empty());
  std::set<std::string> names;
  for (const KernelEntry& e : r.entries()) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate " << e.name;
    EXPECT_FALSE(e.dtypes.empty()) << e.name;
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_TRUE(e.run) << e.name;
    if (e.backend == Backend::cuda) {
      EXPECT_GT(e.min_compute_capability, 0) << e.name;
    }
  }
  for (const char* name : {"cpu_naive", "cpu_restrict", "cpu_blocked", "cpu_openblas"})
    EXPECT_NE(r.find(name), nullptr) << name;
  EXPECT_EQ(r.find("no_such_kernel"), nullptr);
  try {
    r.get("no_such_kernel");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("cpu_naive"), std::string::npos);  // lists known names
  }
  auto cpu = r.of_backend(Backend::cpu);
  ASSERT_FALSE(cpu.empty());
  EXPECT_EQ(cpu.front()->role, KernelRole::reference);  // references first
  for (std::size_t i = 2; i < cpu.size(); ++i) EXPECT_LE(cpu[i - 1]->rung, cpu[i]->rung);
}

TEST(Dispatch, AutoPicksACpuKernelAndComputesTheProduct) {
  auto a = std::get<Matrix<double>>(random_matrix(37, 23, DType::f64, Distribution::parse("uniform"), 1));
  auto b = std::get<Matrix<double>>(random_matrix(23, 41, DType::f64, Distribution::parse("uniform"), 2));
  Matrix<double> c(37, 41);
  GemmProblem p = make_problem<double>(a.view(), false, b.view(), false, c.view());
  GemmOptions cpu;
  cpu.backend = Backend::cpu;
  const std::string used = gemm(p, cpu);
  EXPECT_EQ(gemm_registry().get(used).backend, Backend::cpu);
  const VerifyResult check = verify(p, nullptr, VerifyMode::full);
  EXPECT_TRUE(check.passed) << check.error;

  // Integers go to an integer-capable kernel, exactly.
  auto ai = std::get<Matrix<std::int64_t>>(random_matrix(9, 7, DType::i64, Distribution::parse("ints:-1000:1000"), 3));
  auto bi = std::get<Matrix<std::int64_t>>(random_matrix(7, 5, DType::i64, Distribution::parse("ints:-1000:1000"), 4));
  Matrix<std::int64_t> ci(9, 5);
  GemmProblem pi = make_problem<std::int64_t>(ai.view(), false, bi.view(), false, ci.view());
  gemm(pi, cpu);
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 5; ++j) {
      std::int64_t s = 0;
      for (std::int64_t q = 0; q < 7; ++q) s += ai(i, q) * bi(q, j);
      EXPECT_EQ(ci(i, j), s);
    }
}

TEST(Dispatch, ExplicitKernelErrors) {
  Matrix<std::int32_t> a(2, 2), b(2, 2), c(2, 2);
  GemmProblem p = make_problem<std::int32_t>(a.view(), false, b.view(), false, c.view());
  GemmOptions o;
  o.kernel = "cpu_openblas";  // floats only
  try {
    gemm(p, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::usage);
    EXPECT_NE(std::string(e.what()).find("i32"), std::string::npos);
  }
  o.kernel = "cpu_naive";
  o.backend = Backend::cuda;
  EXPECT_THROW(gemm(p, o), Error);
}

TEST(Dispatch, CudaWithoutDeviceIsAClearError) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  Matrix<float> a(2, 2), b(2, 2), c(2, 2);
  GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  GemmOptions o;
  o.backend = Backend::cuda;
  EXPECT_THROW(gemm(p, o), Error);
  EXPECT_FALSE(query_devices().message.empty());
  EXPECT_TRUE(query_devices().devices.empty());
}

TEST(DeviceInfo, DerivedPeaks) {
  DeviceInfo h200;
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.clock_khz = 1980000;
  h200.memory_clock_khz = 2619000;
  h200.memory_bus_width_bits = 6144;
  // 2 x 128 lanes x 132 SMs x 1.98 GHz = 66.9 TFLOP/s; 2 x 2.619 GHz x 768 B = 4023 GB/s.
  EXPECT_NEAR(h200.fp32_peak_tflops(), 66.9, 0.1);
  EXPECT_NEAR(h200.memory_bandwidth_gbs(), 4022.8, 1.0);
}

// A kernel that records its name's first letter and fills C with `value`.
static KernelEntry recording_entry(const std::string& name, Backend backend, std::string& log,
                                   float value) {
  KernelEntry e;
  e.name = name;
  e.backend = backend;
  e.dtypes = {DType::f32};
  e.run = [&log, name, value](const GemmProblem& q, const KernelLaunch&) {
    log += name.front();
    float* c = static_cast<float*>(q.c);
    for (std::int64_t i = 0; i < q.m; ++i)
      for (std::int64_t j = 0; j < q.n; ++j) c[i * q.ldc + j] = value;
  };
  return e;
}

TEST(Timing, PairedRunsAlternateInAbbaOrderAndCHoldsTheEntrysResult) {
  Matrix<float> a(3, 2), b(2, 4), c(3, 4);
  GemmProblem p = make_problem<float>(a.view(), false, b.view(), false, c.view());
  std::string log;
  const KernelEntry entry = recording_entry("Entry", Backend::cpu, log, 1.0f);
  const KernelEntry reference = recording_entry("Reference", Backend::cpu, log, 2.0f);
  const PairedTimes t = time_kernel_beside(entry, reference, p, {1, 5, 60.0});
  EXPECT_EQ(log, "ER" "ERREERRE" "ER");  // warm-up pair, then ABBA; the last pair ends on R
  EXPECT_EQ(t.entry.size(), 5u);
  EXPECT_EQ(t.reference.size(), 5u);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(c(i, j), 1.0f) << i << "," << j;
}

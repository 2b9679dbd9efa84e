// The library's integer rule (gemmkit/gemm.hpp): every host-memory integer GEMM returns the
// exact result or fails naming the entry, through every entry point and kernel, whatever the
// layout or batch; the CPU's int8 (C in i32) and i32 -> i64 GEMMs; the kernel lookup ("" is
// not auto); and sizes whose spans overflow refused before anything runs.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gemmkit/context.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"
#include "host/cli_test_support.hpp"

namespace gemmkit {
namespace {

// op(A) op(B) (row-major, no transposes) in 128 bits, then alpha x + beta c0.
template <class T, class CT>
std::vector<int128_t> exact_product(const std::vector<T>& a, const std::vector<T>& b, std::int64_t m,
                                    std::int64_t n, std::int64_t k, std::int64_t alpha = 1, std::int64_t beta = 0,
                                    const std::vector<CT>* c0 = nullptr) {
  std::vector<int128_t> c(std::size_t(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      int128_t sum = 0;
      for (std::int64_t l = 0; l < k; ++l) sum += int128_t(a[i * k + l]) * b[l * n + j];
      c[i * n + j] = alpha * sum + (beta ? beta * int128_t((*c0)[i * n + j]) : 0);
    }
  return c;
}

template <class T>
constexpr DType dtype_for() {
  if constexpr (std::is_same_v<T, std::int8_t>) return DType::i8;  // no host matrix type has it
  else return dtype_of<T>;
}

// A row-major problem on the vectors, leading dimensions the widths.
template <class T, class CT = T>
GemmProblem problem_of(const std::vector<T>& a, const std::vector<T>& b, std::vector<CT>& c, std::int64_t m,
                       std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.dtype = dtype_for<T>();
  if constexpr (!std::is_same_v<T, CT>) p.out_dtype = dtype_of<CT>;
  p.m = m, p.n = n, p.k = k;
  p.a = a.data(), p.lda = k;
  p.b = b.data(), p.ldb = n;
  p.c = c.data(), p.ldc = n;
  return p;
}

// The ways a host-memory GEMM is asked for: the device API on the CPU context (both
// overloads) and the host API.
enum class EntryPoint { device_pool, device_workspace, host };
const char* name_of(EntryPoint e) {
  return e == EntryPoint::device_pool ? "device API" : e == EntryPoint::device_workspace ? "device API, workspace"
                                                                                           : "host API";
}
void run(EntryPoint e, const GemmProblem& p, const std::string& kernel = "auto") {
  static Context ctx(Backend::cpu);
  GemmOptions options;
  options.kernel = kernel;
  if (e == EntryPoint::device_pool) gemm(ctx, p, nullptr, options);
  else if (e == EntryPoint::device_workspace) gemm(ctx, p, nullptr, Workspace{}, options);
  else gemm(p, GemmOptions{.backend = Backend::cpu, .kernel = kernel});
}

// The message and entry of the OverflowError `f` throws (fails the test if it throws none).
template <class F>
OverflowError overflow_of(F&& f) {
  try {
    f();
  } catch (const OverflowError& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an OverflowError: " << e.what();
    return OverflowError(-1, -1, "", "");
  }
  ADD_FAILURE() << "no error: the result was allowed to wrap";
  return OverflowError(-1, -1, "", "");
}

std::vector<std::string> integer_kernels(DType dtype) {
  std::vector<std::string> names;
  for (const KernelEntry* e : gemm_registry().of_backend(Backend::cpu))
    if (e->supports(dtype)) names.push_back(e->name);
  return names;
}

TEST(IntegerRule, TheIssuesProductFailsNamingTheEntryEverywhere) {
  // 4 x 4 of 2^40: each entry is 4 * 2^80, 0 modulo 2^64 (it used to come back as 0).
  const std::vector<std::int64_t> big(16, std::int64_t{1} << 40);
  ASSERT_FALSE(integer_kernels(DType::i64).empty());
  for (EntryPoint e : {EntryPoint::device_pool, EntryPoint::device_workspace, EntryPoint::host})
    for (const std::string& kernel : integer_kernels(DType::i64)) {
      SCOPED_TRACE(std::string(name_of(e)) + " " + kernel);
      std::vector<std::int64_t> c(16, 7);
      const OverflowError x = overflow_of([&] { run(e, problem_of(big, big, c, 4, 4, 4), kernel); });
      EXPECT_EQ(x.row(), 0);
      EXPECT_EQ(x.col(), 0);
      EXPECT_EQ(x.value(), "4835703278458516698824704");
      EXPECT_STREQ(x.what(), "numeric overflow: the exact result at (0, 0) is 4835703278458516698824704, "
                             "which does not fit i64");
    }
}

TEST(IntegerRule, TheFirstEntryThatDoesNotFitIsNamedInTheCallersLayout) {
  // Only entry (1, 2) of C leaves i32: row 1 of A times column 2 of B is 2^15 2^15 + 2^15 2^15.
  const std::int64_t m = 3, n = 4, k = 2;
  const std::int32_t h = 1 << 15;
  const std::int32_t a[3][2] = {{1, 2}, {h, h}, {-3, 5}};
  const std::int32_t b[2][4] = {{1, 2, h, 4}, {5, 6, h, 8}};
  for (const Layout layout : {Layout::row_major, Layout::col_major}) {
    SCOPED_TRACE(layout_name(layout));
    const bool row = layout == Layout::row_major;
    std::vector<std::int32_t> sa(std::size_t(m * k)), sb(std::size_t(k * n)), c(std::size_t(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t l = 0; l < k; ++l) sa[std::size_t(row ? i * k + l : l * m + i)] = a[i][l];
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j) sb[std::size_t(row ? l * n + j : j * k + l)] = b[l][j];
    GemmProblem p = problem_of(sa, sb, c, m, n, k);
    p.layout = layout;
    if (!row) p.lda = m, p.ldb = k, p.ldc = m;
    for (EntryPoint e : {EntryPoint::device_pool, EntryPoint::host}) {
      const OverflowError x = overflow_of([&] { run(e, p); });
      EXPECT_EQ(x.row(), 1) << name_of(e);
      EXPECT_EQ(x.col(), 2) << name_of(e);
      EXPECT_EQ(x.value(), "2147483648");
    }
  }
}

TEST(IntegerRule, AlphaBetaAndC0CountAndCancellingTermsPass) {
  // 3 * 2^30 + (2^31 - 1) with beta = 1 leaves i32; with beta = -1 it fits.
  const std::vector<std::int32_t> a = {1 << 15}, b = {1 << 15};
  for (EntryPoint e : {EntryPoint::device_pool, EntryPoint::host}) {
    SCOPED_TRACE(name_of(e));
    std::vector<std::int32_t> c = {std::numeric_limits<std::int32_t>::max()};
    GemmProblem p = problem_of(a, b, c, 1, 1, 1);
    p.alpha = 3, p.beta = 1;
    EXPECT_EQ(overflow_of([&] { run(e, p); }).value(), "5368709119");
    c = {std::numeric_limits<std::int32_t>::max()};
    p.beta = -1;
    run(e, p);
    EXPECT_EQ(c[0], 3 * (std::int64_t{1} << 30) - std::numeric_limits<std::int32_t>::max());
  }
  // Terms past the range whose sum fits: the bound cannot prove it, the modular check does.
  const std::int64_t big = std::int64_t{1} << 62;
  const std::vector<std::int64_t> x = {big, -big, big, -big, big, -big, -big, big}, ones(8, 1);
  std::vector<std::int64_t> c(4, -1);
  GemmProblem p = problem_of(x, ones, c, 2, 2, 4);
  ASSERT_FALSE(integer_result_bounded(p, nullptr));
  run(EntryPoint::device_pool, p);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 0, 0, 0}));
  // ... and whose sum does not: row 1 is 3 + 2^62 + 2^62 - 3.
  const std::vector<std::int64_t> y = {big, -big, big, -big, 3, big, big, -3};
  const OverflowError e = overflow_of([&] { run(EntryPoint::device_pool, problem_of(y, ones, c, 2, 2, 4)); });
  EXPECT_EQ(e.row(), 1);
  EXPECT_EQ(e.col(), 0);
  EXPECT_EQ(e.value(), "9223372036854775808");
}

TEST(IntegerRule, ABatchNamesTheProduct) {
  // Two 1 x 1 x 1 products; the second, 2^16 2^15 = 2^31, leaves i32.
  const std::vector<std::int32_t> a = {3, 1 << 16}, b = {5, 1 << 15};
  std::vector<std::int32_t> c(2);
  GemmProblem p = problem_of(a, b, c, 1, 1, 1);
  p.batch = 2, p.stride_a = p.stride_b = p.stride_c = 1;
  try {
    run(EntryPoint::device_pool, p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_STREQ(e.what(), "numeric overflow: the exact result at (0, 0) is 2147483648, which does not fit i32 "
                           "(product 1 of the batch)");
  }
}

TEST(IntegerRule, TheBoundProvesSmallProductsAndTheCheckFindsAWrongEntry) {
  std::vector<std::int64_t> a = {1, -2, 3, 4}, b = {5, 6, -7, 8};
  std::vector<std::int64_t> c(4);
  GemmProblem p = problem_of(a, b, c, 2, 2, 2);
  EXPECT_TRUE(integer_result_bounded(p, nullptr));
  a[0] = std::int64_t{1} << 61;
  EXPECT_FALSE(integer_result_bounded(p, nullptr));  // 2^61 * 6 + 2 * 8 may leave i64
  a[0] = 1;
  const std::vector<int128_t> want = exact_product<std::int64_t, std::int64_t>(a, b, 2, 2, 2);
  for (std::size_t i = 0; i < 4; ++i) c[i] = std::int64_t(want[i]);
  EXPECT_NO_THROW(check_integer_result(p, nullptr));
  c[3] += 1;  // a kernel's fault, not an overflow
  try {
    check_integer_result(p, nullptr);
    ADD_FAILURE() << "a wrong entry passed";
  } catch (const OverflowError&) {
    ADD_FAILURE() << "a wrong entry reported as an overflow";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::numeric);
    EXPECT_NE(std::string(e.what()).find("entry (1, 1) is " + std::to_string(c[3]) + ", the exact result is " +
                                         std::to_string(c[3] - 1)),
              std::string::npos)
        << e.what();
  }
}

TEST(IntegerRule, Int8InputsGiveExactInt32OnTheCpu) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> byte(-128, 127), small(-1000, 1000);
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{1, 1, 1}, {7, 17, 5}, {37, 29, 1031}, {150, 3, 520}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    std::vector<std::int8_t> a(std::size_t(m * k)), b(std::size_t(k * n));
    for (auto& x : a) x = std::int8_t(byte(rng));
    for (auto& x : b) x = std::int8_t(byte(rng));
    std::vector<std::int32_t> c0(std::size_t(m * n));
    for (auto& x : c0) x = small(rng);
    std::vector<std::int32_t> c = c0;
    GemmProblem p = problem_of(a, b, c, m, n, k);
    p.alpha = -3, p.beta = 2;
    run(EntryPoint::device_pool, p);  // auto: cpu_blocked, the CPU's int8 kernel
    const std::vector<int128_t> want = exact_product<std::int8_t, std::int32_t>(a, b, m, n, k, -3, 2, &c0);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < c.size(); ++i) wrong += c[i] != want[i];
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(choose_gemm_kernel(Context(Backend::cpu), p).name, "cpu_blocked");
  }
  // Past int32: 140000 products of (-128)^2.
  const std::vector<std::int8_t> row(140000, -128);
  std::vector<std::int32_t> c(1);
  GemmProblem p = problem_of(row, row, c, 1, 1, 140000);
  EXPECT_EQ(overflow_of([&] { run(EntryPoint::host, p); }).value(), "2293760000");
}

TEST(IntegerRule, I32InputsWithCInI64RunOnTheCpu) {
  const std::int32_t top = std::numeric_limits<std::int32_t>::max(), bottom = std::numeric_limits<std::int32_t>::min();
  const std::vector<std::int32_t> a = {top, top, bottom, 1, -7, bottom}, b = {top, bottom, 3, 1, top, bottom};
  std::vector<std::int64_t> c(9, 99);
  const GemmProblem p = problem_of(a, b, c, 3, 3, 2);
  const std::vector<int128_t> want = exact_product<std::int32_t, std::int64_t>(a, b, 3, 3, 2);
  EXPECT_EQ(gemm(p, GemmOptions{.backend = Backend::cpu}), "cpu_blocked");
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], want[i]) << i;
  EXPECT_THROW(run(EntryPoint::device_pool, p, "cpu_naive"), Error);  // it writes C as i32 only
}

TEST(IntegerRule, OnlyAutoOrANameChoosesAKernel) {
  const std::vector<double> a = {1, 2, 3, 4};
  std::vector<double> c(4);
  const GemmProblem p = problem_of(a, a, c, 2, 2, 2);
  const Context ctx(Backend::cpu);
  EXPECT_EQ(GemmOptions{}.kernel, "auto");
  EXPECT_NO_THROW(choose_gemm_kernel(ctx, p, GemmOptions{.kernel = "auto"}));
  for (EntryPoint e : {EntryPoint::device_pool, EntryPoint::device_workspace, EntryPoint::host}) {
    SCOPED_TRACE(name_of(e));
    try {
      run(e, p, "");
      ADD_FAILURE() << "the empty kernel name ran";
    } catch (const Error& x) {
      EXPECT_EQ(x.category(), ErrorCategory::usage);
      EXPECT_NE(std::string(x.what()).find("unknown kernel ''"), std::string::npos) << x.what();
    }
  }
}

TEST(IntegerRule, SpansBeyondTheAddressableAreRefused) {
  // m = n = 2^40 over a tiny buffer: C would span 2^80 elements; refused before any kernel.
  double tiny[4] = {};
  GemmProblem p;
  p.dtype = DType::f64;
  p.m = p.n = std::int64_t{1} << 40, p.k = 1;
  p.a = p.b = p.c = tiny;
  p.lda = 1, p.ldb = p.ldc = p.n;
  for (const Layout layout : {Layout::row_major, Layout::col_major}) {
    p.layout = layout;
    if (layout == Layout::col_major) p.lda = p.m, p.ldb = 1, p.ldc = p.m;
    try {
      validate(p);
      ADD_FAILURE() << "validated";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::usage);
      EXPECT_NE(std::string(e.what()).find("C would span more than 2^63 bytes"), std::string::npos) << e.what();
    }
  }
  // A batch whose strides overflow.
  GemmProblem q;
  q.dtype = DType::f32, q.m = q.n = q.k = 1, q.a = q.b = q.c = tiny, q.lda = q.ldb = q.ldc = 1;
  q.batch = std::int64_t{1} << 40, q.stride_a = std::int64_t{1} << 40, q.stride_c = 1;
  EXPECT_THROW(validate(q), Error);
  q.stride_a = 0;
  EXPECT_NO_THROW(validate(q));
}

// The command line goes through the same lookup: --kernel '' is no kernel (exit 2, nothing
// written), as an unknown name is.
class KernelNameCli : public test::CliTest {};

TEST_F(KernelNameCli, AnEmptyKernelNameIsABadOption) {
  const std::string a = write_file("A.csv", "1,2\n3,4\n"), c = path("C.csv");
  for (const char* dtype : {"f64", "i64"}) {
    SCOPED_TRACE(dtype);
    const test::CliResult r = run("multiply " + a + " " + a + " -o " + c + " --dtype " + dtype + " --kernel ''");
    expect_error(r, 2, "unknown kernel ''");
    EXPECT_FALSE(std::filesystem::exists(c));
  }
  const test::CliResult ok = run("multiply " + a + " " + a + " -o " + c + " --kernel auto");
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(read_file(c), "7,10\n15,22\n");
}

}  // namespace
}  // namespace gemmkit

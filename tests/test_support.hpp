// Shared test helpers: seeded random GEMM problems built to catch what kernels get wrong at
// the edges of the contract, and a comparison with the oracle of verify.hpp.
//   - Every leading dimension can be wider than its matrix; the padding holds poison (NaN,
//     or a large integer) that ruins the result if a kernel reads it, and C's padding must
//     come back untouched.
//   - With beta == 0, C starts as NaN (floats) or garbage (integers): C is write-only then.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "gemmkit/gemm.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/matrix.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::test {

// What a CPU kernel's run() is called with in tests that call an entry directly.
inline const KernelLaunch& cpu_launch() {
  static Context context(Backend::cpu);
  static const KernelLaunch launch{context, nullptr, {}};
  return launch;
}

struct ProblemSpec {
  DType dtype = DType::f32;  // f32, f64, i32, i64, f16, bf16 or tf32 (stored as f32)
  bool out_f32 = false;      // C in f32 (f16 and bf16 inputs only)
  std::int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  std::int64_t pad = 0;  // every leading dimension is its matrix's width + pad
  std::uint64_t seed = 1;
  // Values of A, B and C; default uniform [-1, 1) for floats, ints:-9:9 for integers.
  std::optional<Distribution> distribution;

  std::string to_string() const {
    GemmProblem p;
    p.m = m, p.n = n, p.k = k, p.trans_a = trans_a, p.trans_b = trans_b;
    return p.shape_string() + " " + std::string(dtype_name(dtype)) + " alpha " +
           (out_f32 ? " -> f32" : "") + " alpha " + std::to_string(alpha) + " beta " +
           std::to_string(beta) + " pad " +
           std::to_string(pad) + " seed " + std::to_string(seed);
  }
};

// A value no correct kernel ever lets into a result: NaN, or a large integer.
template <class T>
T poison() {
  if constexpr (is_float_storage_v<T>) return T(std::numeric_limits<float>::quiet_NaN());
  else return std::numeric_limits<T>::max() / 3;
}

// Host storage of one problem: A, B, C and a copy of C as it was (C0).
class TestProblem {
 public:
  explicit TestProblem(const ProblemSpec& spec) : spec_(spec) {
    switch (spec.dtype) {
      case DType::f32:
      case DType::tf32: init<float, float>(); break;
      case DType::f64: init<double, double>(); break;
      case DType::i32: init<std::int32_t, std::int32_t>(); break;
      case DType::i64: init<std::int64_t, std::int64_t>(); break;
      case DType::f16: spec.out_f32 ? init<Half, float>() : init<Half, Half>(); break;
      case DType::bf16: spec.out_f32 ? init<BFloat16, float>() : init<BFloat16, BFloat16>(); break;
      default: ADD_FAILURE() << "TestProblem: no host storage for " << dtype_name(spec.dtype);
    }
  }

  const ProblemSpec& spec() const { return spec_; }

  // The problem on this storage; its C is the live result.
  GemmProblem problem() {
    GemmProblem p = make_problem(a_, spec_.trans_a, b_, spec_.trans_b, c_, spec_.alpha, spec_.beta);
    p.dtype = spec_.dtype;  // tf32: f32 storage
    return p;
  }
  // C as it was before any GEMM ran on it (same leading dimension as C).
  const void* c_before() const {
    return std::visit([](const auto& c0) -> const void* { return c0.data(); }, c0_);
  }
  void restore_c() { c_ = c0_; }

  // Element (i, p) of op(A) and (p, j) of op(B), wherever the transpose put them.
  template <class T>
  T& op_a(std::int64_t i, std::int64_t p) {
    auto& a = std::get<Matrix<T>>(a_);
    return spec_.trans_a ? a(p, i) : a(i, p);
  }
  template <class T>
  T& op_b(std::int64_t p, std::int64_t j) {
    auto& b = std::get<Matrix<T>>(b_);
    return spec_.trans_b ? b(j, p) : b(p, j);
  }
  template <class T>
  Matrix<T>& c() { return std::get<Matrix<T>>(c_); }

  // Compares C with the oracle: floats by verify()'s full check (relative Frobenius error within
  // tolerance(dtype, k), and each entry within its share), integers exactly; and checks that
  // C's padding was not written.
  ::testing::AssertionResult matches_reference() {
    const GemmProblem p = problem();
    std::string padding;
    std::visit(
        [&](const auto& c) {
          const auto& c0 = std::get<std::decay_t<decltype(c)>>(c0_);
          if (c.size() == 0) return;  // an empty matrix stores no padding
          for (std::int64_t i = 0; i < c.rows() && padding.empty(); ++i)
            for (std::int64_t j = c.cols(); j < c.ld(); ++j)
              if (!same_bits(c(i, j), c0(i, j))) {
                padding = "padding of C at (" + std::to_string(i) + ", " + std::to_string(j) +
                          ") was written";
                break;
              }
        },
        c_);
    if (!padding.empty()) return ::testing::AssertionFailure() << spec_.to_string() << ": " << padding;
    return std::visit(
        [&](const auto& c) -> ::testing::AssertionResult {
          using T = typename std::decay_t<decltype(c)>::value_type;
          if constexpr (std::is_integral_v<T>) {
            const std::vector<int128_t> exact = reference_gemm_exact(p, c_before());
            for (std::int64_t i = 0; i < p.m; ++i)
              for (std::int64_t j = 0; j < p.n; ++j)
                if (c(i, j) != exact[i * p.n + j])
                  return ::testing::AssertionFailure()
                         << spec_.to_string() << ": entry (" << i << ", " << j << ") is "
                         << static_cast<long long>(c(i, j)) << ", expected "
                         << static_cast<long long>(exact[i * p.n + j]);
            return ::testing::AssertionSuccess();
          } else {
            // The full check: the relative Frobenius error and every entry within its own
            // share of the tolerance (a Frobenius norm alone lets one wrong entry of a large
            // C pass).
            const VerifyResult r = verify(p, c_before(), VerifyMode::full);
            if (r.passed) return ::testing::AssertionSuccess();
            return ::testing::AssertionFailure() << spec_.to_string() << ": error " << r.error
                                                 << " > tolerance " << r.tolerance << ": " << r.detail;
          }
        },
        c_);
  }

 private:
  template <class T>
  static bool same_bits(T x, T y) {
    const double dx = static_cast<double>(x), dy = static_cast<double>(y);
    return dx == dy || (std::isnan(dx) && std::isnan(dy));
  }

  // rows x cols with ld = cols + pad (at least 1), random inside and poison in the padding.
  template <class T>
  Matrix<T> make(std::int64_t rows, std::int64_t cols, std::uint64_t seed, bool poisoned) const {
    Matrix<T> x(rows, cols, std::max<std::int64_t>(cols + spec_.pad, 1));
    if (x.size() == 0) return x;  // an empty matrix stores nothing, padding included
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = cols; j < x.ld(); ++j) x(i, j) = poison<T>();
    if (poisoned) {
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) x(i, j) = poison<T>();
    } else {
      const Distribution d = spec_.distribution.value_or(
          std::is_integral_v<T> ? Distribution::parse("ints:-9:9") : Distribution{});
      fill_random(MatrixView<T>(x.data(), rows, cols, x.ld()), d, seed);
    }
    return x;
  }

  // Clears the 13 low mantissa bits of every stored value; the padding's NaN stays NaN.
  static void cut_to_tf32(Matrix<float>& m) {
    if (m.size() == 0) return;  // an empty matrix stores nothing
    for (std::int64_t i = 0; i < m.rows(); ++i)
      for (std::int64_t j = 0; j < m.ld(); ++j) {
        if (std::isnan(m(i, j))) continue;
        std::uint32_t bits;
        std::memcpy(&bits, &m(i, j), 4);
        bits &= ~0x1fffu;
        std::memcpy(&m(i, j), &bits, 4);
      }
  }

  // T: the inputs' storage; CT: C's.
  template <class T, class CT>
  void init() {
    const ProblemSpec& s = spec_;
    a_ = make<T>(s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.seed * 4 + 1, false);
    b_ = make<T>(s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.seed * 4 + 2, false);
    c_ = make<CT>(s.m, s.n, s.seed * 4 + 3, s.beta == 0);
    // tf32 inputs hold tf32 values, so that what a kernel reads is what the reference
    // multiplies: the check is of its arithmetic, not of the format (whose error relative to
    // a cancelling result has no bound).
    if (s.dtype == DType::tf32) {
      cut_to_tf32(std::get<Matrix<float>>(a_));
      cut_to_tf32(std::get<Matrix<float>>(b_));
    }
    c0_ = c_;
  }

  ProblemSpec spec_;
  AnyMatrix a_, b_, c_, c0_;
};

}  // namespace gemmkit::test

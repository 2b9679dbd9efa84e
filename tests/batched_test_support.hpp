// Strided-batch test cases, shared by the CPU (tests/host) and GPU (tests/gpu) suites: each
// operand of a batch is one buffer holding its matrices at a fixed stride, with poison in
// the leading-dimension padding and in gaps between the matrices; after a run, every matrix
// of C is checked against the reference of verify.hpp, and nothing else of C may change.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fault_injection.hpp"
#include "gemmkit/gemm.hpp"
#include "gemmkit/half.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit::test {

struct BatchCase {
  std::int64_t m, n, k, batch;
  bool ta = false, tb = false;
  Layout layout = Layout::row_major;
  std::int64_t gap = 0;     // stored rows of poison between one matrix and the next
  bool shared_a = false;    // stride_a = 0: one A for every product
  bool beta_zero = false;   // beta = 0 over a NaN-poisoned C; else random alpha and beta
  bool odd_ld = false;      // odd leading dimensions; else multiples of 8 (16-byte rows)
  VerifyMode verify = VerifyMode::full;
  bool integers = false;    // integer values -9..9 in every dtype (floats too)

  std::string describe(DType dtype) const {
    std::ostringstream out;
    out << batch << " x " << m << "x" << n << "x" << k << (ta ? " A^T" : "") << (tb ? " B^T" : "")
        << (layout == Layout::col_major ? " col-major" : " row-major") << " gap " << gap
        << (shared_a ? " shared A" : "") << (beta_zero ? " beta 0" : " beta != 0")
        << (odd_ld ? " odd ld" : "") << (integers ? " integers" : "") << " " << dtype_name(dtype);
    return out.str();
  }
};

// Odd shapes, batches of 1, 3 and 7, the four transposes, both layouts, gaps between the
// matrices, a shared A, beta zero and not, odd leading dimensions. Small, so that the
// double reference stays cheap.
inline std::vector<BatchCase> batch_cases() {
  const Layout row = Layout::row_major, col = Layout::col_major;
  return {
      {.m = 37, .n = 53, .k = 29, .batch = 1},
      {.m = 37, .n = 53, .k = 29, .batch = 3, .ta = true, .gap = 1},
      {.m = 67, .n = 130, .k = 97, .batch = 7, .tb = true, .beta_zero = true},
      {.m = 130, .n = 67, .k = 70, .batch = 3, .ta = true, .tb = true, .layout = col, .gap = 2},
      {.m = 45, .n = 261, .k = 130, .batch = 7, .shared_a = true},
      {.m = 300, .n = 257, .k = 65, .batch = 3, .ta = true, .layout = col, .shared_a = true,
       .beta_zero = true},
      {.m = 1, .n = 1, .k = 1, .batch = 7, .layout = col},
      {.m = 129, .n = 255, .k = 200, .batch = 3, .tb = true, .gap = 3, .beta_zero = true},
      {.m = 33, .n = 17, .k = 65, .batch = 7, .layout = row, .gap = 1, .odd_ld = true},
      {.m = 64, .n = 96, .k = 80, .batch = 3, .ta = true, .tb = true, .gap = 1,
       .shared_a = true, .odd_ld = true},
  };
}

// One case's operands in host memory. problem points into a, b and c.
class BatchData {
 public:
  // storage: the dtype of the stored elements (f32 for tf32 problems).
  BatchData(const BatchCase& bc, DType dtype, std::uint64_t seed) : case_(bc), seed_(seed) {
    storage_ = dtype == DType::tf32 ? DType::f32 : dtype;
    elem_ = dtype_size(storage_);
    std::mt19937_64 rng(seed);
    GemmProblem& p = problem;
    p.dtype = dtype;
    p.trans_a = bc.ta, p.trans_b = bc.tb;
    p.m = bc.m, p.n = bc.n, p.k = bc.k;
    p.layout = bc.layout;
    p.batch = bc.batch;
    std::uniform_real_distribution<double> scalar(0.5, 2.0);
    const bool ints = is_integer(dtype) || bc.integers;
    p.alpha = ints ? double(1 + rng() % 3) : scalar(rng);
    p.beta = bc.beta_zero ? 0.0 : (ints ? -double(1 + rng() % 2) : -scalar(rng));
    // Stored shapes: a column-major matrix lies in memory as its transpose.
    const bool col = bc.layout == Layout::col_major;
    const auto make = [&](std::vector<unsigned char>& buffer, std::int64_t rows,
                          std::int64_t cols, std::int64_t count, std::int64_t& ld,
                          std::int64_t& stride, bool poison_inside) {
      const std::int64_t outer = col ? cols : rows, inner = col ? rows : cols;
      ld = bc.odd_ld ? (inner % 2 == 0 ? inner + 1 : inner + 2) : (inner + 1 + 7) / 8 * 8;
      stride = (outer + bc.gap) * ld;
      buffer.assign(std::size_t(count * stride * std::int64_t(elem_)), 0);
      for (std::int64_t i = 0; i < count * stride; ++i) put_poison(buffer.data(), i);
      for (std::int64_t z = 0; z < count; ++z)
        for (std::int64_t r = 0; r < outer; ++r)
          for (std::int64_t j = 0; j < inner; ++j) {
            const std::int64_t at = z * stride + r * ld + j;
            if (!poison_inside) put(buffer.data(), at, random_value(rng, ints));
          }
    };
    std::int64_t lda, ldb, ldc, sa, sb, sc;
    make(a, p.a_rows(), p.a_cols(), bc.shared_a ? 1 : bc.batch, lda, sa, false);
    make(b, p.b_rows(), p.b_cols(), bc.batch, ldb, sb, false);
    make(c, p.m, p.n, bc.batch, ldc, sc, bc.beta_zero);
    p.lda = lda, p.ldb = ldb, p.ldc = ldc;
    p.stride_a = bc.shared_a ? 0 : sa, p.stride_b = sb, p.stride_c = sc;
    p.a = a.data(), p.b = b.data(), p.c = c.data();
    c_before_ = c;
  }

  GemmProblem problem;
  std::vector<unsigned char> a, b, c;

  // Every matrix of C (in `c`) against the reference, and C's padding and gaps unchanged.
  ::testing::AssertionResult check(std::optional<DType> accuracy) const {
    GemmProblem p = problem;
    p.a = a.data(), p.b = b.data(), p.c = const_cast<unsigned char*>(c.data());
    const GemmProblem rm = as_row_major(p);
    std::vector<bool> written(c.size() / elem_, false);
    for (std::int64_t i = 0; i < rm.batch; ++i) {
      const GemmProblem item = batch_item(rm, i);
      const std::ptrdiff_t offset = static_cast<const unsigned char*>(item.c) - c.data();
      const VerifyResult r =
          verify(item, c_before_.data() + offset, case_.verify, seed_ + i, accuracy);
      // Random data is sometimes ill-conditioned (K = 1 with beta != 0: a b and beta c
      // cancel): a result within rounding of the exact one, backwards, is right. Integer
      // data are not (exact products, exact FP32 sums): there the allowance, K + 2 units of
      // the result's dtype (12% for bf16 at K = 29), would hide a dropped term.
      if (!r.passed && !(r.within_rounding && !case_.integers))
        return ::testing::AssertionFailure()
               << case_.describe(p.dtype) << ": matrix " << i << ": error " << r.error << " > "
               << r.tolerance << " " << r.detail;
      for (std::int64_t row = 0; row < item.m; ++row)
        for (std::int64_t j = 0; j < item.n; ++j)
          written[std::size_t(offset / std::ptrdiff_t(elem_) + row * item.ldc + j)] = true;
    }
    for (std::size_t e = 0; e < written.size(); ++e)
      if (!written[e] && std::memcmp(&c[e * elem_], &c_before_[e * elem_], elem_) != 0)
        return ::testing::AssertionFailure() << case_.describe(p.dtype) << ": element " << e
                                             << " of C's buffer, outside every matrix, changed";
    return ::testing::AssertionSuccess();
  }

  // The planted faults of the result in `c` (tests/fault_injection.hpp): those of the first
  // and the last matrix, and a write to the last element of C's buffer, which lies outside
  // every matrix (in a row's padding or a gap).
  std::vector<PlantedFault> faults() {
    std::vector<PlantedFault> all;
    GemmProblem p = problem;
    p.c = c.data();
    for (std::int64_t z : {std::int64_t(0), p.batch - 1})
      for (PlantedFault& f : gemm_faults(batch_item(p, z), "matrix " + std::to_string(z) + ": "))
        all.push_back(std::move(f));
    all.push_back({"the last element of C's buffer, outside every matrix, written",
                   [this] { std::memcpy(&c[c.size() - elem_], &c[0], elem_); }});
    return all;
  }

 private:
  double random_value(std::mt19937_64& rng, bool ints) const {
    if (ints) return double(std::int64_t(rng() % 19) - 9);
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  }
  void put(unsigned char* base, std::int64_t i, double x) const {
    switch (storage_) {
      case DType::f64: reinterpret_cast<double*>(base)[i] = x; break;
      case DType::f32: reinterpret_cast<float*>(base)[i] = float(x); break;
      case DType::f16: reinterpret_cast<Half*>(base)[i] = Half(x); break;
      case DType::bf16: reinterpret_cast<BFloat16*>(base)[i] = BFloat16(x); break;
      case DType::i32: reinterpret_cast<std::int32_t*>(base)[i] = std::int32_t(x); break;
      case DType::i64: reinterpret_cast<std::int64_t*>(base)[i] = std::int64_t(x); break;
      default: ADD_FAILURE() << "no host storage for " << dtype_name(storage_); break;
    }
  }
  // NaN, or for integers a value no correct product of the cases here reaches.
  void put_poison(unsigned char* base, std::int64_t i) const {
    if (storage_ == DType::i32) reinterpret_cast<std::int32_t*>(base)[i] = INT32_MAX / 3;
    else if (storage_ == DType::i64) reinterpret_cast<std::int64_t*>(base)[i] = INT64_MAX / 3;
    else put(base, i, std::numeric_limits<double>::quiet_NaN());
  }

  BatchCase case_;
  std::uint64_t seed_;
  DType storage_;
  std::size_t elem_;
  std::vector<unsigned char> c_before_;
};

}  // namespace gemmkit::test

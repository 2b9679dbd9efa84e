// Double-double arithmetic, hi + lo carrying about 106 bits: the error-free transformations
// (Knuth's TwoSum, TwoProd) and the sums the verification oracle builds from them
// (src/ops/gemm/verify/).
#pragma once

#include <cmath>
#include <cstdint>

#include "arith/int128.hpp"

// Error-free transformations need every sum and product rounded as written: no contraction
// into fused multiply-adds, here and in the rest of every file that includes this one.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace gemmkit {

// s + e == a + b exactly (Knuth's TwoSum).
inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double z = s - a;
  e = (a - (s - z)) + (b - z);
}

// p + e == a * b exactly (TwoProd): one FMA where the target has it, else Dekker's splitting.
inline void two_prod(double a, double b, double& p, double& e) {
  p = a * b;
#ifdef __FMA__
  e = std::fma(a, b, -p);
#else
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double ta = kSplit * a, tb = kSplit * b;
  const double ah = ta - (ta - a), al = a - ah, bh = tb - (tb - b), bl = b - bh;
  e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

// (hi, lo) += a * b.
inline void dd_add_product(double& hi, double& lo, double a, double b) {
  double p, pe, s, e;
  two_prod(a, b, p, pe);
  two_sum(hi, p, s, e);
  hi = s;
  lo += e + pe;
}

// (h, l) += a * b for n entries: the inner loop of the double-double reference. Where the
// build has no FMA but the x86-64 CPU has (the CPU kernels need it anyway), a copy compiled
// for it is used: TwoProd in one instruction, 4 doubles a step.
inline void dd_axpy_portable(double* __restrict h, double* __restrict l, double a,
                             const double* __restrict b, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) dd_add_product(h[j], l[j], a, b[j]);
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__FMA__)
__attribute__((target("avx2,fma"))) inline void dd_axpy_fma(double* __restrict h, double* __restrict l,
                                                            double a, const double* __restrict b,
                                                            std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    const double p = a * b[j], pe = __builtin_fma(a, b[j], -p);
    double s, e;
    two_sum(h[j], p, s, e);
    h[j] = s;
    l[j] += e + pe;
  }
}
inline void dd_axpy(double* h, double* l, double a, const double* b, std::int64_t n) {
  static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (fma) dd_axpy_fma(h, l, a, b, n);
  else dd_axpy_portable(h, l, a, b, n);
}
#else
inline void dd_axpy(double* h, double* l, double a, const double* b, std::int64_t n) {
  dd_axpy_portable(h, l, a, b, n);
}
#endif

// Normalised: hi is hi + lo rounded, lo what rounding left.
inline void dd_normalise(double& hi, double& lo) {
  double s, e;
  two_sum(hi, lo, s, e);
  hi = s;
  lo = e;
}

// The double-double nearest an exact 128-bit integer (exact below 2^106).
inline void int128_to_dd(i128 x, double& hi, double& lo) {
  hi = static_cast<double>(x);
  // x - hi in 128 bits; hi may be 2^127, one past the range, and is then taken in halves.
  if (std::fabs(hi) < 0x1p126) {
    lo = static_cast<double>(x - static_cast<i128>(hi));
  } else {
    const auto half = static_cast<i128>(hi / 2);
    lo = static_cast<double>(x - half - half);
  }
}

}  // namespace gemmkit

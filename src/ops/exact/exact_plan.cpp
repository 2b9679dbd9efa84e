// The host half of the exact integer GEMM: which method and how many int8 GEMMs a bound
// needs, and the words its results take (no device code: the host tests check it), and the
// entry points, which run in its CUDA part (cuda/exact_gemm.cu).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "arith/int128.hpp"
#include "ops/exact/exact_device.hpp"
#include "ops/exact/exact_text.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/modular.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {
namespace {

// Unsigned integers of any size as 64-bit words, least significant first: the bound
// (up to 2^63 * 2^63 * 2^31) and products of primes (up to 2^417) need more than 128 bits.
using Words = std::vector<std::uint64_t>;

Words times(Words x, std::uint64_t f) {
  std::uint64_t carry = 0;
  for (std::uint64_t& w : x) {
    const u128 t = u128(w) * f + carry;
    w = std::uint64_t(t);
    carry = std::uint64_t(t >> 64);
  }
  if (carry) x.push_back(carry);
  return x;
}

Words plus_one(Words x) {
  for (std::uint64_t& w : x)
    if (++w != 0) return x;
  x.push_back(1);
  return x;
}

// a > b
bool greater(Words a, Words b) {
  while (!a.empty() && a.back() == 0) a.pop_back();
  while (!b.empty() && b.back() == 0) b.pop_back();
  if (a.size() != b.size()) return a.size() > b.size();
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] > b[i];
  return false;
}

// Balanced base-256 digits (int8 in [-128, 127]) that t of them represent every |x| <= v:
// their range is [-128 (256^t - 1) / 255, 127 (256^t - 1) / 255], so t with
// 127 (256^t - 1) / 255 >= v.
int balanced_digits(std::uint64_t v) {
  int t = 1;
  u128 top = 127;  // 127 (256^t - 1) / 255
  while (top < v) top = top * 256 + 127, ++t;
  return t;
}

// Two's complement words (mod 2^(64 size)) times a signed factor, and their sum.
Words signed_times(Words x, std::int64_t f) {
  const bool negative = f < 0;
  const std::uint64_t u = negative ? 0ull - std::uint64_t(f) : std::uint64_t(f);
  x = times(std::move(x), u);
  if (negative) {
    std::uint64_t carry = 1;
    for (std::uint64_t& w : x) w = ~w + carry, carry = carry && w == 0;
  }
  return x;
}

}  // namespace

namespace detail {

std::string exact_value_text(const std::uint64_t* x, int limbs, std::int64_t alpha, std::int64_t beta,
                             std::int64_t c0) {
  // Six words beyond X's: alpha X and beta c0 (|alpha|, |beta| <= 2^53) fit with room.
  const std::size_t size = std::size_t(std::max(limbs, 1)) + 6;
  const bool x_negative = limbs > 0 && std::int64_t(x[limbs - 1]) < 0;
  Words v(size, x_negative ? ~0ull : 0ull);
  for (int w = 0; w < limbs; ++w) v[std::size_t(w)] = x[w];
  v = signed_times(std::move(v), alpha);
  v.resize(size);
  Words c(size, c0 < 0 ? ~0ull : 0ull);
  c[0] = std::uint64_t(c0);
  c = signed_times(std::move(c), beta);
  c.resize(size);
  std::uint64_t carry = 0;
  for (std::size_t w = 0; w < size; ++w) {
    const u128 s = u128(v[w]) + c[w] + carry;
    v[w] = std::uint64_t(s);
    carry = std::uint64_t(s >> 64);
  }
  return io::decimal_text(v.data(), int(size));
}

}  // namespace detail

GemmRunReport ExactPlan::report() const {
  return {"exact", describe(), {{"int8_gemms", gemms}, {"moduli", moduli}, {"bound", bound}}};
}

std::string ExactPlan::describe() const {
  char bound_text[32];
  std::snprintf(bound_text, sizeof bound_text, "%.3g", std::stod(bound.empty() ? "0" : bound));
  const std::string of = ", |AB| <= " + std::string(bound_text);
  switch (method) {
    case Method::zero: return "zero product (no GEMM)";
    case Method::residues:
      return "residues mod " + std::to_string(moduli) + " int8 primes (" + std::to_string(gemms) +
             " int8 GEMMs)" + of;
    case Method::digits:
      return "int8 digit slices " + std::to_string(digits_a) + " x " + std::to_string(digits_b) + " (" +
             std::to_string(gemms) + " int8 GEMMs)" + of;
  }
  return "";
}

ExactPlan plan_exact_gemm(std::uint64_t max_abs_a, std::uint64_t max_abs_b, std::int64_t k,
                          bool digits_allowed) {
  if (k < 0) fail(ErrorCategory::usage, "exact GEMM plan: negative k " + std::to_string(k));
  ExactPlan plan;
  plan.max_abs_a = max_abs_a;
  plan.max_abs_b = max_abs_b;
  const Words bound = times(times(Words{max_abs_a}, max_abs_b), std::uint64_t(k));
  Words signed_bound = bound;
  signed_bound.push_back(0);  // a word for the sign: the bound is not negative
  plan.bound = io::decimal_text(signed_bound.data(), int(signed_bound.size()));
  if (!greater(bound, Words{0})) return plan;  // Method::zero
  // P > 2 bound + 1, P the product of the first q moduli (largest first: fewest moduli).
  const Words needed = plus_one(times(bound, 2));
  const std::vector<std::uint32_t>& primes = int8_moduli();
  Words product{1};
  int q = 0;
  while (q < int(primes.size()) && !greater(product, needed)) product = times(product, primes[q++]);
  if (!greater(product, needed))
    fail(ErrorCategory::usage, "exact GEMM: the bound " + plan.bound + " on |op(A) op(B)| needs more than the " +
                                   std::to_string(primes.size()) + " int8 primes cover");
  plan.method = ExactPlan::Method::residues;
  plan.moduli = q;
  plan.gemms = q;
  plan.limbs = crt_limbs(std::vector<std::uint32_t>(primes.begin(), primes.begin() + q));
  // Digit slices: one GEMM per pair of digits; int32 sums of k products of digits
  // (|d_a d_b| <= 2^14) need k <= 131071. Chosen only when fewer GEMMs than residues.
  const int da = balanced_digits(max_abs_a), db = balanced_digits(max_abs_b);
  if (digits_allowed && da * db < q && k <= (std::int64_t{1} << 31) / (1 << 14) - 1) {
    plan.method = ExactPlan::Method::digits;
    plan.digits_a = da, plan.digits_b = db;
    plan.gemms = da * db;
    plan.moduli = 0;
    // |AB| <= bound < 2^(bits), two's complement needs bits + 1.
    int bits = 0;
    for (std::size_t i = bound.size(); i-- > 0;)
      if (bound[i]) { bits = int(64 * i) + 64 - __builtin_clzll(bound[i]); break; }
    plan.limbs = bits / 64 + 1;
  }
  return plan;
}

ExactPlan worst_case_exact_plan(DType dtype, std::int64_t k) {
  if (dtype != DType::i32 && dtype != DType::i64)
    fail(ErrorCategory::usage, "exact GEMM takes i32 and i64, not " + std::string(dtype_name(dtype)));
  const std::uint64_t top = dtype == DType::i32 ? std::uint64_t{1} << 31 : std::uint64_t{1} << 63;
  return plan_exact_gemm(top, top, k, false);
}

int exact_output_limbs(const GemmProblem& p) {
  // alpha X + beta C0 with |alpha|, |beta| <= 2^53 and |C0| <= 2^63: a word more than X when
  // alpha scales X or C0 is added (|X| < 2^(64L-1): alpha X < 2^(64L+52), beta C0 <= 2^116).
  const ExactPlan worst = worst_case_exact_plan(p.dtype, p.k);
  const bool plain = (p.alpha == 1 || p.alpha == -1 || p.alpha == 0) && p.beta == 0;
  return std::max(worst.limbs, 1) + (plain ? 0 : 1);
}

std::size_t exact_integer_gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem) {
  GEMMKIT_CUDA_PART(return exact_detail::workspace_bytes_on_device(ctx, problem);)
  detail::fail_without_cuda();
}

ExactPlan exact_integer_gemm(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace,
                             const ExactLimbsOut* limbs_out) {
  GEMMKIT_CUDA_PART(return exact_detail::gemm_on_device(ctx, problem, stream, workspace, limbs_out);)
  detail::fail_without_cuda();
}

ExactGemmReport exact_gemm_report(const GemmProblem& problem, Stream stream, Workspace workspace) {
  GEMMKIT_CUDA_PART(return exact_detail::report_on_device(problem, stream, workspace);)
  detail::fail_without_cuda();
}

ExactPlan exact_integer_gemm(const GemmProblem& host_problem, const ExactLimbsOut* limbs_out, Context* context) {
  require_cuda_device();
  GEMMKIT_CUDA_PART(return exact_detail::run_host_on_device(host_problem, limbs_out, context);)
  detail::fail_without_cuda();
}

}  // namespace gemmkit

// The Ozaki scheme's plan (gemmkit/ozaki.hpp): how many int8 primes, how many
// bits; and the entry points, which run in its CUDA part (cuda/ozaki_gemm.cu).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gemmkit/device.hpp"
#include "gemmkit/dtype.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/exact.hpp"
#include "gemmkit/modular.hpp"
#include "gemmkit/ozaki.hpp"
#include "ops/ozaki/ozaki_device.hpp"
#include "ops/ozaki/ozaki_ranks.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {
namespace {

// log2 of the product of the first `moduli` int8 primes, less a margin: the
// bound must hold for P itself, not for its rounded logarithm, and with room
// to spare: the rebuild finds the multiple of P to take away in fixed point,
// which needs |C'| < P (1/2 - 2^-13) (cuda/ozaki_steps.cu); log2(1 - 2^-12) > -4e-4.
double log2_product(int moduli) {
  double bits = 0;
  for (int q = 0; q < moduli; ++q) bits += std::log2(double(int8_moduli()[std::size_t(q)]));
  return bits - 1e-3;
}

// The most bits b with 2 k 2^(2b) < P: 2b + log2(k) + 1 < log2(P).

int bits_for(std::int64_t k, int moduli) {
  const double room = log2_product(moduli) - 1 - std::log2(double(std::max<std::int64_t>(k, 1)));
  // Strictly below: 2b < room. And the integers stay within int64 (|A'| <=
  // 2^62).
  int b = int(std::ceil(room / 2)) - 1;
  return std::min(b, 62);
}

}  // namespace

std::string OzakiPlan::describe() const {
  return std::to_string(moduli) + " int8 primes, " + std::to_string(bits) + " bits per row of A and column of B";
}

GemmRunReport OzakiPlan::report() const { return {"ozaki", describe(), {{"moduli", moduli}, {"bits", bits}}}; }

OzakiPlan plan_ozaki(std::int64_t k, int moduli, DType dtype, int extra_bits) {
  if (dtype != DType::f64 && dtype != DType::f32)
    fail(ErrorCategory::usage, "Ozaki emulation: dtype " + std::string(dtype_name(dtype)) + " (f64 and f32 are taken)");
  if (k < 0) fail(ErrorCategory::usage, "Ozaki plan: negative k " + std::to_string(k));
  if (moduli != 0 && (moduli < 2 || moduli > kCrtMaxModuli))
    fail(ErrorCategory::usage,
         "Ozaki emulation takes 2 to " + std::to_string(kCrtMaxModuli) + " moduli, not " + std::to_string(moduli));
  OzakiPlan plan;
  if (moduli == 0) {
    // The largest entries of each row and column keep all the bits of their
    // type's mantissa (53, 24), and extra_bits more: ozaki_gemm passes how far
    // the mean entry of a row or column sits below its largest, so that the
    // mean keeps them too. Measured in docs/exact.md.
    const int wanted = std::min(62, (dtype == DType::f64 ? 53 : 24) + std::clamp(extra_bits, 0, kOzakiMaxExtraBits));
    for (moduli = 2; moduli < kCrtMaxModuli && bits_for(k, moduli) < wanted; ++moduli) {
    }
  }
  plan.moduli = moduli;
  plan.bits = bits_for(k, moduli);
  if (plan.bits < 1)
    fail(ErrorCategory::usage, "Ozaki emulation: " + std::to_string(moduli) +
                                   " moduli leave no bits at k = " + std::to_string(k) + "; take more");
  return plan;
}

std::vector<int> ozaki_moduli_by_rank(int moduli, int ranks) {
  if (ranks < 1 || moduli < 0)
    fail(ErrorCategory::usage, "Ozaki moduli over ranks: " + std::to_string(moduli) + " moduli over " +
                                   std::to_string(ranks) + " ranks");
  std::vector<int> first(std::size_t(ranks) + 1, 0);
  const int each = moduli / ranks, more = moduli % ranks;  // the last `more` ranks take one more
  for (std::size_t r = 0; r < std::size_t(ranks); ++r)
    first[r + 1] = first[r] + each + (int(r) >= ranks - more ? 1 : 0);
  return first;
}

std::size_t ozaki_gemm_workspace_bytes(const Context& ctx, const GemmProblem& problem, int moduli) {
  GEMMKIT_CUDA_PART(return ozaki_detail::workspace_bytes_on_device(ctx, problem, moduli);)
  detail::fail_without_cuda();
}

OzakiPlan ozaki_gemm(Context& ctx, const GemmProblem& problem, Stream stream, Workspace workspace, int moduli) {
  GEMMKIT_CUDA_PART(return ozaki_detail::gemm_on_device(ctx, problem, stream, workspace, moduli);)
  detail::fail_without_cuda();
}

OzakiPlan ozaki_gemm(const GemmProblem& host_problem, int moduli, Context* context) {
  require_cuda_device();
  GEMMKIT_CUDA_PART(return ozaki_detail::run_host_on_device(host_problem, moduli, context);)
  detail::fail_without_cuda();
}

OzakiPlan ozaki_detail::ozaki_gemm_over_ranks(Context& ctx, const GemmProblem& problem, int moduli,
                                              OzakiExchange& exchange, Stream compute, Stream comm,
                                              std::int64_t pass_rows) {
  GEMMKIT_CUDA_PART(return over_ranks_on_device(ctx, problem, moduli, exchange, compute, comm, pass_rows);)
  // Collective: every rank throws the device error, none waits for the others.
  exchange.agree([] { detail::fail_without_cuda(); });
  return {};
}

}  // namespace gemmkit

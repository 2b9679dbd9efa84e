// The host half of the modular int8 GEMM (gemmkit/modular.hpp): the moduli, the K limit and
// the checks, so that CPU-only builds and host tests have them, and the entry points, which
// check first and then run the GEMM in src/ops/modular/cuda/modular_gemm.cu.
#include "gemmkit/modular.hpp"

#include <algorithm>
#include <string>

#include "ops/modular/modular_device.hpp"
#include "ops/modular/modular_validate.hpp"
#include "gemmkit/error.hpp"
#include "runtime/cuda_part.hpp"

namespace gemmkit {

const std::vector<std::uint32_t>& int8_moduli() {
  static const std::vector<std::uint32_t> primes = [] {
    std::vector<std::uint32_t> v;
    for (std::uint32_t n = 255; n >= 3; n -= 2) {
      bool prime = true;
      for (std::uint32_t d = 3; d * d <= n; d += 2)
        if (n % d == 0) prime = false;
      if (prime) v.push_back(n);
    }
    return v;
  }();
  return primes;
}

namespace {
// The longest int32 sum of products of centred residues mod moduli whose largest residue
// magnitude is `half`.
std::int64_t k_limit_for(std::int64_t half) {
  return half == 0 ? INT64_MAX : ((std::int64_t{1} << 31) - 1) / (half * half);
}
}  // namespace

std::int64_t int8_k_limit() { return k_limit_for((int8_moduli().front() - 1) / 2); }

std::string_view modular_gemm_path_name(ModularGemmPath path) {
  switch (path) {
    case ModularGemmPath::automatic: return "auto";
    case ModularGemmPath::fused: return "fused";
    case ModularGemmPath::cublas: return "cublas";
  }
  return "?";
}

void validate(const ModularGemmProblem& p) { detail::validate_modular(p, true); }

// The checks come first in every build: a usage error beats the device error.
std::size_t modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p) {
  detail::validate_modular(p, false);
  detail::require_cuda_context(ctx);
  GEMMKIT_CUDA_PART(return modular_detail::workspace_bytes_on_device(ctx, p);)
  detail::fail_without_cuda();
}

void modular_gemm(Context& ctx, const ModularGemmProblem& p, Stream stream, Workspace workspace) {
  validate(p);
  detail::require_cuda_context(ctx);
  GEMMKIT_CUDA_PART(return modular_detail::gemm_on_device(ctx, p, stream, workspace);)
  detail::fail_without_cuda();
}

namespace detail {

void require_cuda_context(const Context& ctx) {
  if (ctx.backend() != Backend::cuda)
    fail(ErrorCategory::usage, "the modular int8 GEMM runs on the CUDA backend, not on a CPU context");
}

std::int64_t modular_k_limit(const ModularGemmProblem& p) {
  std::uint32_t largest = 0;
  for (std::uint32_t mod : p.moduli) largest = std::max(largest, mod);
  return k_limit_for((std::int64_t(largest) - 1) / 2);
}

void validate_modular(const ModularGemmProblem& p, bool pointers) {
  const std::string shape = std::to_string(p.moduli.size()) + " x " + std::to_string(p.m) + "x" +
                            std::to_string(p.n) + "x" + std::to_string(p.k);
  auto bad = [&](const std::string& what) {
    fail(ErrorCategory::usage, "invalid modular GEMM " + shape + ": " + what);
  };
  if (p.m < 0 || p.n < 0 || p.k < 0) bad("negative size");
  for (std::size_t q = 0; q < p.moduli.size(); ++q) {
    const std::uint32_t mod = p.moduli[q];
    if (mod < 3 || mod > 255 || mod % 2 == 0)
      bad("modulus " + std::to_string(q) + " is " + std::to_string(mod) +
          "; moduli must be odd and in [3, 255]");
  }
  if (pointers && !p.c && !p.ct) bad("no output: C and C^T are both null");
  auto check_ld = [&](const char* name, std::int64_t ld, std::int64_t width, const char* what) {
    if (ld < std::max<std::int64_t>(1, width))
      bad(std::string(name) + " " + std::to_string(ld) + " < " + std::to_string(std::max<std::int64_t>(1, width)) +
          ", the width of " + what);
  };
  auto check_stride = [&](const char* name, std::int64_t stride) {
    if (stride < 0) bad(std::string(name) + " " + std::to_string(stride) + " is negative");
  };
  check_ld("lda", p.lda, p.k, "A (m x k)");
  check_ld("ldb", p.ldb, p.k, "B^T (n x k)");
  check_stride("stride_a", p.stride_a);
  check_stride("stride_b", p.stride_b);
  // Without pointers (a workspace query) an output counts as asked for when it has a
  // leading dimension.
  const bool c = pointers ? p.c != nullptr : p.ldc > 0, ct = pointers ? p.ct != nullptr : p.ldct > 0;
  if (c) check_ld("ldc", p.ldc, p.n, "C (m x n)"), check_stride("stride_c", p.stride_c);
  if (ct) check_ld("ldct", p.ldct, p.m, "C^T (n x m)"), check_stride("stride_ct", p.stride_ct);
  const bool empty = p.m == 0 || p.n == 0 || p.moduli.empty();
  if (pointers && !empty && p.k > 0 && (!p.a || !p.b)) bad("A or B is null");
  // Several outputs of a batch must not overlap: a stride of at least one matrix's span.
  if (!empty && p.moduli.size() > 1) {
    if (c && p.stride_c < (p.m - 1) * p.ldc + p.n)
      bad("stride_c " + std::to_string(p.stride_c) + " < " + std::to_string((p.m - 1) * p.ldc + p.n) +
          ", the elements one C spans: the batch's outputs would overlap");
    if (ct && p.stride_ct < (p.n - 1) * p.ldct + p.m)
      bad("stride_ct " + std::to_string(p.stride_ct) + " < " + std::to_string((p.n - 1) * p.ldct + p.m) +
          ", the elements one C^T spans: the batch's outputs would overlap");
  }
}

}  // namespace detail

}  // namespace gemmkit

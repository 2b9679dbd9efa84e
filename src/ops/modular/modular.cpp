// The host half of the modular int8 GEMM (gemmkit/modular.hpp): the moduli, the K limit,
// the checks, the CPU reference and the registry (the CUDA kernels, in
// src/ops/modular/cuda/modular_gemm.cu, register themselves in CUDA builds), and the entry
// points, which check first and then run the kernel the registry chooses.
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

void validate(const ModularGemmProblem& p) { detail::validate_modular(p, true); }

namespace {

// The centred residue of an exact sum: in [-(p-1)/2, (p-1)/2].
std::int8_t centred(std::int64_t sum, std::int64_t p) {
  std::int64_t r = sum % p;
  if (r > p / 2) r -= p;
  if (r < -(p / 2)) r += p;
  return static_cast<std::int8_t>(r);
}

// C_q (and C_q^T) from int64 sums, exact for any K below 2^62 / 127^2: the reference.
void modular_gemm_cpu(const ModularGemmProblem& p) {
  const std::int64_t nq = std::int64_t(p.moduli.size());
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t q = 0; q < nq; ++q)
    for (std::int64_t i = 0; i < p.m; ++i) {
      const std::int8_t* a = p.a ? p.a + q * p.stride_a + i * p.lda : nullptr;  // row i of A_q
      for (std::int64_t j = 0; j < p.n; ++j) {
        const std::int8_t* b = p.b ? p.b + q * p.stride_b + j * p.ldb : nullptr;  // row j of B_q^T
        std::int64_t sum = 0;
        for (std::int64_t t = 0; t < p.k; ++t) sum += std::int64_t(a[t]) * b[t];
        const std::int8_t r = centred(sum, p.moduli[q]);
        if (p.c) p.c[q * p.stride_c + i * p.ldc + j] = r;
        if (p.ct) p.ct[q * p.stride_ct + j * p.ldct + i] = r;
      }
    }
}

Registry<ModularGemmProblem> make_registry() {
  Registry<ModularGemmProblem> r("modular");
  r.add(cpu_reference_kernel<ModularGemmProblem>("int64 sums of the residues' products, reduced once: any K",
                                                 {DType::i8}, modular_gemm_cpu));
  GEMMKIT_CUDA_PART(modular_detail::register_cuda_kernels(r);)
  return r;
}

}  // namespace

const Registry<ModularGemmProblem>& modular_registry() {
  static const Registry<ModularGemmProblem> registry = make_registry();
  return registry;
}

namespace {

// The fused kernel is built for sm_90a, whose wgmma instructions run on compute capability
// 9.0 only: later devices get cuBLAS's path.
const ModularKernel& choose(const Context& ctx, const ModularGemmProblem& p, std::string_view kernel) {
  return modular_registry().choose(ctx, p, kernel, [&ctx](const ModularKernel& e) -> std::optional<std::string> {
    if (e.backend == Backend::cuda && e.min_compute_capability == 90 && ctx.compute_capability() != 90)
      return "kernel '" + e.name + "' is built for sm_90a, which runs on compute capability 9.0 only; the device has " +
             std::to_string(ctx.compute_capability());
    return std::nullopt;
  });
}

}  // namespace

// The checks come first in every build: a usage error beats the device error.
std::size_t modular_gemm_workspace_bytes(const Context& ctx, const ModularGemmProblem& p, std::string_view kernel) {
  detail::validate_modular(p, false);
  return choose(ctx, p, kernel).workspace_for(p, ctx);
}

const ModularKernel& modular_gemm(Context& ctx, const ModularGemmProblem& p, Stream stream, Workspace workspace,
                                  std::string_view kernel) {
  validate(p);
  const ModularKernel& entry = choose(ctx, p, kernel);
  run_operation(entry, ctx, p, stream, workspace);
  return entry;
}

namespace detail {

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

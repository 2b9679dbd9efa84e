// The modular int8 GEMM's CUDA kernels (gemmkit/modular.hpp), registered in CUDA builds:
//   - cuda_modular_cublas: per modulus one cuBLAS int8 GEMM (cublasGemmEx 8I -> 32I, CUBLAS_COMPUTE_32I)
//     into the workspace, then reduce_products_to_residues reads the int32 products back and
//     writes centred residues into C and/or C^T. The reference, and any device's path.
//   - cuda_modular_fused (sm_90): rung 24's int8 wgmma kernel reduces its int32 accumulators in the
//     epilogue, so the products never reach memory (see kernels/gemm/hopper/24_wgmma_i8.cuh).
// Operands whose rows are not on 16 bytes are first copied into the workspace with rows
// of whole 16 bytes (K padded with zeros): what both GEMMs read fastest, and all TMA reads.
#include <cublas_v2.h>

#include <algorithm>
#include <string>

#include "runtime/cuda/context.hpp"
#include "ops/modular/cuda/modular_reduce.cuh"
#include "launch/launch.hpp"
#include "ops/modular/modular_device.hpp"
#include "ops/modular/modular_validate.hpp"
#include "ops/modular/cuda/modular.hpp"
#include "runtime/cuda/workspace_parts.hpp"
#include "gemmkit/modular.hpp"
#include "runtime/lazy_library.hpp"

namespace gemmkit {
namespace {

// A null pointer (a workspace query by shapes) counts as on 16 bytes, as cudaMalloc's are.
bool on16(const void* ptr, std::int64_t ld, std::int64_t stride) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % 16 == 0 && stride % 16 == 0;
}

// The workspace of a call, in order: cuBLAS's workspace (cublas path), one modulus's int32
// products (cublas path), then the packed copies of A and B when their rows are not on 16
// bytes. Offsets in bytes, each on the workspace alignment.
struct Plan {
  bool fused = false;
  bool pack_a = false, pack_b = false;
  std::int64_t k_packed = 0;     // K of the packed copies: a multiple of 16, zeros past K
  std::int64_t count_a = 0, count_b = 0;  // matrices packed (1 for an operand of stride 0)
  std::int64_t ldz = 0;          // leading dimension of the column-major products
  std::size_t cublas_bytes = 0, products = 0, a_at = 0, b_at = 0, total = 0;
};

Plan plan(const Context& ctx, const ModularGemmProblem& p, bool fused) {
  Plan l;
  l.fused = fused;
  const std::int64_t nq = std::int64_t(p.moduli.size());
  // cuBLAS's int8 kernels want K and the rows on 4 bytes; TMA wants rows on 16 bytes.
  // The fused kernel's rank-3 tensor maps need a batch's matrices apart (or one for all).
  const bool k_ok = l.fused || p.k % 4 == 0;
  auto apart = [&](std::int64_t stride, std::int64_t rows, std::int64_t ld) {
    return !l.fused || stride == 0 || stride >= rows * ld;
  };
  l.pack_a = !(on16(p.a, p.lda, p.stride_a) && k_ok && apart(p.stride_a, p.m, p.lda));
  l.pack_b = !(on16(p.b, p.ldb, p.stride_b) && k_ok && apart(p.stride_b, p.n, p.ldb));
  l.k_packed = cuda::ceil_div(p.k, 16) * 16;
  l.count_a = p.stride_a == 0 ? 1 : nq;
  l.count_b = p.stride_b == 0 ? 1 : nq;
  l.ldz = cuda::ceil_div(p.m, 4) * 4;
  std::size_t at = 0;
  if (!l.fused) {
    l.cublas_bytes = cuda::cublas_workspace_bytes(ctx);
    at = workspace_aligned(l.cublas_bytes);
    l.products = at;
    at += workspace_aligned(std::size_t(l.ldz * p.n) * sizeof(int));
  } else {
    at = workspace_aligned(cuda::fused_modular_gemm_workspace_bytes(ctx, p));
  }
  l.a_at = at;
  if (l.pack_a) at += workspace_aligned(std::size_t(l.count_a * p.m * l.k_packed));
  l.b_at = at;
  if (l.pack_b) at += workspace_aligned(std::size_t(l.count_b * p.n * l.k_packed));
  l.total = at;
  return l;
}

// Copies `count` matrices rows x k into dst with rows of k_packed bytes.
void pack(const std::int8_t* src, std::int64_t ld, std::int64_t stride, std::int64_t rows, std::int64_t k,
          std::int64_t count, std::int8_t* dst, std::int64_t k_packed, Stream stream) {
  const std::int64_t total = count * rows * k_packed;
  const unsigned blocks = unsigned(std::clamp<std::int64_t>(cuda::ceil_div(total, 256), 1, 8192));
  cuda::kernels::pack_rows<std::int8_t><<<blocks, 256, 0, stream>>>(src, ld, stride, rows, k, count, dst, k_packed);
  cuda::check_launch("pack_rows");
}

void run_cublas(Context& ctx, const cuda::ModularOperands& o, const Plan& l, Stream stream,
                Workspace w) {
  const ModularGemmProblem& p = o.problem;
  auto* base = static_cast<unsigned char*>(w.data);
  int* z = reinterpret_cast<int*>(base + l.products);
  const cuda::CublasCall call(ctx, stream, Workspace{w.data, l.cublas_bytes});
  cublasHandle_t h = call.get();
  GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasSetMathMode)(h, CUBLAS_DEFAULT_MATH));
  const int one = 1, zero = 0;
  const bool vec_c = p.c && reinterpret_cast<std::uintptr_t>(p.c) % 4 == 0 && p.ldc % 4 == 0 && p.stride_c % 4 == 0;
  const bool vec_ct =
      p.ct && reinterpret_cast<std::uintptr_t>(p.ct) % 4 == 0 && p.ldct % 4 == 0 && p.stride_ct % 4 == 0;
  for (std::size_t q = 0; q < p.moduli.size(); ++q) {
    const std::int64_t iq = std::int64_t(q);
    {
      // Z (m x n, column-major) = A B: A's row-major buffer is A^T to cuBLAS (k x m,
      // column-major) and B^T's row-major buffer is B (k x n): "TN", the layout of cuBLAS's
      // int8 tensor-core kernels.
      GEMMKIT_CUBLAS_CHECK(GEMMKIT_CUBLAS(cublasGemmEx_64)(h, CUBLAS_OP_T, CUBLAS_OP_N, p.m, p.n, o.k, &one,
                                           o.a + iq * o.stride_a, CUDA_R_8I, o.lda,
                                           o.b + iq * o.stride_b, CUDA_R_8I, o.ldb, &zero, z, CUDA_R_32I,
                                           l.ldz, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    }
    for (std::int64_t col = 0; col < p.n; col += 64 * 65535) {
      const std::int64_t cols = std::min<std::int64_t>(p.n - col, 64 * 65535);
      const dim3 grid(unsigned(cuda::ceil_div(p.m, 64)), unsigned(cuda::ceil_div(cols, 64)));
      cuda::kernels::reduce_products_to_residues<int><<<grid, 256, 0, stream>>>(
          z, l.ldz, int(p.m), int(p.n), int(col), int(p.moduli[q]), p.c ? p.c + iq * p.stride_c : nullptr,
          p.ldc, vec_c, p.ct ? p.ct + iq * p.stride_ct : nullptr, p.ldct, vec_ct);
    }
    cuda::check_launch("reduce_products_to_residues");
  }
}

// One product whose K int32 sums hold (see run_chunked), validated, K > 0.
void run_chunk(Context& ctx, const ModularGemmProblem& p, bool fused, Stream stream, Workspace workspace) {
  const Plan l = plan(ctx, p, fused);
  auto* base = static_cast<unsigned char*>(workspace.data);
  cuda::ModularOperands o{p, p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b, p.k};
  if (l.pack_a) {
    auto* a = reinterpret_cast<std::int8_t*>(base + l.a_at);
    pack(p.a, p.lda, p.stride_a, p.m, p.k, l.count_a, a, l.k_packed, stream);
    o.a = a, o.lda = l.k_packed, o.stride_a = l.count_a == 1 ? 0 : p.m * l.k_packed;
  }
  if (l.pack_b) {
    auto* b = reinterpret_cast<std::int8_t*>(base + l.b_at);
    pack(p.b, p.ldb, p.stride_b, p.n, p.k, l.count_b, b, l.k_packed, stream);
    o.b = b, o.ldb = l.k_packed, o.stride_b = l.count_b == 1 ? 0 : p.n * l.k_packed;
  }
  // Both copies hold zeros from K to k_packed, so the padded product is the same; with one
  // operand read in place K stays (the other's padding is never read then).
  if (l.pack_a && l.pack_b) o.k = l.k_packed;
  if (l.fused) cuda::fused_modular_gemm(ctx, o, stream, Workspace{workspace.data, l.a_at});
  else run_cublas(ctx, o, l, stream, workspace);
}

// A K longer than int32 sums of residue products hold (modular_k_limit) runs in chunks of
// `size` (a multiple of 16, so every chunk's operands keep their alignment): the first
// writes C and C^T, each later one writes the workspace's planes, which are then added on
// mod p. In the workspace: those planes (C's, then C^T's, tightly packed), then what one
// chunk needs.
struct Chunks {
  std::int64_t size = 0, count = 1;
  std::size_t c_at = 0, ct_at = 0, chunk_at = 0, total = 0;
};

ModularGemmProblem chunk_of(const ModularGemmProblem& p, const Chunks& ch, std::int64_t i) {
  ModularGemmProblem q = p;
  const std::int64_t k0 = i * ch.size;
  q.k = std::min(ch.size, p.k - k0);
  if (p.a) q.a = p.a + k0;
  if (p.b) q.b = p.b + k0;
  return q;
}

Chunks chunks(const Context& ctx, const ModularGemmProblem& p, bool fused) {
  Chunks ch;
  const std::int64_t limit = detail::modular_k_limit(p);
  if (p.k <= limit) {
    ch.size = p.k;
    ch.total = plan(ctx, p, fused).total;
    return ch;
  }
  ch.size = limit / 16 * 16;
  ch.count = cuda::ceil_div(p.k, ch.size);
  const std::size_t plane = std::size_t(p.m * p.n), nq = p.moduli.size();
  const bool c = p.c || p.ldc > 0, ct = p.ct || p.ldct > 0;  // a query by shapes: ld set
  ch.c_at = 0;
  ch.ct_at = workspace_aligned(c ? nq * plane : 0);
  ch.chunk_at = ch.ct_at + workspace_aligned(ct ? nq * plane : 0);
  // The first and the last chunk bound every chunk's needs (the ones between are the first's).
  ch.total = ch.chunk_at + std::max(plan(ctx, chunk_of(p, ch, 0), fused).total,
                                    plan(ctx, chunk_of(p, ch, ch.count - 1), fused).total);
  return ch;
}

void add_planes(std::int8_t* out, std::int64_t ld, std::int64_t stride, const std::int8_t* in, std::int64_t rows,
                std::int64_t cols, const std::vector<std::uint32_t>& moduli, Stream stream) {
  const unsigned blocks = unsigned(std::clamp<std::int64_t>(cuda::ceil_div(rows * cols, 256), 1, 4096));
  for (std::size_t q = 0; q < moduli.size(); ++q)
    cuda::kernels::add_residues<std::int8_t><<<blocks, 256, 0, stream>>>(
        out + std::int64_t(q) * stride, ld, in + std::int64_t(q) * rows * cols, cols, rows, cols, int(moduli[q]));
  cuda::check_launch("add_residues");
}

std::size_t workspace_bytes(const Context& ctx, const ModularGemmProblem& p, bool fused) {
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.moduli.empty()) return 0;
  return chunks(ctx, p, fused).total;
}

// A validated problem on its device, with at least workspace_bytes() of workspace (checked
// by run_operation).
void run(Context& ctx, const ModularGemmProblem& p, bool fused, Stream stream, Workspace workspace) {
  if (p.m > INT_MAX || p.n > INT_MAX)
    fail(ErrorCategory::usage, "the modular int8 GEMM takes m and n up to 2^31-1");
  if (p.m == 0 || p.n == 0 || p.moduli.empty()) return;
  const cuda::DeviceScope scope(ctx.device());
  if (p.k == 0) {  // empty sums: every residue is 0
    for (std::size_t q = 0; q < p.moduli.size(); ++q) {
      if (p.c)
        GEMMKIT_CUDA_CHECK(cudaMemset2DAsync(p.c + std::int64_t(q) * p.stride_c, std::size_t(p.ldc), 0,
                                             std::size_t(p.n), std::size_t(p.m), stream));
      if (p.ct)
        GEMMKIT_CUDA_CHECK(cudaMemset2DAsync(p.ct + std::int64_t(q) * p.stride_ct, std::size_t(p.ldct), 0,
                                             std::size_t(p.m), std::size_t(p.n), stream));
    }
    return;
  }
  const Chunks ch = chunks(ctx, p, fused);
  if (ch.count == 1) return run_chunk(ctx, p, fused, stream, workspace);
  auto* base = static_cast<unsigned char*>(workspace.data);
  auto* c_more = reinterpret_cast<std::int8_t*>(base + ch.c_at);
  auto* ct_more = reinterpret_cast<std::int8_t*>(base + ch.ct_at);
  const Workspace rest{base + ch.chunk_at, workspace.bytes - ch.chunk_at};
  for (std::int64_t i = 0; i < ch.count; ++i) {
    ModularGemmProblem q = chunk_of(p, ch, i);
    if (i > 0) {  // into the planes (m x n and n x m, tightly packed), then added on
      if (p.c) q.c = c_more, q.ldc = p.n, q.stride_c = p.m * p.n;
      if (p.ct) q.ct = ct_more, q.ldct = p.m, q.stride_ct = p.m * p.n;
    }
    run_chunk(ctx, q, fused, stream, rest);
    if (i == 0) continue;
    if (p.c) add_planes(p.c, p.ldc, p.stride_c, c_more, p.m, p.n, p.moduli, stream);
    if (p.ct) add_planes(p.ct, p.ldct, p.stride_ct, ct_more, p.n, p.m, p.moduli, stream);
  }
}

ModularKernel entry(std::string name, int rung, KernelRole role, int auto_priority, int min_compute_capability,
                    std::string summary, bool fused) {
  ModularKernel e;
  e.name = std::move(name);
  e.backend = Backend::cuda;
  e.rung = rung;
  e.role = role;
  e.summary = std::move(summary);
  e.dtypes = {DType::i8};
  e.min_compute_capability = min_compute_capability;
  e.auto_priority = auto_priority;
  e.workspace_bytes = [fused](const ModularGemmProblem& p, const Context& ctx) { return workspace_bytes(ctx, p, fused); };
  e.run = [fused](const ModularGemmProblem& p, const KernelLaunch& launch) {
    run(launch.context, p, fused, launch.stream, launch.workspace);
  };
  return e;
}

}  // namespace

namespace modular_detail {

void register_cuda_kernels(Registry<ModularGemmProblem>& registry) {
  registry.add(entry("cuda_modular_cublas", 0, KernelRole::reference, 2, 75,
                     "cuBLAS int8 GEMM per modulus (8I -> 32I), then a kernel reducing the products", false));
  registry.add(entry("cuda_modular_fused", 1, KernelRole::ladder, 3, 90,
                     "rung 24's int8 wgmma kernel, residues reduced in its epilogue, one launch per batch", true));
}

}  // namespace modular_detail
}  // namespace gemmkit

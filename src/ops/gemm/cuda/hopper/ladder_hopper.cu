// Launchers and registry entries for the Hopper rungs (sm_90a): 18, wgmma fed by TMA; 19,
// warp-specialised, persistent, in clusters with multicast; 21, rung 19 with narrower
// tiles and split-K, chosen per shape (hopper_tune_table.hpp). Their kernels are compiled on
// first use (runtime/cuda/jit_kernels.hpp): this file names them (rung18_kernel,
// rung19_kernel) but instantiates none.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cuda/device_buffer.hpp"
#include "ops/gemm/cuda/hopper/hopper_launch.hpp"
#include "ops/gemm/cuda/hopper/18_wgmma_tma.cuh"
#include "ops/gemm/cuda/hopper/hopper_tune_table.hpp"
#include "ops/gemm/cuda/hopper/19_wgmma_ws.cuh"
#include "ops/gemm/cuda/hopper/21_wgmma_tuned.cuh"
#include "ops/gemm/cuda/common/transpose.cuh"
#include "ops/gemm/cuda/ladder.hpp"
#include "launch/explain_launch.hpp"
#include "launch/launch.hpp"
#include "ops/gemm/cuda/tensor/tensor_args.hpp"
#include "launch/tensor_map.hpp"
#include "runtime/cuda/workspace_parts.hpp"

namespace gemmkit::cuda {
namespace {

using kernels::TensorArgs;

std::string majors_text(bool mn_a, bool mn_b) {
  const auto major = [](bool mn) { return mn ? "MN-major" : "K-major"; };
  return std::string(", A ") + major(mn_a) + ", B " + major(mn_b);
}

// Rung 18's kernel for element type T and the operands' majors.
template <class T, bool MnA, bool MnB>
const JitKernel& rung18_kernel() {
  static const JitKernel kernel({"ops/gemm/cuda/hopper/18_wgmma_tma.cuh",
                                 instantiation<T, Value<MnA>, Value<MnB>>("gemmkit::cuda::kernels::wgmma_tma_kernel"),
                                 std::string("wgmma_tma 128x256 ") + tensor_dtype_name<T>() + majors_text(MnA, MnB),
                                 tensor_dtype_name<T>(), 90});
  return kernel;
}

// Rung 19's kernel in configuration Cfg (rung 21's tiles too).
template <class Cfg, bool MnA, bool MnB>
const JitKernel& rung19_kernel() {
  using T = typename Cfg::Element;
  static const JitKernel kernel(
      {"ops/gemm/cuda/hopper/19_wgmma_ws.cuh",
       instantiation<Cfg, Value<MnA>, Value<MnB>>("gemmkit::cuda::kernels::wgmma_ws_kernel"),
       "wgmma_ws " + std::to_string(Cfg::BM) + "x" + std::to_string(Cfg::BN) + (Cfg::kSplitK ? " split-K " : " ") +
           tensor_dtype_name<T>() + majors_text(MnA, MnB),
       tensor_dtype_name<T>(), 90});
  return kernel;
}

// The same with the problem's M, N and K compiled in (cuda_wgmma_fixed, FixedShape): one
// instantiation per shape, kept for the process, since a context finds the kernels it
// loaded by their JitKernel's address.
template <class Cfg, bool MnA, bool MnB>
const JitKernel& rung19_fixed_kernel(const GemmProblem& p) {
  static std::mutex mutex;
  static std::map<std::array<std::int64_t, 3>, std::unique_ptr<JitKernel>> kernels;
  const std::lock_guard lock(mutex);
  std::unique_ptr<JitKernel>& kernel = kernels[{p.m, p.n, p.k}];
  if (!kernel) {
    const jit::KernelSpec& generic = rung19_kernel<Cfg, MnA, MnB>().spec;
    const std::string m = std::to_string(p.m), n = std::to_string(p.n), k = std::to_string(p.k);
    std::string expression = generic.expression;  // "...wgmma_ws_kernel<Cfg, MnA, MnB>"
    expression.insert(expression.size() - 1, ", gemmkit::cuda::kernels::FixedShape<" + m + ", " + n + ", " + k + ">");
    kernel = std::make_unique<JitKernel>(jit::KernelSpec{generic.header, expression,
                                                         generic.label + ", shape " + m + "x" + n + "x" + k,
                                                         generic.dtype, generic.min_compute_capability});
  }
  return *kernel;
}

// The kernel a launch of Cfg runs: the generic one, or the problem's own (fixed_shape).
template <class Cfg, bool MnA, bool MnB>
const JitKernel& ws_kernel(const GemmProblem& p, bool fixed_shape) {
  return fixed_shape ? rung19_fixed_kernel<Cfg, MnA, MnB>(p) : rung19_kernel<Cfg, MnA, MnB>();
}

template <class T>
CUtensorMapDataType tensor_map_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// Tensor map for TMA stores of C in (64, 128-byte) boxes; an empty one when C is written
// by ordinary stores.
template <class T>
CUtensorMap output_map(const GemmProblem& p, const TensorArgs<T>& g) {
  if (!g.c_tma) return CUtensorMap{};
  const int bytes = c_bytes(p);
  const CUtensorMapDataType type = bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : tensor_map_type<T>();
  return batch_map(p.c, type, bytes, p.m, p.n, p.ldc, p.batch, p.stride_c, 64, 128 / bytes);
}

// Tensor maps for op(A)'s (BM, BK) tiles and op(B)'s (BN, BK) tiles in 128-byte rows.
// K-major operands (A as stored, B transposed) are copied as boxes of rows of K;
// MN-major ones (A transposed, B as stored) as boxes of 64 columns of M or N by BK rows.
template <class T>
CUtensorMap operand_map(const void* base, bool mn_major, std::int64_t mn, std::int64_t k,
                        std::int64_t ld, int mn_box_rows) {
  constexpr int kBk = 128 / sizeof(T);
  if (mn_major)  // stored (k, mn)
    return make_tile_map(base, tensor_map_type<T>(), sizeof(T), k, mn, ld, kBk, 64);
  return make_tile_map(base, tensor_map_type<T>(), sizeof(T), mn, k, ld, mn_box_rows, kBk);
}

// The same for rung 19: matrix z of the batch at base + z * stride (stride 0: one operand
// for every matrix).
template <class T>
CUtensorMap batched_operand_map(const void* base, bool mn_major, std::int64_t mn, std::int64_t k,
                                std::int64_t ld, std::int64_t batch, std::int64_t stride,
                                int mn_box_rows) {
  constexpr int kBk = 128 / sizeof(T);
  if (mn_major)
    return batch_map(base, tensor_map_type<T>(), sizeof(T), k, mn, ld, batch, stride, kBk, 64);
  return batch_map(base, tensor_map_type<T>(), sizeof(T), mn, k, ld, batch, stride, mn_box_rows,
                   kBk);
}

// ---- tf32: K-major copies ------------------------------------------------------------

// tf32 wgmma reads K-major operands only (A as stored, B transposed). The problem on
// K-major operands: MN-major ones are first transposed into the workspace, rows padded to
// whole 16 bytes for TMA. T is the
// element type; 16-bit types are read in any layout and pass through.
// Bytes of the K-major copies, rounded up to the workspace alignment: the start of the
// workspace's stream-K part.
std::size_t tf32_copy_bytes(const GemmProblem& p) {
  if (p.dtype != DType::tf32) return 0;
  const std::int64_t ld = ceil_div(p.k, 4) * 4;
  const std::size_t floats = (p.trans_a ? std::size_t(p.m * ld) : 0) +
                             (!p.trans_b ? std::size_t(p.n * ld) : 0);
  return workspace_aligned(floats * sizeof(float));
}

// The launches with_k_major_tf32 makes before the product (none for 16-bit types).
template <class T>
std::vector<LaunchPlan> tf32_copy_plans(const GemmProblem& p) {
  std::vector<LaunchPlan> out;
  if (!std::is_same_v<T, float>) return out;
  const char* text = "writes no C: block (bx, by) moves the 32x32 tile at stored rows by * 32, columns bx * 32 "
                     "(then rows 32 * gridDim.y further on, past 65535 tile rows) through shared memory, thread "
                     "(tx, ty) the elements at rows ty + 8i, column tx of it, so reads and writes are both coalesced";
  if (p.trans_a)
    out.push_back(plan_of<kernels::transpose<float>>(transpose_geometry(p.k, p.m), "A^T copied into K-major A for tf32 wgmma", text));
  if (!p.trans_b)
    out.push_back(plan_of<kernels::transpose<float>>(transpose_geometry(p.k, p.n), "B copied into K-major B^T for tf32 wgmma", text));
  return out;
}

// The problem as the product sees it after with_k_major_tf32 (operands K-major for tf32).
template <class T>
GemmProblem k_major_shape(const GemmProblem& p) {
  GemmProblem q = p;
  if (std::is_same_v<T, float>) q.trans_a = false, q.trans_b = true;
  return q;
}

template <class T>
GemmProblem with_k_major_tf32(const GemmProblem& p, const KernelLaunch& l) {
  const bool copy_a = p.trans_a, copy_b = !p.trans_b;
  if (!std::is_same_v<T, float> || (!copy_a && !copy_b)) return p;
  const std::int64_t ld = ceil_div(p.k, 4) * 4;
  const std::size_t a_count = copy_a ? std::size_t(p.m * ld) : 0;
  float* workspace = static_cast<float*>(l.workspace.data);  // tf32_copy_bytes(p) of it
  // Transposes stored (rows, cols) into (cols, rows) at `out`.
  auto transpose = [&](const void* in, std::int64_t rows, std::int64_t cols, std::int64_t ld_in,
                       float* out) {
    launch_geometry<kernels::transpose<float>>(l.context, l.stream, transpose_geometry(rows, cols),
                                               static_cast<const float*>(in), rows, cols, ld_in, out, ld);
  };
  GemmProblem q = p;
  if (copy_a) {  // A^T stored (k, m): A as stored, (m, k)
    transpose(p.a, p.k, p.m, p.lda, workspace);
    q.a = workspace, q.lda = ld, q.trans_a = false;
  }
  if (copy_b) {  // B stored (k, n): B^T, (n, k)
    transpose(p.b, p.k, p.n, p.ldb, workspace + a_count);
    q.b = workspace + a_count, q.ldb = ld, q.trans_b = true;
  }
  return q;
}

// Calls f(std::bool_constant<MnMajorA>, std::bool_constant<MnMajorB>) for the problem's
// transposes. tf32 reads K-major operands only (with_k_major_tf32 makes them so).
template <class T, class F>
void with_operand_majors(const GemmProblem& p, F&& f) {
  if constexpr (std::is_same_v<T, float>) f(std::false_type{}, std::false_type{});
  else with_bools(std::forward<F>(f), p.trans_a, !p.trans_b);
}

// ---- rung 19 ---------------------------------------------------------------------------

// Whether rung 19 runs a strided batch in one launch: when its rank-3 tensor maps can
// address it (each batched operand's stride on 16 bytes and at least one matrix, rows x ld,
// apart, or 0: one operand for every matrix), its operands need no tf32 copies, and its
// tiles stay in int range. Other batches run matrix by matrix. Cfg: the tile size (rung
// 19's unless given).
template <class Cfg = kernels::WgmmaWsConfig<__nv_bfloat16>>
bool ws_one_launch(const GemmProblem& p) {
  if (p.batch <= 1) return true;
  const bool tf32 = p.dtype == DType::tf32;
  if (tf32 && (p.trans_a || !p.trans_b)) return false;  // with_k_major_tf32 would copy
  const std::int64_t elem = tf32 ? 4 : 2;
  const auto addressable = [&](std::int64_t stride, std::int64_t rows, std::int64_t ld) {
    return stride == 0 || ((stride * elem) % 16 == 0 && stride >= rows * ld);
  };
  const std::int64_t tiles =
      ceil_div(ceil_div(p.m, Cfg::BM), Cfg::kClusterM) * ceil_div(p.n, Cfg::BN) * p.batch;
  return addressable(p.stride_a, p.a_rows(), p.lda) &&
         addressable(p.stride_b, p.b_rows(), p.ldb) && tiles <= INT_MAX;
}

template <class Cfg>
WsPlan plan_wgmma_ws(const GemmProblem& p, int resident, int splits = 1) {
  // The tile space: every matrix's cluster tiles when the batch runs in one launch.
  const std::int64_t cluster_tiles = ceil_div(ceil_div(p.m, Cfg::BM), Cfg::kClusterM) *
                                     ceil_div(p.n, Cfg::BN) * (ws_one_launch<Cfg>(p) ? p.batch : 1);
  return plan_ws_tiles<Cfg>(cluster_tiles, ceil_div(p.k, Cfg::BK), resident, splits);
}

// Rung 19's kernel as a launch of `clusters` clusters (0: only to ask how many fit).
template <class Cfg>
Geometry ws_geometry(int clusters) {
  return {dim3(unsigned(clusters * Cfg::kClusterM)), dim3(Cfg::kThreads), std::size_t(Cfg::kSmemBytes),
          dim3(Cfg::kClusterM)};
}

// Every instantiation has the same threads and shared memory, so the same residency: it is
// asked of the kernel the launch will run (fixed_shape as there), so that sizing the
// workspace compiles nothing the launch does not need. The launcher checks that the
// workspace it got is as large as this said.
template <class Cfg>
std::size_t wgmma_ws_stream_k_bytes(const GemmProblem& p, const Context& ctx, int splits = 1,
                                    bool fixed_shape = false) {
  int resident = 0;
  with_operand_majors<typename Cfg::Element>(p, [&](auto mn_a, auto mn_b) {
    const JitKernel& kernel = ws_kernel<Cfg, decltype(mn_a)::value, decltype(mn_b)::value>(p, fixed_shape);
    resident = resident_clusters(ctx, jit_kernel(ctx, kernel), ws_geometry<Cfg>(kResidencyProbe));
  });
  return plan_wgmma_ws<Cfg>(p, resident, splits).stream_k_bytes;
}

template <class Cfg>
std::string ws_text(const WsPlan& plan) {
  const auto s = [](std::int64_t v) { return std::to_string(v); };
  std::string text =
      "persistent and warp-specialised: " + s(plan.clusters) + " clusters of " + s(Cfg::kClusterM) +
      " blocks (blockIdx.x / " + s(Cfg::kClusterM) + " is the cluster, blockIdx.x % " + s(Cfg::kClusterM) +
      " its block, stacked along M) loop over the cluster tiles of " + s(Cfg::kClusterM * Cfg::BM) + "x" + s(Cfg::BN) +
      ": in round r cluster c takes tile r * clusters + c, tiles walked in groups of 8 cluster rows column by "
      "column (snaking), and block b of the cluster the " + s(Cfg::BM) + "x" + s(Cfg::BN) +
      " tile at its rows b * " + s(Cfg::BM) + ". Warpgroup 0 (threads 0-127) is the producer: thread 0 "
      "issues the TMA copies of A and of its part of B, which the cluster multicasts to its blocks; " +
      (Cfg::kConsumers == 2 ? "warpgroups 1 and 2 (threads 128-383) are the consumers, warpgroup c multiplying rows "
                              "64 (c - 1) + 0..63 of the tile"
                            : "warpgroup 1 (threads 128-255) is the consumer, multiplying the tile's 64 rows") +
      " with wgmma (each thread holds its share of the sums in registers) and writing them through shared memory "
      "and TMA stores";
  if (plan.sk.splits > 1)
    text += "; split-K: every tile in " + s(plan.sk.splits) + " K slices, the last to finish adding the others' partial sums in order";
  else if (plan.sk.sk_tiles > 0)
    text += "; stream-K: the last " + s(plan.sk.sk_tiles) + " tiles' K blocks shared out over every cluster, partial sums through the workspace";
  return text;
}

// The launches of run_wgmma_ws_config for the problem (after any tf32 copies), with the
// residency the device reports through `q`.
template <class Cfg>
std::vector<LaunchPlan> wgmma_ws_plans(const GemmProblem& p, const LaunchQueries& q, int splits = 1,
                                      bool fixed_shape = false) {
  using T = typename Cfg::Element;
  std::vector<LaunchPlan> out;
  with_operand_majors<T>(p, [&](auto mn_a, auto mn_b) {
    const KernelRef kernel = jit_kernel(q, ws_kernel<Cfg, decltype(mn_a)::value, decltype(mn_b)::value>(p, fixed_shape));
    const int resident = q.active_clusters(plan_of(kernel, ws_geometry<Cfg>(0), "", ""));
    const WsPlan plan = plan_wgmma_ws<Cfg>(p, resident, splits);
    out.push_back(plan_of(kernel, ws_geometry<Cfg>(plan.clusters), "the product", ws_text<Cfg>(plan)));
  });
  return out;
}

// `scratch`: the workspace after the tf32 copies. splits > 1: split-K (rung 21's
// configurations only). fixed_shape: the kernel compiled for the problem's M, N and K.
template <class Cfg>
void run_wgmma_ws_config(const GemmProblem& p, const KernelLaunch& l, Workspace scratch,
                         int splits = 1, bool fixed_shape = false) {
  using T = typename Cfg::Element;
  const TensorArgs<T> g = tensor_args<T>(p);
  const kernels::WsBatch batch{int(p.batch), p.stride_a == 0, p.stride_b == 0, p.stride_c};
  with_operand_majors<T>(p, [&](auto mn_a, auto mn_b) {
    constexpr bool MnA = decltype(mn_a)::value, MnB = decltype(mn_b)::value;
    const KernelRef kernel = jit_kernel(l.context, ws_kernel<Cfg, MnA, MnB>(p, fixed_shape));
    const CUtensorMap map_a =
        batched_operand_map<T>(p.a, MnA, p.m, p.k, p.lda, p.batch, p.stride_a, Cfg::BM);
    // B is copied in parts of kBPartRows rows (halves of 128 at rung 19's 256 columns).
    const CUtensorMap map_b =
        batched_operand_map<T>(p.b, MnB, p.n, p.k, p.ldb, p.batch, p.stride_b, Cfg::kBPartRows);
    const CUtensorMap map_c = output_map<T>(p, g);
    WsPlan plan = plan_wgmma_ws<Cfg>(p, resident_clusters(l.context, kernel, ws_geometry<Cfg>(kResidencyProbe)), splits);
    if (plan.sk.splits > 1) {
      if (scratch.bytes < plan.stream_k_bytes)
        fail(ErrorCategory::internal, "cuda_wgmma_tuned: the workspace is smaller than declared");
      auto* base = static_cast<unsigned char*>(scratch.data);
      plan.sk.partials = reinterpret_cast<float*>(base);
      plan.sk.flags = reinterpret_cast<unsigned*>(
          base + plan.slots * plan.sk.splits * 64 * Cfg::BN * sizeof(float));
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(
          plan.sk.flags, 0, plan.slots * wgmma_split_counters(plan.sk.splits) * sizeof(unsigned), l.stream));
    } else if (plan.stream_k_bytes > 0) {
      if (scratch.bytes < plan.stream_k_bytes)
        fail(ErrorCategory::internal, "cuda_wgmma_ws: the workspace is smaller than declared");
      const std::size_t partial_bytes = plan.slots * 64 * Cfg::BN * sizeof(float);
      auto* base = static_cast<unsigned char*>(scratch.data);
      plan.sk.partials = reinterpret_cast<float*>(base);
      plan.sk.flags = reinterpret_cast<unsigned*>(base + partial_bytes);
      plan.sk.launch = 1;
      GEMMKIT_CUDA_CHECK(cudaMemsetAsync(plan.sk.flags, 0, plan.slots * sizeof(unsigned), l.stream));
    }
    launch_kernel<kernels::WgmmaWsParameters<Cfg>>(l.context, l.stream, ws_geometry<Cfg>(plan.clusters), kernel, map_a, map_b,
                                         map_c, g, plan.sk, batch);
  });
}

// ---- rung 18 ---------------------------------------------------------------------------

// One block per 128x256 tile of C along x, tiles in row order.
template <class T>
Geometry wgmma_tma_geometry(const GemmProblem& p) {
  using Cfg = kernels::WgmmaTmaConfig<T>;
  return {dim3(unsigned(ceil_div(p.m, Cfg::BM) * ceil_div(p.n, Cfg::BN))), dim3(Cfg::kThreads),
          std::size_t(Cfg::kSmemBytes)};
}

template <class T>
void run_wgmma_tma(const GemmProblem& p, const KernelLaunch& l) {
  using Cfg = kernels::WgmmaTmaConfig<T>;
  const TensorArgs<T> g = tensor_args<T>(p);
  with_operand_majors<T>(p, [&](auto mn_a, auto mn_b) {
    constexpr bool MnA = decltype(mn_a)::value, MnB = decltype(mn_b)::value;
    const CUtensorMap map_a = operand_map<T>(p.a, MnA, p.m, p.k, p.lda, Cfg::BM);
    const CUtensorMap map_b = operand_map<T>(p.b, MnB, p.n, p.k, p.ldb, Cfg::BN);
    launch_kernel<kernels::WgmmaTmaParameters<T>>(l.context, l.stream, wgmma_tma_geometry<T>(p),
                                       jit_kernel(l.context, rung18_kernel<T, MnA, MnB>()), map_a, map_b, g);
  });
}

// Rung 18's launches: the tf32 copies, then the product.
template <class T>
std::vector<LaunchPlan> wgmma_tma_plans(const GemmProblem& p, const LaunchQueries& queries) {
  std::vector<LaunchPlan> out = tf32_copy_plans<T>(p);
  const GemmProblem q = k_major_shape<T>(p);
  with_operand_majors<T>(q, [&](auto mn_a, auto mn_b) {
    out.push_back(plan_of(
        jit_kernel(queries, rung18_kernel<T, decltype(mn_a)::value, decltype(mn_b)::value>()),
        wgmma_tma_geometry<T>(q), "the product",
        "block b (blockIdx.x) takes the 128x256 tile at rows (b / n_tiles) * 128, columns (b % n_tiles) * 256 "
        "(n_tiles = ceil(N / 256)); thread 0 issues the TMA copies of 4 stages, and both warpgroups (threads 0-127 "
        "and 128-255) multiply, warpgroup w rows 64w + 0..63 of the tile with wgmma 64x256, each thread holding "
        "128 of its sums in registers (the wgmma accumulator layout) and storing them to C"));
  });
  return out;
}

template <class T> struct WsRunner {
  static void run(const GemmProblem& p, const KernelLaunch& l) {
    if (!ws_one_launch(p)) {  // matrix by matrix, on the same stream and workspace
      for (std::int64_t i = 0; i < p.batch; ++i) run(batch_item(p, i), l);
      return;
    }
    const std::size_t copies = tf32_copy_bytes(p);
    const Workspace stream_k{static_cast<unsigned char*>(l.workspace.data) + copies,
                             l.workspace.bytes > copies ? l.workspace.bytes - copies : 0};
    run_wgmma_ws_config<kernels::WgmmaWsConfig<T>>(with_k_major_tf32<T>(p, l), l, stream_k);
  }
  static std::vector<LaunchPlan> plans(const GemmProblem& p, const LaunchQueries& q) {
    if (!ws_one_launch(p)) return plans(batch_item(p, 0), q);  // matrix by matrix: the first one's
    std::vector<LaunchPlan> out = tf32_copy_plans<T>(p);
    for (LaunchPlan& plan : wgmma_ws_plans<kernels::WgmmaWsConfig<T>>(k_major_shape<T>(p), q)) out.push_back(std::move(plan));
    return out;
  }
};
// ---- rung 21 ---------------------------------------------------------------------------

// Calls f(Cfg{}) with rung 21's configuration of `tile` for element type T.
template <class T, class F>
void with_tuned_config(WgmmaTile tile, F&& f) {
  switch (tile) {
    case WgmmaTile::t128x256: f(kernels::Wgmma128x256<T>{}); return;
    case WgmmaTile::t128x128: f(kernels::Wgmma128x128<T>{}); return;
    case WgmmaTile::t64x256: f(kernels::Wgmma64x256<T>{}); return;
    case WgmmaTile::t64x128: f(kernels::Wgmma64x128<T>{}); return;
  }
  fail(ErrorCategory::internal, "rung 21: an unknown tile configuration");
}

// Calls f(Cfg{}) when the problem is split into more than one K slice, else
// f(NoSplitK<Cfg>{}): the same tile without split-K's code (rung 19's stream-K), so neither
// kernel carries the other's epilogue.
template <class Cfg, class F>
void with_split_config(const GemmProblem& p, int splits, F&& f) {
  if (std::min<std::int64_t>(splits, ceil_div(p.k, Cfg::BK)) > 1) f(Cfg{});
  else f(kernels::NoSplitK<Cfg>{});
}

// The problem as the tune table sees it: the batch counts when it runs in one launch.
template <class Cfg>
WgmmaShape tune_shape(const GemmProblem& p) {
  return {p.m, p.n, p.k, ws_one_launch<Cfg>(p) ? p.batch : 1, Cfg::BK};
}

template <class Cfg>
int tuned_splits(WgmmaTile tile, const GemmProblem& p, int sm_count, SplitMode mode) {
  return choose_wgmma_splits(tile, tune_shape<Cfg>(p), sm_count, mode);
}
template <class Cfg>
int tuned_splits(WgmmaTile tile, const GemmProblem& p, const Context& ctx, SplitMode mode) {
  return tuned_splits<Cfg>(tile, p, ctx.device_info().sm_count, mode);
}

// cuda_wgmma_tuned's configuration for the problem on a device of sm_count SMs.
WgmmaTile tuned_tile(const GemmProblem& p, int sm_count) {
  const int bk = p.dtype == DType::tf32 ? 32 : 64;
  const WgmmaShape shape{p.m, p.n, p.k, ws_one_launch(p) ? p.batch : 1, bk};
  return choose_wgmma_config(shape, sm_count).tile;
}
WgmmaTile tuned_tile(const GemmProblem& p, const Context& ctx) { return tuned_tile(p, ctx.device_info().sm_count); }

void run_wgmma_tuned(const GemmProblem& p, const KernelLaunch& l, WgmmaTile tile, SplitMode mode,
                     bool fixed_shape) {
  with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto element) {
    using T = decltype(element);
    with_tuned_config<T>(tile, [&](auto config) {
      using Cfg = decltype(config);
      if (!ws_one_launch<Cfg>(p)) {  // matrix by matrix, on the same stream and workspace
        for (std::int64_t i = 0; i < p.batch; ++i) run_wgmma_tuned(batch_item(p, i), l, tile, mode, fixed_shape);
        return;
      }
      const std::size_t copies = tf32_copy_bytes(p);
      const Workspace scratch{static_cast<unsigned char*>(l.workspace.data) + copies,
                              l.workspace.bytes > copies ? l.workspace.bytes - copies : 0};
      const int splits = tuned_splits<Cfg>(tile, p, l.context, mode);
      with_split_config<Cfg>(p, splits, [&](auto run) {
        run_wgmma_ws_config<decltype(run)>(with_k_major_tf32<T>(p, l), l, scratch, splits, fixed_shape);
      });
    });
  });
}

// The launches run_wgmma_tuned makes: the tf32 copies, then rung 19's kernel in the tile's
// configuration (the first matrix's, for a batch run matrix by matrix).
std::vector<LaunchPlan> wgmma_tuned_plans(const GemmProblem& p, const LaunchQueries& q, WgmmaTile tile,
                                          SplitMode mode, bool fixed_shape) {
  std::vector<LaunchPlan> out;
  with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto element) {
    using T = decltype(element);
    with_tuned_config<T>(tile, [&](auto config) {
      using Cfg = decltype(config);
      const GemmProblem one = ws_one_launch<Cfg>(p) ? p : batch_item(p, 0);
      out = tf32_copy_plans<T>(one);
      const int splits = tuned_splits<Cfg>(tile, one, q.sm_count, mode);
      with_split_config<Cfg>(one, splits, [&](auto run) {
        for (LaunchPlan& plan : wgmma_ws_plans<decltype(run)>(k_major_shape<T>(one), q, splits, fixed_shape))
          out.push_back(std::move(plan));
      });
    });
  });
  return out;
}

// The tf32 copies, then split-K's partial sums and counters (or stream-K's).
std::size_t wgmma_tuned_workspace_bytes(const GemmProblem& p, const Context& ctx, WgmmaTile tile,
                                        SplitMode mode, bool fixed_shape) {
  std::size_t bytes = 0;
  with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto element) {
    using T = decltype(element);
    with_tuned_config<T>(tile, [&](auto config) {
      using Cfg = decltype(config);
      const int splits = tuned_splits<Cfg>(tile, p, ctx, mode);
      with_split_config<Cfg>(p, splits, [&](auto run) {
        bytes = tf32_copy_bytes(p) + wgmma_ws_stream_k_bytes<decltype(run)>(p, ctx, splits, fixed_shape);
      });
    });
  });
  return bytes;
}

struct TunedWgmma {
  WgmmaTile tile;
  const char* name;
  const char* summary;
};

const TunedWgmma kTunedWgmma[] = {
    {WgmmaTile::t128x256, "cuda_wgmma_128x256",
     "rung 21's 128x256 tile (rung 19's): two consumer warpgroups, clusters of 2, 4 stages"},
    {WgmmaTile::t128x128, "cuda_wgmma_128x128",
     "rung 21's 128x128 tile: two consumers of m64n128, clusters of 2 (B in two multicast "
     "halves), 6 stages"},
    {WgmmaTile::t64x256, "cuda_wgmma_64x256",
     "rung 21's 64x256 tile: one consumer warpgroup, clusters of 2 over 128 rows, 5 stages"},
    {WgmmaTile::t64x128, "cuda_wgmma_64x128",
     "rung 21's 64x128 tile: one consumer of m64n128, clusters of 2 over 128 rows, 8 stages"},
};

template <class T> struct TmaRunner {
  static void run(const GemmProblem& p, const KernelLaunch& l) {
    run_wgmma_tma<T>(with_k_major_tf32<T>(p, l), l);
  }
  static std::vector<LaunchPlan> plans(const GemmProblem& p, const LaunchQueries& q) { return wgmma_tma_plans<T>(p, q); }
};

// What TMA and the grid need: 16-byte aligned operands with 16-byte row pitches, sizes in
// int range, and K > 0 (K = 0 only scales C; other kernels do that). tf32 operands that
// are copied into K-major form (with_k_major_tf32) may lie anywhere.
std::optional<std::string> hopper_precondition(const GemmProblem& p) {
  // Rung 19 takes a batch that its tensor maps cannot address matrix by matrix, so what
  // matters is every matrix's alignment, which the first two show (the strides are fixed).
  if (p.batch > 1) {
    if (auto why = hopper_precondition(batch_item(p, 0))) return why;
    return hopper_precondition(batch_item(p, 1));
  }
  const bool tf32 = p.dtype == DType::tf32;
  const int elem = tf32 ? 4 : 2;
  if (p.k == 0) return "K = 0 leaves nothing to multiply";
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return "a dimension exceeds 2^31-1, the kernel's index range";
  const bool a_read = !(tf32 && p.trans_a), b_read = !(tf32 && !p.trans_b);
  if ((a_read && !tma_compatible(p.a, p.lda, elem)) || (b_read && !tma_compatible(p.b, p.ldb, elem)))
    return "TMA needs A and B on 16-byte boundaries with leading dimensions of whole 16 bytes";
  return std::nullopt;
}

// The tf32 copies, then the stream-K partial sums and flags.
std::size_t wgmma_ws_workspace_bytes(const GemmProblem& p, const Context& ctx) {
  return with_element<__nv_bfloat16, __half, float>(p.dtype, [&](auto t) {
    return tf32_copy_bytes(p) + wgmma_ws_stream_k_bytes<kernels::WgmmaWsConfig<decltype(t)>>(p, ctx);
  });
}

}  // namespace

// Every kernel these rungs can launch, for `gemmkit cache warm` and the test that compiles
// them all: each element type's operand majors (tf32: K-major only) in rung 18, rung 19's
// configuration and rung 21's tiles.
std::vector<const JitKernel*> hopper_jit_kernels() {
  std::vector<const JitKernel*> out;
  const auto add_element = [&](auto element) {
    using T = decltype(element);
    const auto add_majors = [&](auto mn_a, auto mn_b) {
      constexpr bool A = decltype(mn_a)::value, B = decltype(mn_b)::value;
      out.push_back(&rung18_kernel<T, A, B>());
      out.push_back(&rung19_kernel<kernels::WgmmaWsConfig<T>, A, B>());
      for (const TunedWgmma& t : kTunedWgmma)
        with_tuned_config<T>(t.tile, [&](auto config) {
          using Cfg = decltype(config);
          out.push_back(&rung19_kernel<Cfg, A, B>());
          // Rung 19's configuration is the 128x256 tile without split-K: listed once.
          if constexpr (!std::is_same_v<kernels::NoSplitK<Cfg>, kernels::WgmmaWsConfig<T>>)
            out.push_back(&rung19_kernel<kernels::NoSplitK<Cfg>, A, B>());
        });
    };
    if constexpr (std::is_same_v<T, float>) add_majors(std::false_type{}, std::false_type{});
    else
      for (const bool a : {false, true})
        for (const bool b : {false, true}) with_bools(add_majors, a, b);
  };
  add_element(__nv_bfloat16{});
  add_element(__half{});
  add_element(float{});
  return out;
}

void register_hopper_kernels(Registry<GemmProblem>& registry) {
  const std::vector<DType> tensor_dtypes = {DType::bf16, DType::f16, DType::tf32};
  registry.add({{.name = "cuda_wgmma_tma", .backend = Backend::cuda, .rung = 18, .summary = "Hopper wgmma fed by TMA",
                 .dtypes = tensor_dtypes, .min_compute_capability = 90},
                {.precondition = hopper_precondition,
                 .workspace_bytes = [](const GemmProblem& p, const Context&) { return tf32_copy_bytes(p); },
                 .run = by_tensor_dtype<TmaRunner>, .launches = tensor_plans<TmaRunner>},
                {.half_inputs_f32_output = true}});
  registry.add({{.name = "cuda_wgmma_ws", .backend = Backend::cuda, .rung = 19,
                 .summary = "warp-specialised persistent wgmma", .dtypes = tensor_dtypes, .min_compute_capability = 90,
                 .auto_priority = 30},
                {.precondition = hopper_precondition, .workspace_bytes = wgmma_ws_workspace_bytes,
                 .run = by_tensor_dtype<WsRunner>, .launches = tensor_plans<WsRunner>},
                {.half_inputs_f32_output = true, .batched = true}});
  // cuda_wgmma_tuned picks its tile per shape (no tile here). Every tile the table can pick
  // is an entry of its own too, so the GPU tests check each one and the benchmark shows
  // what the table chose from, split as the rule says. A tuning run may add rows of
  // SplitMode::none (suffix "_k1": never split) and SplitMode::most ("_kmax": split as far
  // as the limits allow): the 2026-11-24 table came from such a run. They are not
  // registered otherwise, to keep the GPU tests short.
  // cuda_wgmma_fixed is cuda_wgmma_tuned with the problem's M, N and K compiled into its
  // kernel (FixedShape), to measure what specialising to the shape gains.
  struct Tuned {
    std::string name, summary;
    std::optional<WgmmaTile> tile;
    SplitMode mode;
    bool fixed_shape = false;
  };
  std::vector<Tuned> tuned = {{"cuda_wgmma_tuned", "rung 19 tuned per shape", std::nullopt, SplitMode::rule},
                              {"cuda_wgmma_fixed",
                               "cuda_wgmma_tuned with the problem's M, N and K compiled into its kernel (a "
                               "compile per shape, on first use)",
                               std::nullopt, SplitMode::rule, true}};
  for (const TunedWgmma& t : kTunedWgmma)
    tuned.push_back({t.name, std::string(t.summary) + "; split-K as the table's rule says", t.tile, SplitMode::rule});
  for (const Tuned& t : tuned) {
    const auto tile_for = [tile = t.tile](const GemmProblem& p, const auto& device) {
      return tile ? *tile : tuned_tile(p, device);
    };
    registry.add({{.name = t.name, .backend = Backend::cuda, .rung = 21, .summary = t.summary, .dtypes = tensor_dtypes,
                   .min_compute_capability = 90},
                  {.precondition = hopper_precondition,
                   .workspace_bytes = [=, mode = t.mode, fixed = t.fixed_shape](const GemmProblem& p, const Context& ctx) {
                     return wgmma_tuned_workspace_bytes(p, ctx, tile_for(p, ctx), mode, fixed);
                   },
                   .run = [=, mode = t.mode, fixed = t.fixed_shape](const GemmProblem& p, const KernelLaunch& l) {
                     run_wgmma_tuned(p, l, tile_for(p, l.context), mode, fixed);
                   },
                   .launches = [=, mode = t.mode, fixed = t.fixed_shape](const GemmProblem& p, const LaunchQueries& q) {
                     return wgmma_tuned_plans(p, q, tile_for(p, q.sm_count), mode, fixed);
                   }},
                  {.half_inputs_f32_output = true, .batched = true, .compiles_per_shape = t.fixed_shape}});
  }
}

}  // namespace gemmkit::cuda

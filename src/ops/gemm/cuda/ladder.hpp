// What the CUDA GEMM parts (register.cu lists them) share. Every entry is one KernelEntry written as three lists of designated
// initializers, what it is, what it runs and its GEMM traits (registry.add({{.name = ...},
// {.run = ...}, {.batched = true}})); a launcher written once against an emitter gives both
// its run and its launches through runs() and plans().
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ops/gemm/cuda/simt/autotune_table.hpp"
#include "launch/explain_launch.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cuda {

// KernelEntry::run and ::launches from one launcher, launcher(p, emit), that queues its
// launches through emit (explain_launch.hpp): a LaunchEmit runs them, a PlanEmit describes
// them.
template <class Launcher>
auto runs(Launcher launcher) {
  return [launcher](const GemmProblem& p, const KernelLaunch& l) { launcher(p, LaunchEmit{l.stream, &l.context}); };
}
template <class Launcher>
auto plans(Launcher launcher) {
  return [launcher](const GemmProblem& p, const LaunchQueries& q) {
    std::vector<LaunchPlan> out;
    launcher(p, PlanEmit{&out, &q});
    return out;
  };
}

// Every kernel compiled on first use that the launcher can launch for `dtypes`: what it
// launches for each transpose and each alignment of A, B and C (16-byte rows or not).
template <class Launcher>
void add_jit_kernels(std::vector<const JitKernel*>& out, Launcher launcher, std::initializer_list<DType> dtypes) {
  for (const DType dtype : dtypes)
    for (int variant = 0; variant < 32; ++variant) {
      const auto bit = [&](int i) { return (variant >> i & 1) != 0; };
      // Addresses only looked at, never read: 256 is on 16 bytes, 260 is not.
      const auto at = [&](int i) { return reinterpret_cast<void*>(std::uintptr_t(bit(i) ? 256 : 260)); };
      GemmProblem p;
      p.dtype = dtype, p.m = p.n = p.k = 64;
      p.trans_a = bit(0), p.trans_b = bit(1);
      p.a = at(2), p.b = at(3), p.c = at(4);
      p.lda = p.ldb = p.ldc = 64;
      launcher(p, JitListEmit{&out});
    }
}

// Rung 24's launch plans (hopper/24_wgmma_i8.cu).
std::vector<LaunchPlan> wgmma_i8_plans(const GemmProblem& p, const LaunchQueries& q);

// Rung 14's kernel in one tuned configuration (ladder_warptile.cu). Rung 15 runs it when a
// problem has no partial wave to split.
void run_tuned_config(TunedConfig config, const GemmProblem& p, const KernelLaunch& launch);
// Its launch plans (KernelEntry::launches).
std::vector<LaunchPlan> tuned_config_plans(TunedConfig config, const GemmProblem& p, const LaunchQueries& q);
// Blocks of that configuration one SM runs at once (rung 23 sizes its split by a wave).
int tuned_config_blocks_per_sm(TunedConfig config, const Context& ctx);
// The same through explain's queries.
int tuned_config_blocks_per_sm(TunedConfig config, const LaunchQueries& q);

}  // namespace gemmkit::cuda

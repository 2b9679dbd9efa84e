// The CPU backend's registry entries, in ladder order.
#include "ops/gemm/cpu/cpu_kernels.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::detail {
namespace {

KernelEntry cpu_entry(std::string name, int rung, std::string summary, std::vector<DType> dtypes,
                      int auto_priority, std::function<void(const GemmProblem&)> run) {
  KernelEntry e;
  e.name = std::move(name);
  e.backend = Backend::cpu;
  e.rung = rung;
  e.summary = std::move(summary);
  e.dtypes = std::move(dtypes);
  e.auto_priority = auto_priority;
  // CPU kernels run on the calling thread; the launch's stream and workspace do not apply.
  e.run = [run = std::move(run)](const GemmProblem& p, const KernelLaunch&) { run(p); };
  return e;
}

}  // namespace

void register_cpu_kernels(Registry<GemmProblem>& registry) {
  const std::vector<DType> floats = {DType::f32, DType::f64};
  const std::vector<DType> all = {DType::f32, DType::f64, DType::i32, DType::i64};
  // auto_priority: OpenBLAS for floats, cpu_blocked for integers (OpenBLAS has none).
  KernelEntry openblas = cpu_entry("cpu_openblas", 0,
                                   "OpenBLAS sgemm/dgemm, row-major, transposes passed through",
                                   floats, 40, cpu::openblas_gemm);
  openblas.role = KernelRole::reference;
  openblas.batched = true;  // strided batches: see batch.cpp
  openblas.precondition = cpu::openblas_rejects;
  registry.add(std::move(openblas));
  // The tensor-core dtypes on the CPU: what the GPU computes (exact products, FP32 sums).
  KernelEntry widened = cpu_entry("cpu_widened", 0,
                                  "f16/bf16/tf32 widened to f32 (tf32 cut as the GPU reads "
                                  "it) and multiplied by OpenBLAS SGEMM; C rounded once",
                                  {DType::f16, DType::bf16, DType::tf32}, 40, cpu::widened_gemm);
  widened.role = KernelRole::reference;
  widened.half_inputs_f32_output = true;
  widened.batched = true;
  widened.precondition = cpu::openblas_rejects;
  registry.add(std::move(widened));
  registry.add(cpu_entry("cpu_naive", 1,
                         "the textbook triple loop, as the teaching texts' hostmult0 writes it: i and j over C, k innermost, accumulating straight into C's element in memory", all,
                         10, cpu::naive_gemm));
  registry.add(cpu_entry("cpu_restrict", 2,
                         "rung 1's loops with __restrict pointers and a register accumulator (the teaching texts' hostmult1)",
                         all, 20, cpu::restrict_gemm));
  // cpu_blocked is also the CPU's exact int8 GEMM (C in i32) and its i32 GEMM with C in i64:
  // the integer dtypes the GPU offers, with the same results.
  std::vector<DType> blocked_dtypes = all;
  blocked_dtypes.push_back(DType::i8);
  KernelEntry blocked = cpu_entry("cpu_blocked", 3,
                                  "cache-blocked GEMM in the BLIS style",
                                  blocked_dtypes, 30, cpu::blocked_gemm);
  blocked.batched = true;
  blocked.wider_integer_output = true;
  registry.add(std::move(blocked));
}

}  // namespace gemmkit::detail

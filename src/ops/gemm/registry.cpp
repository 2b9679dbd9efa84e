// GEMM's registry and its own rules: C's dtype, batches, the measured table, its messages.
#include "gemmkit/registry.hpp"

#include "ops/gemm/auto_table.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit {

template <>
std::optional<std::string> Kernel<GemmProblem>::rejects(const GemmProblem& problem) const {
  if (!supports(problem.dtype))
    return "dtype " + std::string(dtype_name(problem.dtype)) + " is not supported";
  // int8 inputs always come with int32 C (validate checks), which every int8 entry writes;
  // i32 inputs with i64 C only for entries that say so.
  const bool wider_integer = problem.dtype == DType::i32 && problem.c_dtype() == DType::i64;
  if (problem.c_dtype() != problem.dtype && problem.dtype != DType::i8 &&
      !(wider_integer ? wider_integer_output : half_inputs_f32_output))
    return "C in " + std::string(dtype_name(problem.c_dtype())) + " is not supported";
  if (!precondition) return std::nullopt;
  if (batched || problem.batch <= 1) return precondition(problem);
  // Run one product at a time: every product must be accepted. What preconditions check
  // (sizes, and alignments of pointers that advance by fixed strides) holds for every
  // product when it holds for the first two.
  if (auto why = precondition(batch_item(problem, 0))) return why;
  return precondition(batch_item(problem, 1));
}

template <>
std::size_t Kernel<GemmProblem>::workspace_for(const GemmProblem& problem, const Context& ctx) const {
  if (!workspace_bytes || writes_nothing(problem)) return 0;
  return workspace_bytes(batched || problem.batch <= 1 ? problem : batch_item(problem, 0), ctx);
}

// A kernel that computes in less precision than the problem's dtype: auto takes it only for
// problems of that lower dtype (cuBLAS TF32 for a tf32 GEMM, never for an f32 one).
template <>
std::optional<DType> Kernel<GemmProblem>::computes_in(const GemmProblem& problem) const {
  if (accuracy && *accuracy != problem.dtype) return accuracy;
  return std::nullopt;
}

template <>
std::string Registry<GemmProblem>::refusal_message(const Refusal& r) const {
  const auto backend = [](Backend b) { return std::string(backend_name(b)); };
  switch (r.kind) {
    case Refusal::unknown_name:
      return "unknown kernel '" + std::string(r.name) + "' (known: " + r.why + "; see 'gemmkit list')" +
             detail::without_cuda_note();
    case Refusal::other_backend:
      return "kernel '" + r.entry->name + "' belongs to the " + backend(r.entry->backend) + " backend, not " +
             backend(r.ctx->backend());
    case Refusal::refused:
      return "kernel '" + r.entry->name + "' cannot run " + r.problem->shape_string() + " " +
             std::string(dtype_name(r.problem->dtype)) + ": " + r.why;
    case Refusal::old_device:
      return "kernel '" + r.entry->name + "' needs compute capability " +
             std::to_string(r.entry->min_compute_capability) + ", the device has " +
             std::to_string(r.ctx->compute_capability());
    case Refusal::none_accepts:
      return "no " + backend(r.ctx->backend()) + " kernel in this build accepts a " +
             std::string(dtype_name(r.problem->dtype)) + " GEMM of " + r.problem->shape_string();
  }
  return "no kernel";
}

template <>
bool Registry<GemmProblem>::names_auto(std::string_view name) {
  return name == "auto";
}

GemmRunReport run_batch(const KernelEntry& entry, const GemmProblem& problem, const KernelLaunch& launch,
                        const GemmOptions& options) {
  if (writes_nothing(problem)) return {};  // so no launcher needs to check
  const auto run = [&](const GemmProblem& p) {
    if (entry.run_with_options) return entry.run_with_options(p, launch, options);
    entry.run(p, launch);
    return GemmRunReport{};
  };
  if (entry.batched) return run(problem);
  GemmRunReport report;
  for (std::int64_t i = 0; i < problem.batch; ++i) report = run(batch_item(problem, i));
  return report;
}

std::size_t workspace_with(const KernelEntry& entry, const GemmProblem& problem, const Context& ctx,
                           const GemmOptions& options) {
  if (!entry.workspace_with_options || writes_nothing(problem)) return entry.workspace_for(problem, ctx);
  return entry.workspace_with_options(entry.batched || problem.batch <= 1 ? problem : batch_item(problem, 0), ctx,
                                      options);
}

bool has_kernel_options(const GemmOptions& options) { return options.moduli != 0 || options.limbs.words; }

std::string kernel_options_text(const GemmOptions& options) {
  std::string text;
  if (options.moduli != 0) text = "moduli " + std::to_string(options.moduli);
  if (options.limbs.words) text += (text.empty() ? "" : " and ") + std::string("exact output (limbs)");
  return text;
}

namespace {

bool takes_options(const KernelEntry& e, const GemmOptions& options) {
  return (options.moduli == 0 || e.takes_moduli) && (!options.limbs.words || e.writes_limbs);
}

// "moduli 16 is for cuda_ozaki_f64 (cuda), cuda_ozaki_f32 (cuda)": the kernels that take what
// was asked, by name, so the caller can name one.
std::string options_are_for(const GemmOptions& options) {
  std::string takers;
  for (const KernelEntry& e : gemm_registry().entries())
    if (takes_options(e, options))
      takers += (takers.empty() ? "" : ", ") + e.name + " (" + std::string(backend_name(e.backend)) + ")";
  if (takers.empty())
    return kernel_options_text(options) + " is taken by no kernel of this build" +
           (cuda_compiled() ? "" : " (it was built without the CUDA backend)");
  return kernel_options_text(options) + " is for " + takers;
}

}  // namespace

std::optional<std::string> kernel_options_refusal(const KernelEntry& entry, const GemmOptions& options,
                                                  const GemmProblem& problem) {
  if (!takes_options(entry, options)) return options_are_for(options) + "; not for " + entry.name;
  if (options.limbs.words && problem.batch != 1)
    return "exact output (limbs) takes one product, not a batch of " + std::to_string(problem.batch);
  return std::nullopt;
}

std::optional<std::string> auto_options_refusal(Backend backend, const GemmOptions& options) {
  if (!has_kernel_options(options)) return std::nullopt;
  bool takers = false, other_backend = false;
  for (const KernelEntry& e : gemm_registry().entries()) {
    if (!takes_options(e, options)) continue;
    takers = true;
    if (e.auto_priority <= 0) continue;
    if (e.backend == backend) return std::nullopt;
    other_backend = true;
  }
  if (!takers) return options_are_for(options);
  return options_are_for(options) + (other_backend ? "; not for the " + std::string(backend_name(backend)) + " backend"
                                                   : ", which auto does not choose: name one");
}

namespace {

// The process-wide registry; only register_kernel changes it after it is made.
Registry<GemmProblem>& process_registry() {
  static Registry<GemmProblem> registry = [] {
    Registry<GemmProblem> r("gemm");
    detail::register_cpu_kernels(r);
#ifdef GEMMKIT_HAVE_CUDA
    detail::register_cuda_kernels(r);
#endif
    r.set_measured_table(detail::gemm_measured_table());
    return r;
  }();
  return registry;
}

}  // namespace

const Registry<GemmProblem>& gemm_registry() { return process_registry(); }

void register_kernel(KernelEntry entry) {
  const std::string name = entry.name;
  auto bad = [&](const std::string& why) {
    fail(ErrorCategory::usage, "cannot register kernel '" + name + "': " + why);
  };
  if (name.empty() || name == "auto") bad("the name must be non-empty and not 'auto'");
  if (!entry.run) bad("it has no run function");
  if (entry.dtypes.empty()) bad("it declares no dtype");
  if (entry.summary.empty()) bad("it has no summary (gemmkit list shows it)");
  if (entry.backend == Backend::cuda && entry.min_compute_capability <= 0)
    bad("a CUDA kernel needs min_compute_capability (e.g. 80)");
  if (!process_registry().try_add(std::move(entry))) bad("a kernel of that name is already registered");
}

}  // namespace gemmkit

// gemmkit list: every kernel of every operation in the library's catalogue.
#include <algorithm>
#include <cstdio>
#include <map>

#include "cli.hpp"
#include "gemmkit/bench.hpp"
#include "gemmkit/catalogue.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cli {
namespace {

// The GEMM traits the table shows for every operation (none but GEMM's kernels have them).
std::optional<DType> accuracy(const CatalogueEntry& e) { return e.gemm ? e.gemm->accuracy : std::nullopt; }
bool batched(const CatalogueEntry& e) { return e.gemm && e.gemm->batched; }

std::string dtype_list(const CatalogueEntry& c) {
  std::string s;
  for (DType d : c.kernel->dtypes) s += (s.empty() ? "" : ",") + std::string(dtype_name(d));
  // A kernel that computes in less precision than its dtype says so: "f32 as tf32".
  if (const auto lower = accuracy(c)) s += " as " + std::string(dtype_name(*lower));
  return s;
}

// "yes", or why this machine cannot run the kernel.
std::string availability(const KernelInfo& e) {
  if (e.backend == Backend::cpu) return "yes";
  if (!cuda_device_available()) return "no device";
  const int cc = current_compute_capability();
  if (cc < e.min_compute_capability) return "needs sm_" + std::to_string(e.min_compute_capability);
  return "yes";
}

// `list --auto MxNxK`: the problem auto is asked about.
struct AutoArgs {
  std::string shape, dtype = "f32", backend = "auto", layout = "row";
  bool trans_a = false, trans_b = false;
};

std::string verdict_name(AutoCandidate::Verdict v) {
  switch (v) {
    case AutoCandidate::Verdict::chosen: return "chosen";
    case AutoCandidate::Verdict::refused: return "refused";
    case AutoCandidate::Verdict::passed_over: return "passed over";
    case AutoCandidate::Verdict::unchecked: return "if the device runs it";
  }
  return "?";
}

// Prints which kernel `auto` runs for the problem and why, from the library's own decision
// (explain_auto_choice, which the dispatcher uses). A CUDA decision without a device is made
// on host logic alone; the compute capability it would need is said instead of checked.
void explain_auto(const AutoArgs& a, const std::string& json_path) {
  const std::optional<BenchShape> shape = parse_bench_shape(a.shape);
  if (!shape) fail(ErrorCategory::usage, "--auto: '" + a.shape + "' is not MxNxK with positive integers (e.g. 16x8192x8192)");
  const auto dtype = parse_dtype(a.dtype);
  if (!dtype) fail(ErrorCategory::usage, "unknown dtype '" + a.dtype + "'");
  const std::optional<Layout> layout = parse_layout(a.layout);
  if (!layout) fail(ErrorCategory::usage, "--layout: '" + a.layout + "' is not row or col");
  GemmProblem p;
  p.dtype = *dtype;
  p.m = shape->m, p.n = shape->n, p.k = shape->k;
  p.trans_a = a.trans_a, p.trans_b = a.trans_b;
  p.layout = *layout;
  // Packed operands: each leading dimension the stored width (row-major) or height.
  const bool row = p.layout == Layout::row_major;
  p.lda = std::max<std::int64_t>(1, row ? p.a_cols() : p.a_rows());
  p.ldb = std::max<std::int64_t>(1, row ? p.b_cols() : p.b_rows());
  p.ldc = std::max<std::int64_t>(1, row ? p.n : p.m);
  // The backend auto would take: CUDA when a device is there and one of its kernels accepts.
  const bool device = cuda_device_available();
  std::optional<Backend> backend = parse_backend(a.backend);
  if (backend == Backend::cuda && !cuda_compiled())
    fail(ErrorCategory::usage, "--backend cuda: this build has no CUDA backend (no nvcc at configure time)");
  if (!backend)
    backend = device && explain_auto_choice(Backend::cuda, current_compute_capability(), p).chosen
                  ? Backend::cuda : Backend::cpu;
  const std::optional<int> cc =
      *backend == Backend::cuda && device ? std::optional<int>(current_compute_capability()) : std::nullopt;
  const AutoChoice choice = explain_auto_choice(*backend, cc, p);

  const std::string problem = "the " + std::string(dtype_name(p.dtype)) + " GEMM " + p.shape_string();
  std::string where = std::string(backend_name(*backend)) + " backend";
  if (cc) where += ", a device of compute capability " + std::to_string(*cc);
  else if (*backend == Backend::cuda) where += ", no device here (" + no_device_message() + "): the compute capability is not checked";
  if (!json_path.empty()) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const AutoCandidate& c : choice.candidates)
      candidates.push_back({{"kernel", c.entry->name}, {"auto_priority", c.entry->auto_priority},
                            {"min_compute_capability", c.entry->min_compute_capability},
                            {"verdict", verdict_name(c.verdict)}, {"reason", c.reason}});
    const nlohmann::json out = json_document("list", {
        {"dtype", dtype_name(p.dtype)}, {"m", p.m}, {"n", p.n}, {"k", p.k},
        {"trans_a", p.trans_a}, {"trans_b", p.trans_b}, {"layout", a.layout},
        {"backend", backend_name(*backend)},
        {"compute_capability", cc ? nlohmann::json(*cc) : nlohmann::json(nullptr)},
        {"device_checked", choice.device_checked}, {"rule", choice.rule},
        {"tuned_compute_capability", choice.tuned_compute_capability ? nlohmann::json(choice.tuned_compute_capability) : nlohmann::json(nullptr)},
        {"chosen", choice.chosen ? nlohmann::json(choice.chosen->name) : nlohmann::json(nullptr)},
        {"candidates", candidates}});
    write_json(json_path, out);
    return;
  }
  std::printf("auto for %s on the %s\n", problem.c_str(), where.c_str());
  std::printf("rule: %s\n", choice.rule.c_str());
  if (!choice.chosen)
    std::printf("picks: none (no %s kernel accepts it%s)\n", std::string(backend_name(*backend)).c_str(),
                cc ? " on this device" : "");
  else if (!choice.device_checked && choice.tuned_compute_capability)
    std::printf("picks: %s on a device of compute capability %d, where it was tuned (other devices: see below)\n",
                choice.chosen->name.c_str(), choice.tuned_compute_capability);
  else if (!choice.device_checked)
    std::printf("picks: %s on a device of compute capability %d or more%s\n", choice.chosen->name.c_str(),
                choice.chosen->min_compute_capability,
                std::count_if(choice.candidates.begin(), choice.candidates.end(),
                              [](const AutoCandidate& c) { return c.verdict == AutoCandidate::Verdict::unchecked; }) > 1
                    ? " (older ones: see below)" : "");
  else
    std::printf("picks: %s\n", choice.chosen->name.c_str());
  std::printf("%-22s %8s %6s  %-22s %s\n", "candidate", "priority", "min_cc", "verdict", "reason");
  for (const AutoCandidate& c : choice.candidates)
    std::printf("%-22s %8d %6s  %-22s %s\n", c.entry->name.c_str(), c.entry->auto_priority,
                c.entry->min_compute_capability ? std::to_string(c.entry->min_compute_capability).c_str() : "-",
                verdict_name(c.verdict).c_str(), c.reason.c_str());
}

}  // namespace

void add_list(CLI::App& app) {
  auto json = std::make_shared<std::string>();
  auto operation = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("list", "List the kernels of every operation and backend in this build");
  add_json_option(cmd, *json, "Write the table (or the --auto answer) as JSON instead of printing it");
  std::string names;
  for (std::string_view name : catalogue_operations()) names += (names.empty() ? "" : ", ") + std::string(name);
  cmd->add_option("--operation", *operation, "Only this operation's kernels: " + names);
  auto a = std::make_shared<AutoArgs>();
  CLI::Option* auto_opt = cmd->add_option(
      "--auto", a->shape,
      "Say which GEMM kernel --kernel auto runs for this MxNxK problem and why: the rule, and "
      "each candidate in the order considered with why it was refused or passed over (a CUDA "
      "decision without a device is made on what needs none, the compute capability said "
      "instead of checked)");
  // The problem's other properties, for --auto only.
  const std::vector<CLI::Option*> problem_opts = {
      cmd->add_option("--dtype", a->dtype, "With --auto: the dtype (f32, f64, i32, i64, bf16, f16, tf32)")
          ->capture_default_str(),
      cmd->add_option("--backend", a->backend, std::string("With --auto: ") + kBackendHelp)->capture_default_str(),
      cmd->add_flag("--transpose-a", a->trans_a, "With --auto: A stored transposed (K x M)"),
      cmd->add_flag("--transpose-b", a->trans_b, "With --auto: B stored transposed (N x K)"),
      cmd->add_option("--layout", a->layout, "With --auto: row or col (column-major)")->capture_default_str()};
  cmd->callback([json, operation, a, auto_opt, problem_opts] {
    check_outputs({{"--json", *json}});
    if (auto_opt->count() == 0) {
      for (const CLI::Option* opt : problem_opts)
        if (opt->count() > 0)
          fail(ErrorCategory::usage, opt->get_name() + " goes with --auto MxNxK (which problem to explain)");
    } else {
      if (!operation->empty() && *operation != "gemm")
        fail(ErrorCategory::usage, "--auto explains the GEMM choice; --operation " + *operation + " does not go with it");
      explain_auto(*a, *json);
      return;
    }
    const std::vector<CatalogueEntry> entries = catalogue(*operation);
    if (!json->empty()) {
      nlohmann::json rows = nlohmann::json::array();
      for (const CatalogueEntry& c : entries) {
        const KernelInfo& e = *c.kernel;
        nlohmann::json dtypes = nlohmann::json::array();
        for (DType d : e.dtypes) dtypes.push_back(dtype_name(d));
        const std::optional<DType> lower = accuracy(c);
        rows.push_back({{"operation", c.operation}, {"name", e.name}, {"backend", backend_name(e.backend)},
                       {"rung", e.rung}, {"role", kernel_role_name(e.role)}, {"dtypes", dtypes},
                       {"accuracy", lower ? nlohmann::json(dtype_name(*lower)) : nlohmann::json(nullptr)},
                       {"min_compute_capability", e.min_compute_capability},
                       {"auto", e.auto_priority > 0}, {"batched", batched(c)},
                       {"available", availability(e)},
                       {"summary", e.summary}});
      }
      write_json(*json, json_document("list", {{"rows", rows}}));
      return;
    }
    // The dtype column of each operation's table as wide as its widest entry.
    std::map<std::string_view, int> dtype_widths;
    for (const CatalogueEntry& c : entries)
      dtype_widths[c.operation] = std::max({dtype_widths[c.operation], 16, int(dtype_list(c).size())});
    const int name_width = 22;
    int dtype_width = 16;
    std::string_view current;
    for (const CatalogueEntry& c : entries) {
      const KernelInfo& e = *c.kernel;
      if (c.operation != current) {  // one table per operation, GEMM first
        dtype_width = dtype_widths[c.operation];
        std::printf("%s%s\n", current.empty() ? "" : "\n", std::string(c.operation).c_str());
        std::printf("%-*s %-5s %4s %-10s %-*s %-6s %-4s %-7s %-10s %s\n", name_width, "kernel", "back", "rung",
                    "role", dtype_width, "dtypes", "min_cc", "auto", "batched", "available", "summary");
        current = c.operation;
      }
      std::printf("%-*s %-5s %4d %-10s %-*s %-6s %-4s %-7s %-10s %s\n", name_width, e.name.c_str(),
                  std::string(backend_name(e.backend)).c_str(), e.rung,
                  std::string(kernel_role_name(e.role)).c_str(), dtype_width, dtype_list(c).c_str(),
                  e.min_compute_capability ? std::to_string(e.min_compute_capability).c_str() : "-",
                  e.auto_priority > 0 ? "yes" : "-", batched(c) ? "yes" : "-", availability(e).c_str(),
                  e.summary.c_str());
    }
    if (!cuda_compiled()) std::printf("(this build has no CUDA backend: no nvcc at configure time)\n");
  });
}

}  // namespace gemmkit::cli

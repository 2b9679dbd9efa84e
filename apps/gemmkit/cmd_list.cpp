// gemmkit list: every kernel in the registry.
#include <cstdio>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit::cli {
namespace {

std::string dtype_list(const KernelEntry& e) {
  std::string s;
  for (DType d : e.dtypes) s += (s.empty() ? "" : ",") + std::string(dtype_name(d));
  // A kernel that computes in less precision than its dtype says so: "f32 as tf32".
  if (e.accuracy) s += " as " + std::string(dtype_name(*e.accuracy));
  return s;
}

// "yes", or why this machine cannot run the kernel.
std::string availability(const KernelEntry& e) {
  if (e.backend == Backend::cpu) return "yes";
  if (!cuda_device_available()) return "no device";
  const int cc = current_compute_capability();
  if (cc < e.min_compute_capability) return "needs sm_" + std::to_string(e.min_compute_capability);
  return "yes";
}

}  // namespace

void add_list(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("list", "List the kernels of every backend in this build");
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->callback([json] {
    std::vector<const KernelEntry*> entries;
    for (Backend b : {Backend::cpu, Backend::cuda})
      for (const KernelEntry* e : Registry::instance().of_backend(b)) entries.push_back(e);
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const KernelEntry* e : entries) {
        nlohmann::json dtypes = nlohmann::json::array();
        for (DType d : e->dtypes) dtypes.push_back(dtype_name(d));
        out.push_back({{"name", e->name}, {"backend", backend_name(e->backend)},
                       {"rung", e->rung},
                       {"role", e->role == KernelRole::reference ? "reference" : "ladder"},
                       {"dtypes", dtypes},
                       {"accuracy", e->accuracy ? nlohmann::json(dtype_name(*e->accuracy))
                                                : nlohmann::json(nullptr)},
                       {"min_compute_capability", e->min_compute_capability},
                       {"available", availability(*e)}, {"summary", e->summary}});
      }
      std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    std::printf("%-22s %-5s %4s %-10s %-16s %-6s %-10s %s\n", "kernel", "back", "rung", "role",
                "dtypes", "min_cc", "available", "summary");
    for (const KernelEntry* e : entries)
      std::printf("%-22s %-5s %4d %-10s %-16s %-6s %-10s %s\n", e->name.c_str(),
                  std::string(backend_name(e->backend)).c_str(), e->rung,
                  e->role == KernelRole::reference ? "reference" : "ladder",
                  dtype_list(*e).c_str(),
                  e->min_compute_capability ? std::to_string(e->min_compute_capability).c_str() : "-",
                  availability(*e).c_str(), e->summary.c_str());
    if (!cuda_compiled()) std::printf("(this build has no CUDA backend: no nvcc at configure time)\n");
  });
}

}  // namespace gemmkit::cli

// gemmkit list: every kernel of every operation in the library's catalogue.
#include <cstdio>

#include "cli.hpp"
#include "gemmkit/catalogue.hpp"
#include "gemmkit/device.hpp"

namespace gemmkit::cli {
namespace {

std::string dtype_list(const CatalogueEntry& e) {
  std::string s;
  for (DType d : e.dtypes) s += (s.empty() ? "" : ",") + std::string(dtype_name(d));
  // A kernel that computes in less precision than its dtype says so: "f32 as tf32".
  if (e.accuracy) s += " as " + std::string(dtype_name(*e.accuracy));
  return s;
}

// "yes", or why this machine cannot run the kernel.
std::string availability(const CatalogueEntry& e) {
  if (e.backend == Backend::cpu) return "yes";
  if (!cuda_device_available()) return "no device";
  const int cc = current_compute_capability();
  if (cc < e.min_compute_capability) return "needs sm_" + std::to_string(e.min_compute_capability);
  return "yes";
}

}  // namespace

void add_list(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto operation = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("list", "List the kernels of every operation and backend in this build");
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->add_option("--operation", *operation, "Only this operation's kernels: gemm, reduce, spmv or conv1d");
  cmd->callback([json, operation] {
    const std::vector<CatalogueEntry> entries = catalogue(*operation);
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const CatalogueEntry& e : entries) {
        nlohmann::json dtypes = nlohmann::json::array();
        for (DType d : e.dtypes) dtypes.push_back(dtype_name(d));
        out.push_back({{"operation", e.operation}, {"name", e.name}, {"backend", backend_name(e.backend)},
                       {"rung", e.rung}, {"role", kernel_role_name(e.role)}, {"dtypes", dtypes},
                       {"accuracy", e.accuracy ? nlohmann::json(dtype_name(*e.accuracy))
                                               : nlohmann::json(nullptr)},
                       {"min_compute_capability", e.min_compute_capability},
                       {"auto", e.auto_priority > 0}, {"available", availability(e)},
                       {"summary", e.summary}});
      }
      std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    std::string current;
    for (const CatalogueEntry& e : entries) {
      if (e.operation != current) {  // one table per operation, GEMM first
        std::printf("%s%s\n", current.empty() ? "" : "\n", e.operation.c_str());
        std::printf("%-22s %-5s %4s %-10s %-16s %-6s %-4s %-10s %s\n", "kernel", "back", "rung", "role",
                    "dtypes", "min_cc", "auto", "available", "summary");
        current = e.operation;
      }
      std::printf("%-22s %-5s %4d %-10s %-16s %-6s %-4s %-10s %s\n", e.name.c_str(),
                  std::string(backend_name(e.backend)).c_str(), e.rung,
                  std::string(kernel_role_name(e.role)).c_str(), dtype_list(e).c_str(),
                  e.min_compute_capability ? std::to_string(e.min_compute_capability).c_str() : "-",
                  e.auto_priority > 0 ? "yes" : "-", availability(e).c_str(), e.summary.c_str());
    }
    if (!cuda_compiled()) std::printf("(this build has no CUDA backend: no nvcc at configure time)\n");
  });
}

}  // namespace gemmkit::cli

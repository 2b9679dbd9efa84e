// The `meta` object of the stand-alone benchmarks' --json (gemmkit_modular_bench,
// gemmkit_exact_bench): where, when and from which commit, in the fields of gemmkit's own
// results (gemmkit/run_meta.hpp), so that scripts/check_results.py can tell a clean build.
#pragma once

#include <string>

#include "gemmkit/context.hpp"
#include "gemmkit/run_meta.hpp"

namespace gemmkit::bench {

// "\"meta\": {...}" for `ctx`'s device, to open the benchmark's JSON object with.
inline std::string meta_member(const Context& ctx) {
  const RunMeta m = run_meta(&ctx);
  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) out += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
    return out + "\"";
  };
  return "\"meta\": {\"schema\": \"gemmkit-results\", \"schema_version\": " + std::to_string(m.schema_version) +
         ", \"gemmkit_version\": " + quoted(m.gemmkit_version) + ", \"commit\": " + quoted(m.commit) +
         ", \"dirty\": " + (m.dirty ? "true" : "false") + ", \"date\": " + quoted(m.date_utc) +
         ", \"device\": " + quoted(m.device_name()) + ", \"driver_version\": " + std::to_string(m.driver_version) +
         ", \"cuda_runtime_version\": " + std::to_string(m.cuda_runtime_version) +
         ", \"cublas_version\": " + std::to_string(m.cublas_version) + "}";
}

}  // namespace gemmkit::bench

// Internal: what an operation's folder uses to describe itself to the catalogue
// (gemmkit/catalogue.hpp's Operation, in its operation.cpp): its registry's entries, and the
// explanation of one of them for a problem made from explain's sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gemmkit/catalogue.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "runtime/explain_device.hpp"

namespace gemmkit::detail {

template <class Problem>
void add_registry_entries(std::vector<CatalogueEntry>& out, std::string_view operation,
                          const Registry<Problem>& registry) {
  for (const Kernel<Problem>& e : registry.entries()) out.push_back({operation, &e, nullptr});
}

// A device address for a problem that is only described, never run: plans do not read it.
inline void* fake_device_pointer(int which) { return reinterpret_cast<void*>(std::uintptr_t(which) << 32); }

// The entry's checks, the problem's own refusal, then the plans. `problem` has its sizes;
// its dtype is set here from the request. `words` says the problem in words once the dtype is known.
template <class Problem, class Words>
Explanation explain_entry(std::string_view operation, const Registry<Problem>& registry,
                          const ExplainRequest& request, Problem problem, const char* cpu_threading, Words words) {
  const auto* entry = registry.find(request.kernel);
  if (!entry)
    fail(ErrorCategory::usage, "unknown " + std::string(operation) + " kernel '" + request.kernel +
                                   "' (known: " + registry.names() + ")" + without_cuda_note());
  Explanation out;
  out.operation = std::string(operation);
  out.kernel = entry->name;
  out.backend = entry->backend;
  out.role = entry->role;
  out.rung = entry->rung;
  out.summary = entry->summary;
  explain_detail::check_entry(out, request, entry->dtypes, bool(entry->launches), cpu_threading);
  problem.dtype = out.dtype;
  out.problem = words(std::string(dtype_name(out.dtype)));
  if (auto why = entry->rejects(problem)) fail(ErrorCategory::usage, entry->name + " does not run this problem: " + *why);
  explain_detail::explain_plans(out, request, [&](const LaunchQueries& q) { return entry->launches(problem, q); });
  return out;
}

}  // namespace gemmkit::detail

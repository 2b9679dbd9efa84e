// gemmkit::explain_operation: the launches of a reduce, spmv or conv1d kernel for a problem
// size, through the same machinery as GEMM's explain (src/runtime/explain.cpp).
#include <string>

#include "runtime/explain_device.hpp"
#include "gemmkit/conv1d.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/explain.hpp"
#include "gemmkit/reduce.hpp"
#include "gemmkit/sparse.hpp"

namespace gemmkit {
namespace {

void* fake_pointer(std::uintptr_t at) { return reinterpret_cast<void*>(at); }  // never dereferenced

// The entry's checks, the problem's own refusal, then the plans.
template <class Problem>
Explanation explain_entry(std::string_view operation, const Registry<Problem>& registry, const ExplainRequest& request,
                          Problem problem, const char* cpu_threading) {
  const auto* entry = registry.find(request.kernel);
  if (!entry)
    fail(ErrorCategory::usage, "unknown " + std::string(operation) + " kernel '" + request.kernel +
                                   "' (known: " + registry.names() + ")");
  Explanation out;
  out.operation = std::string(operation);
  out.kernel = entry->name;
  out.backend = entry->backend;
  out.role = entry->role;
  out.rung = entry->rung;
  out.summary = entry->summary;
  explain_detail::check_entry(out, request, entry->dtypes, bool(entry->launches), cpu_threading);
  problem.dtype = out.dtype;
  if (auto why = entry->rejects(problem)) fail(ErrorCategory::usage, entry->name + " does not run this problem: " + *why);
  explain_detail::explain_plans(out, request, [&](const LaunchQueries& q) { return entry->launches(problem, q); });
  return out;
}

}  // namespace

Explanation explain_operation(std::string_view operation, const ExplainRequest& r) {
  if (operation == "gemm") return explain(r);
  if (operation == "reduce") {
    if (r.m < 1) fail(ErrorCategory::usage, "explain reduce needs a length of at least 1 (--shape N)");
    ReduceProblem p;
    p.n = std::size_t(r.m);
    p.x = fake_pointer(std::uintptr_t(1) << 32);
    p.result = fake_pointer(std::uintptr_t(2) << 32);
    return explain_entry(operation, reduce_registry(), r, p, "one thread");
  }
  if (operation == "spmv") {
    if (r.m < 1 || r.n < 1 || r.k < 0)
      fail(ErrorCategory::usage, "explain spmv needs ROWSxCOLSxNNZ with rows and columns of at least 1 (--shape)");
    SpmvProblem p;
    p.rows = r.m, p.cols = r.n, p.nnz = r.k;
    p.row_offsets = fake_pointer(std::uintptr_t(1) << 32);
    p.col_indices = static_cast<const std::int32_t*>(fake_pointer(std::uintptr_t(2) << 32));
    p.values = fake_pointer(std::uintptr_t(3) << 32);
    p.x = fake_pointer(std::uintptr_t(4) << 32);
    p.y = fake_pointer(std::uintptr_t(5) << 32);
    return explain_entry(operation, spmv_registry(), r, p, "OpenMP threads over rows");
  }
  if (operation == "conv1d") {
    if (r.m < 1 || r.n < 1) fail(ErrorCategory::usage, "explain conv1d needs NxWIDTH, both at least 1 (--shape)");
    Conv1dProblem p;
    p.n = r.m, p.width = r.n;
    p.x = fake_pointer(std::uintptr_t(1) << 32);
    p.mask = nullptr;  // host memory: plans do not read it
    p.y = fake_pointer(std::uintptr_t(2) << 32);
    return explain_entry(operation, conv1d_registry(), r, p, "one thread");
  }
  fail(ErrorCategory::usage, "explain: unknown operation '" + std::string(operation) + "' (gemm, reduce, spmv, conv1d)");
}

}  // namespace gemmkit

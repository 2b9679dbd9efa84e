// gemmkit explain KERNEL --shape MxNxK [--dtype T] [--thread bx,by,tx,ty] [--json PATH]: how a
// kernel launches for a problem (gemmkit::explain does the work; this prints it).
#include <cstdio>
#include <sstream>

#include "cli.hpp"
#include "gemmkit/catalogue.hpp"
#include "gemmkit/explain.hpp"

namespace gemmkit::cli {
namespace {

struct ExplainArgs {
  std::string kernel, shape, dtype, thread, operation, json;
  bool transpose_a = false, transpose_b = false, recorded = false;
};

std::string dims(const Dim3& d) {
  return std::to_string(d.x) + " x " + std::to_string(d.y) + " x " + std::to_string(d.z);
}

std::string kib(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu B (%.1f KiB)", bytes, bytes / 1024.0);
  return buf;
}

std::string elements_text(const CElements& e) {
  const auto span = [](std::int64_t first, std::int64_t count, std::int64_t step) {
    if (count == 1) return std::to_string(first);
    return std::to_string(first) + ".." + std::to_string(first + (count - 1) * step) +
           (step == 1 ? "" : " step " + std::to_string(step));
  };
  return "rows " + span(e.row, e.rows, e.row_step) + " x columns " + span(e.col, e.cols, e.col_step) + " (" +
         std::to_string(e.count()) + " element" + (e.count() == 1 ? "" : "s") + ")";
}

// "bx,by,tx,ty": the block's x and y, the thread's x and y (z is 0).
std::pair<Dim3, Dim3> parse_thread(const std::string& text) {
  std::vector<std::int64_t> v;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      std::size_t used = 0;
      const long long x = std::stoll(item, &used);
      if (used != item.size() || x < 0) throw std::invalid_argument(item);
      v.push_back(x);
    } catch (const std::exception&) {
      fail(ErrorCategory::usage, "--thread: '" + item + "' is not a non-negative integer");
    }
  }
  if (v.size() != 4) fail(ErrorCategory::usage, "--thread takes bx,by,tx,ty (four integers), got '" + text + "'");
  return {Dim3{v[0], v[1], 0}, Dim3{v[2], v[3], 0}};
}

nlohmann::json to_json(const Dim3& d) { return {d.x, d.y, d.z}; }

nlohmann::json to_json(const CElements& e) {
  return {{"row", e.row}, {"rows", e.rows}, {"row_step", e.row_step},
          {"col", e.col}, {"cols", e.cols}, {"col_step", e.col_step}};
}

nlohmann::json to_json(const Explanation& x) {
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchExplanation& e : x.launches) {
    const Occupancy& o = e.occupancy;
    nlohmann::json j = {{"kernel", e.plan.kernel},
                        {"purpose", e.plan.purpose},
                        {"grid", to_json(e.plan.grid)},
                        {"block", to_json(e.plan.block)},
                        {"cluster", to_json(e.plan.cluster)},
                        {"dynamic_smem_bytes", e.plan.dynamic_smem},
                        {"mapping", e.plan.mapping},
                        {"thread_id_formula", e.thread_id_formula}};
    if (e.resources_known) {
      j["static_smem_bytes"] = e.static_smem;
      j["registers_per_thread"] = e.resources.registers;
      j["local_bytes_per_thread"] = e.resources.local_bytes;
      j["resources_source"] = e.resources.source;
      j["occupancy"] = {{"blocks_per_sm", o.blocks_per_sm}, {"warps_per_sm", o.warps_per_sm},
                        {"fraction", o.fraction}, {"limited_by", o.limited_by},
                        {"by_threads", o.by_threads}, {"by_registers", o.by_registers},
                        {"by_smem", o.by_smem}, {"by_blocks", o.by_blocks},
                        {"smem_per_block_bytes", o.smem_per_block},
                        {"registers_per_block", o.registers_per_block}};
      if (o.live_blocks_per_sm) j["occupancy"]["live_blocks_per_sm"] = *o.live_blocks_per_sm;
      if (o.active_clusters) j["occupancy"]["active_clusters"] = *o.active_clusters;
    }
    if (!e.note.empty()) j["note"] = e.note;
    if (e.thread) {
      nlohmann::json elements = nlohmann::json::array();
      for (const CElements& c : e.thread->elements) elements.push_back(to_json(c));
      j["thread"] = {{"block_idx", to_json(e.thread->block_idx)}, {"thread_idx", to_json(e.thread->thread_idx)},
                     {"block_id", e.thread->block_id}, {"thread_in_block", e.thread->thread_in_block},
                     {"global_id", e.thread->global_id}, {"warp", e.thread->warp}, {"lane", e.thread->lane},
                     {"steps", e.thread->steps}, {"elements", elements}};
    }
    launches.push_back(j);
  }
  const SmLimits& l = x.limits;
  return json_document("explain", {
          {"operation", x.operation},
          {"kernel", x.kernel},
          {"rung", x.rung},
          {"summary", x.summary},
          {"dtype", dtype_name(x.dtype)},
          {"m", x.m}, {"n", x.n}, {"k", x.k},
          {"live", x.live},
          {"limits", {{"source", l.source}, {"sm_count", l.sm_count},
                      {"max_threads_per_sm", l.max_threads_per_sm}, {"max_blocks_per_sm", l.max_blocks_per_sm},
                      {"registers_per_sm", l.registers_per_sm}, {"smem_per_sm_bytes", l.smem_per_sm},
                      {"smem_per_block_optin_bytes", l.smem_per_block_optin},
                      {"smem_reserved_per_block_bytes", l.smem_reserved_per_block}}},
          {"launches", launches}});
}

void print(const Explanation& x) {
  const SmLimits& l = x.limits;
  std::printf("%s (rung %d): %s\n", x.kernel.c_str(), x.rung, x.summary.c_str());
  std::printf("problem: %s\n", x.problem.c_str());
  std::printf("limits: %s: %d SMs; per SM %d threads, %d blocks, %d registers, %zu KiB shared memory "
              "(a block: up to %zu KiB, plus %zu B reserved)\n",
              l.source.c_str(), l.sm_count, l.max_threads_per_sm, l.max_blocks_per_sm, l.registers_per_sm,
              l.smem_per_sm / 1024, l.smem_per_block_optin / 1024, l.smem_reserved_per_block);
  for (std::size_t i = 0; i < x.launches.size(); ++i) {
    const LaunchExplanation& e = x.launches[i];
    const LaunchPlan& p = e.plan;
    std::printf("\nlaunch %zu of %zu: %s (%s)\n", i + 1, x.launches.size(), p.kernel.c_str(), p.purpose.c_str());
    std::printf("  grid      %s blocks (%lld)\n", dims(p.grid).c_str(), (long long)p.grid.count());
    std::printf("  block     %s threads (%lld, %lld warps)\n", dims(p.block).c_str(), (long long)p.block.count(),
                (long long)((p.block.count() + 31) / 32));
    if (p.cluster.count() > 1) std::printf("  cluster   %s blocks\n", dims(p.cluster).c_str());
    if (e.resources_known) {
      const Occupancy& o = e.occupancy;
      std::printf("  shared    static %s, dynamic %s\n", kib(e.static_smem).c_str(), kib(p.dynamic_smem).c_str());
      std::printf("  registers %d per thread%s (%s)\n", e.resources.registers,
                  e.resources.local_bytes ? (", " + std::to_string(e.resources.local_bytes) + " B stack").c_str() : "",
                  e.resources.source.c_str());
      std::printf("  occupancy %d block%s per SM = %d warps of %d (%.0f%%), limited by %s\n", o.blocks_per_sm,
                  o.blocks_per_sm == 1 ? "" : "s", o.warps_per_sm, l.max_threads_per_sm / l.warp_size,
                  100 * o.fraction, o.limited_by.c_str());
      std::printf("            limits alone: threads %d, registers %d (%d per block), shared memory %d (%zu B "
                  "per block), blocks %d\n",
                  o.by_threads, o.by_registers, o.registers_per_block, o.by_smem, o.smem_per_block, o.by_blocks);
      if (o.live_blocks_per_sm) std::printf("            cudaOccupancyMaxActiveBlocksPerMultiprocessor: %d\n", *o.live_blocks_per_sm);
      if (o.active_clusters) std::printf("            clusters resident on the device: %d\n", *o.active_clusters);
    } else {
      std::printf("  shared    dynamic %s\n  resources unknown: %s\n", kib(p.dynamic_smem).c_str(), e.note.c_str());
    }
    std::printf("  thread id %s\n", e.thread_id_formula.c_str());
    std::printf("  C         %s\n", p.mapping.c_str());
    if (e.thread) {
      const ThreadAnswer& t = *e.thread;
      std::printf("  thread (blockIdx (%lld, %lld, %lld), threadIdx (%lld, %lld, %lld)):\n", (long long)t.block_idx.x,
                  (long long)t.block_idx.y, (long long)t.block_idx.z, (long long)t.thread_idx.x,
                  (long long)t.thread_idx.y, (long long)t.thread_idx.z);
      for (const std::string& s : t.steps) std::printf("    %s\n", s.c_str());
      if (!p.elements) std::printf("    writes: as the mapping above says\n");
      else if (t.elements.empty()) std::printf("    writes no element of C (outside C, or this launch writes none)\n");
      for (const CElements& c : t.elements) std::printf("    writes C %s\n", elements_text(c).c_str());
    }
  }
}

// The operation a kernel name belongs to: --operation, else the first in the catalogue
// (GEMM first) with that name; an unknown name is left to explain's error, which lists names.
std::string operation_of(const ExplainArgs& a) {
  if (!a.operation.empty()) return a.operation;
  for (const CatalogueEntry& e : catalogue())
    if (e.kernel->name == a.kernel) return std::string(e.operation);
  return "gemm";
}

// "AxBxC" (x or X between up to three non-negative sizes, each below 2^40 so that no launch
// arithmetic overflows).
std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find_first_of("xX", start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18) return {};
    sizes.push_back(std::stoll(part));
    if (sizes.back() >= (std::int64_t(1) << 40)) return {};
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return sizes;
}

void run_explain(const ExplainArgs& a) {
  check_outputs({{"--json", a.json}});
  ExplainRequest r;
  r.kernel = a.kernel;
  const Operation& operation = find_operation(operation_of(a));
  const std::vector<std::int64_t> sizes = parse_sizes(a.shape);
  const std::size_t wanted = std::size_t(operation.shape_sizes);
  if (sizes.size() != wanted)
    fail(ErrorCategory::usage, "--shape: '" + a.shape + "' is not " + std::string(operation.shape_form) + " for " +
                                   a.kernel + " (" + std::string(operation.name) + ")");
  r.m = sizes[0];
  r.n = wanted > 1 ? sizes[1] : 1;
  r.k = wanted > 2 ? sizes[2] : 1;
  if (!a.dtype.empty()) {
    const auto d = parse_dtype(a.dtype);
    if (!d) fail(ErrorCategory::usage, "--dtype: unknown dtype '" + a.dtype + "'");
    r.dtype = *d;
  }
  r.trans_a = a.transpose_a, r.trans_b = a.transpose_b;
  if (!a.thread.empty()) std::tie(r.block_idx, r.thread_idx) = parse_thread(a.thread);
  r.live = !a.recorded;
  const Explanation x = operation.explain(r);
  if (!a.json.empty()) write_json(a.json, to_json(x));
  else print(x);
}

}  // namespace

void add_explain(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  // The operations and their problem forms, from the catalogue.
  std::string names, forms;
  for (const Operation& o : operations()) {
    names += (names.empty() ? "" : ", ") + std::string(o.name);
    forms += (forms.empty() ? "" : "; ") + std::string(o.shape_form) + " for " + std::string(o.name);
  }
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Show how a CUDA kernel (" + names + ") launches for a problem: grid, block, shared "
      "memory, registers, occupancy, which elements each thread writes and the global thread-id formula");
  cmd->add_option("kernel", a->kernel, "Kernel name (gemmkit list shows them)")->required();
  cmd->add_option("--shape", a->shape, "The problem: " + forms + " (GEMM: C is M x N, K the inner size)")
      ->required();
  cmd->add_option("--operation", a->operation, names + " (default: the operation the kernel name belongs to)");
  cmd->add_option("--dtype", a->dtype, "Element type (default: the kernel's first)");
  cmd->add_option("--thread", a->thread,
                  "bx,by,tx,ty: answer for the thread at blockIdx (bx, by), threadIdx (tx, ty)");
  cmd->add_flag("--transpose-a", a->transpose_a, "op(A) = A^T");
  cmd->add_flag("--transpose-b", a->transpose_b, "op(B) = B^T");
  cmd->add_flag("--recorded", a->recorded,
                "Use the values recorded at build time for sm_90 even when a device is present");
  add_json_option(cmd, a->json, "Write the explanation as JSON instead of printing it");
  cmd->callback([a] { run_explain(*a); });
}

}  // namespace gemmkit::cli

// gemmkit::explain: a registry entry's launches for a problem (KernelEntry::launches), with
// each kernel's resources and occupancy, live from the device or from the build's records.
#include "gemmkit/explain.hpp"
#include "gemmkit/context.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "runtime/explain_device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

SmLimits sm90_limits() {
  SmLimits l;  // the defaults are sm_90's (H100/H200)
  l.source = "recorded for sm_90 (H200: 132 SMs)";
  return l;
}

namespace {

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string normalized_kernel_name(std::string_view name) {
  std::string s(name);
  for (const char* anon : {"(anonymous namespace)::", "{anonymous}::"})
    for (std::size_t at; (at = s.find(anon)) != std::string::npos;) s.erase(at, std::strlen(anon));
  // A demangled type holding the kernel: "KernelTag<&(void ns::kern<...>(args))>".
  if (const auto tag = s.find("<&("); tag != std::string::npos && s.size() >= tag + 5 && s.compare(s.size() - 2, 2, ")>") == 0)
    s = s.substr(tag + 3, s.size() - tag - 5);
  // gcc: "... [with auto Kernel = ns::kern<...>]"; clang: "... [Kernel = &ns::kern<...>]".
  if (const auto with = s.find("Kernel = "); with != std::string::npos) {
    s = s.substr(with + 9);
    std::size_t end = s.size();
    for (const char stop : {';', ']'})
      if (const auto at = s.rfind(stop); at != std::string::npos) end = std::min(end, at);
    s = s.substr(0, end);
  } else if (s.rfind("void ", 0) == 0) {  // a demangled kernel: "void ns::kern<...>(args)"
    s = s.substr(5);
  }
  // Cut the parameter list: the first '(' outside template brackets.
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == '(' && depth == 0 && i > 0) {
      s.resize(i);
      break;
    }
  }
  // Spaces go, but for one between two words ("signed char").
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&' && out.empty()) continue;
    if (s[i] == ' ') {
      std::size_t next = i;
      while (next < s.size() && s[next] == ' ') ++next;
      if (!out.empty() && is_ident(out.back()) && next < s.size() && is_ident(s[next])) out += ' ';
      i = next - 1;
      continue;
    }
    out += s[i];
  }
  // Drop namespace and class qualifiers.
  std::string bare;
  for (std::size_t i = 0; i < out.size();) {
    std::size_t j = i;
    while (j < out.size() && is_ident(out[j])) ++j;
    if (j > i && out.compare(j, 2, "::") == 0) {
      i = j + 2;
      continue;
    }
    bare.append(out, i, std::max(j, i + 1) - i);
    i = std::max(j, i + 1);
  }
  // Unsigned literals print as 8u in one spelling and 8 in the other.
  std::string result;
  for (std::size_t i = 0; i < bare.size(); ++i) {
    if (bare[i] == 'u' && i > 0 && std::isdigit(static_cast<unsigned char>(bare[i - 1])) &&
        (i + 1 == bare.size() || bare[i + 1] == ',' || bare[i + 1] == '>')) {
      std::size_t d = i;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(bare[d - 1]))) --d;
      if (d == 0 || !is_ident(bare[d - 1])) continue;
    }
    result += bare[i];
  }
  return result;
}

std::string default_recorded_path() {
  namespace fs = std::filesystem;
  if (const char* path = std::getenv("GEMMKIT_KERNEL_RESOURCES")) return path;
  std::error_code ec;
  const fs::path binary = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "kernel_resources.tsv";
  return (binary.parent_path() / "../share/gemmkit/kernel_resources.tsv").lexically_normal().string();
}

namespace {

// The build's records of sm_90 code, by normalized name. Read once per path.
struct Records {
  std::map<std::string, KernelResources, std::less<>> by_name;
};

const Records* recorded(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<Records>> cache;
  const std::lock_guard lock(mutex);
  auto [it, fresh] = cache.try_emplace(path);
  if (fresh) {
    std::ifstream in(path);
    if (in) {
      Records records;
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        // Tab-separated: a name may hold a space ("transpose<signed char>").
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
        if (f.size() != 6) continue;
        const std::string& name = f[0];
        const std::string& arch = f[1];
        KernelResources r;
        try {
          r.registers = std::stoi(f[2]);
          r.static_smem = std::stoull(f[3]);
          r.local_bytes = std::stoull(f[4]);
        } catch (const std::exception&) {
          continue;
        }
        if (arch != "sm_90a" && arch != "sm_90") continue;
        r.source = "recorded at build time for sm_90";
        records.by_name.emplace(name, std::move(r));
      }
      it->second = std::move(records);
    }
  }
  return it->second ? &*it->second : nullptr;
}

std::int64_t round_up(std::int64_t value, std::int64_t unit) { return (value + unit - 1) / unit * unit; }

std::string dims(const Dim3& d) {
  std::string out = "(";  // appended piece by piece: gcc 12 warns falsely on "(" + std::string
  out += std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
  return out;
}

int rank_of(const Dim3& d) { return d.z > 1 ? 3 : d.y > 1 ? 2 : 1; }

}  // namespace

Occupancy compute_occupancy(const KernelResources& r, const Dim3& block, std::size_t dynamic_smem,
                            const SmLimits& l) {
  Occupancy o;
  const std::int64_t threads = block.count();
  const std::int64_t warps = (threads + l.warp_size - 1) / l.warp_size;
  const int max_warps = l.max_threads_per_sm / l.warp_size;
  o.by_blocks = l.max_blocks_per_sm;
  o.by_threads = threads > l.max_threads_per_block ? 0 : int(max_warps / warps);
  // Registers go to warps in units, and a block's warps to the SM's sub-partitions.
  const std::int64_t per_warp = round_up(std::int64_t(r.registers) * l.warp_size, l.register_unit);
  o.registers_per_block = int(per_warp * warps);
  const std::int64_t assumed = per_warp * round_up(warps, l.sub_partitions);
  if (r.registers > l.max_registers_per_thread || assumed > l.registers_per_block ||
      o.registers_per_block > l.registers_per_block)
    o.by_registers = 0;
  else if (per_warp == 0)
    o.by_registers = INT_MAX;
  else
    o.by_registers = int((l.registers_per_sm / l.sub_partitions / per_warp) * l.sub_partitions / warps);
  // Shared memory: static + dynamic + the driver's reserve, in units; the launchers opt in
  // above the default per-block limit.
  const std::size_t used = r.static_smem + dynamic_smem + l.smem_reserved_per_block;
  o.smem_per_block = std::size_t(round_up(std::int64_t(used), l.smem_unit));
  const std::size_t block_limit =
      (dynamic_smem + r.static_smem > l.smem_per_block ? l.smem_per_block_optin : l.smem_per_block) +
      l.smem_reserved_per_block;
  o.by_smem = o.smem_per_block > block_limit ? 0 : int(l.smem_per_sm / o.smem_per_block);
  const std::pair<int, const char*> limits[] = {{o.by_threads, "threads"},
                                                {o.by_registers, "registers"},
                                                {o.by_smem, "shared memory"},
                                                {o.by_blocks, "blocks per SM"}};
  o.blocks_per_sm = INT_MAX;
  for (const auto& [blocks, what] : limits)
    if (blocks < o.blocks_per_sm) o.blocks_per_sm = blocks, o.limited_by = what;
  o.warps_per_sm = int(o.blocks_per_sm * warps);
  o.fraction = double(o.warps_per_sm) / max_warps;
  return o;
}

std::string thread_id_formula(const Dim3& grid, const Dim3& block) {
  const int gr = rank_of(grid), br = rank_of(block);
  const std::string block_id = gr == 1 ? "blockIdx.x"
                               : gr == 2 ? "blockIdx.y * gridDim.x + blockIdx.x"
                                         : "blockIdx.z * (gridDim.x * gridDim.y) + blockIdx.y * gridDim.x + blockIdx.x";
  const std::string in_block = br == 1 ? "threadIdx.x"
                               : br == 2 ? "threadIdx.y * blockDim.x + threadIdx.x"
                                         : "threadIdx.z * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x";
  const std::string size = br == 1 ? "blockDim.x" : br == 2 ? "(blockDim.x * blockDim.y)"
                                                            : "(blockDim.x * blockDim.y * blockDim.z)";
  std::string text = std::to_string(gr) + "-D grid " + dims(grid) + " of " + std::to_string(br) +
                     "-D blocks " + dims(block) + ": ";
  if (gr == 1 && br == 1) return text + "threadId = blockIdx.x * blockDim.x + threadIdx.x";
  return text + "blockId = " + block_id + "; threadId = blockId * " + size + " + " + in_block;
}

namespace {

ThreadAnswer answer_for(const LaunchPlan& plan, const Dim3& b, const Dim3& t) {
  ThreadAnswer a;
  a.block_idx = b, a.thread_idx = t;
  const Dim3& g = plan.grid;
  const Dim3& d = plan.block;
  a.block_id = b.z * g.x * g.y + b.y * g.x + b.x;
  a.thread_in_block = t.z * d.x * d.y + t.y * d.x + t.x;
  a.global_id = a.block_id * d.count() + a.thread_in_block;
  a.warp = a.thread_in_block / 32, a.lane = a.thread_in_block % 32;
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  if (rank_of(g) > 1)
    a.steps.push_back("blockId = " + (rank_of(g) == 3 ? n(b.z) + " * (" + n(g.x) + " * " + n(g.y) + ") + " : "") +
                      n(b.y) + " * " + n(g.x) + " + " + n(b.x) + " = " + n(a.block_id));
  if (rank_of(d) > 1)
    a.steps.push_back("thread in block = " + (rank_of(d) == 3 ? n(t.z) + " * (" + n(d.x) + " * " + n(d.y) + ") + " : "") +
                      n(t.y) + " * " + n(d.x) + " + " + n(t.x) + " = " + n(a.thread_in_block));
  a.steps.push_back("threadId = " + n(a.block_id) + " * " + n(d.count()) + " + " + n(a.thread_in_block) +
                    " = " + n(a.global_id));
  a.steps.push_back("warp " + n(a.warp) + " of its block, lane " + n(a.lane) + " (thread in block / 32, % 32)");
  if (plan.elements) a.elements = plan.elements(b, t);
  return a;
}

bool inside(const Dim3& i, const Dim3& limit) {
  return i.x >= 0 && i.y >= 0 && i.z >= 0 && i.x < limit.x && i.y < limit.y && i.z < limit.z;
}

// Stands in for device pointers: aligned, never dereferenced.
void* fake_pointer(std::uintptr_t at) { return reinterpret_cast<void*>(at); }

}  // namespace

namespace explain_detail {

void check_entry(Explanation& out, const ExplainRequest& request, const std::vector<DType>& dtypes, bool described,
                 const char* cpu_threading) {
  out.dtype = request.dtype.value_or(dtypes.front());
  out.m = request.m, out.n = request.n, out.k = request.k;
  if (std::find(dtypes.begin(), dtypes.end(), out.dtype) == dtypes.end()) {
    std::string takes;
    for (const DType t : dtypes) takes += (takes.empty() ? "" : ", ") + std::string(dtype_name(t));
    fail(ErrorCategory::usage, out.kernel + " does not take " + std::string(dtype_name(out.dtype)) +
                                   " (it takes " + takes + ")");
  }
  if (out.backend == Backend::cpu)
    fail(ErrorCategory::usage, out.kernel + " is a CPU kernel: it runs on the host's cores (" + cpu_threading +
                                   "), not in a CUDA grid; explain describes CUDA launches");
  if (out.role == KernelRole::reference)
    fail(ErrorCategory::usage, out.kernel + " calls a vendor library, which picks its kernels and launches "
                                            "inside itself; explain describes gemmkit's own kernels");
  if (!described)
    fail(ErrorCategory::usage, out.kernel + " has no launch description (its launches depend on the data, not "
                                            "only on the shape)");
}

}  // namespace explain_detail

Explanation explain(const ExplainRequest& request) {
  const KernelEntry& entry = gemm_registry().get(request.kernel);
  Explanation out;
  out.operation = "gemm";
  out.kernel = entry.name;
  out.backend = entry.backend;
  out.role = entry.role;
  out.rung = entry.rung;
  out.summary = entry.summary;
  if (request.m < 1 || request.n < 1 || request.k < 1)
    fail(ErrorCategory::usage, "explain needs M, N and K of at least 1 (got " + std::to_string(request.m) +
                                   "x" + std::to_string(request.n) + "x" + std::to_string(request.k) + ")");
  explain_detail::check_entry(out, request, entry.dtypes, bool(entry.launches),
                              "OpenMP threads over blocks of rows of C where it is parallel");
  const auto size = [](std::int64_t v) { return std::to_string(v); };
  out.problem = "C (" + size(out.m) + " x " + size(out.n) + ") = A (" + size(out.m) + " x " + size(out.k) +
                ") * B (" + size(out.k) + " x " + size(out.n) + "), " + std::string(dtype_name(out.dtype));

  GemmProblem p;
  p.dtype = out.dtype;
  if (p.dtype == DType::i8) p.out_dtype = DType::i32;
  p.trans_a = request.trans_a, p.trans_b = request.trans_b;
  p.m = request.m, p.n = request.n, p.k = request.k;
  p.lda = p.a_cols(), p.ldb = p.b_cols(), p.ldc = p.n;
  p.a = fake_pointer(std::uintptr_t(1) << 32);
  p.b = fake_pointer(std::uintptr_t(2) << 32);
  p.c = fake_pointer(std::uintptr_t(3) << 32);
  if (auto why = entry.rejects(p)) fail(ErrorCategory::usage, entry.name + " does not run " + p.shape_string() + ": " + *why);
  explain_detail::explain_plans(out, request, [&](const LaunchQueries& q) { return entry.launches(p, q); });
  return out;
}

namespace explain_detail {

void explain_plans(Explanation& out, const ExplainRequest& request,
                   const std::function<std::vector<LaunchPlan>(const LaunchQueries&)>& make_plans) {
  const std::optional<SmLimits> live = request.live ? explain_detail::live_limits() : std::nullopt;
  out.live = live.has_value();
  out.limits = live ? *live : sm90_limits();
  const std::string path = request.recorded_path.empty() ? default_recorded_path() : request.recorded_path;
  const Records* records = recorded(path);

  // Kernels compiled on first use are loaded into a context of the device when live.
  if (out.live) out.context = std::make_shared<Context>(Backend::cuda);

  // A kernel's resources: from the device, else from its compile (kernels compiled on first
  // use), else from the records (nullopt: none of them).
  const auto resources = [&](const LaunchPlan& plan) -> std::optional<KernelResources> {
    if (out.live)
      if (auto r = explain_detail::live_resources(plan.function)) return r;
    if (plan.compiled.known)
      return KernelResources{plan.compiled.registers, plan.compiled.static_smem, plan.compiled.local_bytes,
                             "reported by ptxas when compiled for " + plan.compiled.arch};
    if (!records) return std::nullopt;
    if (auto it = records->by_name.find(plan.kernel); it != records->by_name.end()) return it->second;
    return std::nullopt;
  };
  const auto computed_blocks = [&](const LaunchPlan& plan) {
    const auto r = resources(plan);
    if (!r) fail(ErrorCategory::usage, "no recorded attributes of " + plan.kernel + " in " + quoted_path(path) +
                                           ": its launch plan depends on them");
    return compute_occupancy(*r, plan.block, plan.dynamic_smem, out.limits).blocks_per_sm;
  };
  LaunchQueries queries;
  queries.sm_count = out.limits.sm_count;
  queries.compute_capability = out.limits.compute_capability;
  queries.context = out.context.get();
  queries.blocks_per_sm = [&](const LaunchPlan& plan) {
    if (out.live)
      if (auto b = explain_detail::live_blocks_per_sm(plan)) return *b;
    return computed_blocks(plan);
  };
  // Without a device: every SM holds blocks_per_sm blocks and clusters tile the SMs (the
  // hardware places a cluster within one GPC, which can leave a few SMs over).
  queries.active_clusters = [&](const LaunchPlan& plan) {
    if (out.live)
      if (auto c = explain_detail::live_active_clusters(plan)) return *c;
    const std::int64_t size = std::max<std::int64_t>(plan.cluster.count(), 1);
    return int(out.limits.sm_count / size * computed_blocks(plan));
  };

  bool thread_placed = false;
  for (LaunchPlan& plan : make_plans(queries)) {
    LaunchExplanation e;
    e.thread_id_formula = thread_id_formula(plan.grid, plan.block);
    if (const auto r = resources(plan)) {
      e.resources = *r;
      e.resources_known = true;
      e.static_smem = r->static_smem;
      e.occupancy = compute_occupancy(*r, plan.block, plan.dynamic_smem, out.limits);
      if (out.live) {
        e.occupancy.live_blocks_per_sm = explain_detail::live_blocks_per_sm(plan);
        if (e.occupancy.live_blocks_per_sm) {
          e.occupancy.blocks_per_sm = *e.occupancy.live_blocks_per_sm;
          e.occupancy.warps_per_sm = int(e.occupancy.blocks_per_sm * ((plan.block.count() + 31) / 32));
          e.occupancy.fraction = double(e.occupancy.warps_per_sm) / (out.limits.max_threads_per_sm / out.limits.warp_size);
        }
      }
      if (plan.cluster.count() > 1) e.occupancy.active_clusters = queries.active_clusters(plan);
    } else {
      e.note = "no attributes of " + plan.kernel + (records ? " among the records in " : ": no records at ") +
               quoted_path(path) + (out.live ? " and the device did not answer" : "");
    }
    if (request.block_idx && request.thread_idx) {
      if (inside(*request.block_idx, plan.grid) && inside(*request.thread_idx, plan.block)) {
        e.thread = answer_for(plan, *request.block_idx, *request.thread_idx);
        thread_placed = true;
      }
    }
    e.plan = std::move(plan);
    out.launches.push_back(std::move(e));
  }
  if (request.block_idx && request.thread_idx && !thread_placed) {
    std::string grids;
    for (const auto& e : out.launches)
      grids += (grids.empty() ? "" : "; ") + e.plan.kernel + ": grid " + dims(e.plan.grid) + ", block " + dims(e.plan.block);
    fail(ErrorCategory::usage, "thread (block " + dims(*request.block_idx) + ", thread " + dims(*request.thread_idx) +
                                   ") lies outside every launch (" + grids + ")");
  }
}

}  // namespace explain_detail

}  // namespace gemmkit

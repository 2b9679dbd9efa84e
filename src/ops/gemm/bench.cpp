// The benchmark engine's host half: the shape loop, operands, probes and skipping, CPU
// timing, verification and ratios. The device timing is src/ops/gemm/cuda/bench_device.cu.
#include "gemmkit/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "arith/splitmix.hpp"
#include "ops/gemm/bench_device.hpp"
#include "gemmkit/random.hpp"
#include "gemmkit/registry.hpp"

namespace gemmkit {

namespace detail {
namespace {

// One synchronous run on the CPU context.
double timed_cpu_run(Context& ctx, const KernelEntry& entry, const GemmProblem& p) {
  return cpu_seconds([&] { launch_gemm(ctx, entry, p, nullptr, {}); });
}

}  // namespace

PairedTimes time_gemm(Context& ctx, Stream stream, const KernelEntry& entry, const KernelEntry* reference,
                      const GemmProblem& problem, const TimingOptions& options) {
  validate(problem);
  // Kernels see row-major problems (a column-major one as its transpose, on the same memory).
  const GemmProblem p = as_row_major(problem);
  for (const KernelEntry* e : {&entry, reference})
    if (e) {
      if (e->backend != ctx.backend())
        fail(ErrorCategory::usage, "kernel '" + e->name + "' is a " + std::string(backend_name(e->backend)) +
                                       " kernel; the context runs the " +
                                       std::string(backend_name(ctx.backend())) + " backend");
      if (auto why = e->rejects(p))
        fail(ErrorCategory::usage, "kernel '" + e->name + "' cannot run " + p.shape_string() + ": " + *why);
      if (e->min_compute_capability > ctx.compute_capability())
        fail(ErrorCategory::usage, "kernel '" + e->name + "' needs compute capability " +
                                       std::to_string(e->min_compute_capability));
    }
  if (ctx.backend() == Backend::cuda) return time_gemm_on_device(ctx, stream, entry, reference, p, options);

  if (!reference) return {time_runs(options, [&] { return timed_cpu_run(ctx, entry, p); }), {}};
  // The reference writes a private copy of C, so host C ends with the entry's result.
  const std::size_t c_bytes = std::size_t(p.c_span()) * dtype_size(p.c_dtype());
  std::vector<unsigned char> private_c(static_cast<const unsigned char*>(p.c),
                                       static_cast<const unsigned char*>(p.c) + c_bytes);
  GemmProblem reference_problem = p;
  reference_problem.c = private_c.data();
  return time_runs_paired(options, [&] { return timed_cpu_run(ctx, entry, p); },
                          [&] { return timed_cpu_run(ctx, *reference, reference_problem); });
}

}  // namespace detail

double copy_ceiling_seconds(Context& ctx, std::size_t bytes, int warmup, int reps) {
  if (ctx.backend() == Backend::cuda) {
    const detail::BenchStream stream(ctx);
    return detail::device_copy_seconds(ctx, stream.get(), bytes, warmup, reps);
  }
  std::vector<unsigned char> from(bytes, 1), to(bytes);
  return median_of(time_runs(fixed_runs(warmup, reps), [&] { return cpu_seconds([&] { std::memcpy(to.data(), from.data(), bytes); }); }));
}

namespace {

// "412 s", "41.3 s", "2.04 s", "0.31 s": three digits, so 2.04 is not shown as the budget 2
std::string seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, s >= 100 ? "%.0f s" : "%.3g s", s);
  return buf;
}

// The device copy of half the bytes a product moves (so the copy, reading and writing
// them, moves as many): A and B read, C written, and read as well when beta != 0. 0 when
// it cannot be timed (no memory for the two buffers): the rows then carry no copy figure.
double copy_of_traffic_seconds(Context& ctx, Stream stream, const GemmProblem& p) {
  const double elem = double(dtype_size(p.dtype)), c_elem = double(dtype_size(p.c_dtype()));
  const double traffic = double(p.batch) * (elem * double(p.m * p.k + p.k * p.n) +
                                            c_elem * double(p.m * p.n) * (p.beta != 0 ? 2 : 1));
  try {
    return detail::device_copy_seconds(ctx, stream, std::size_t(traffic / 2 / 16 + 1) * 16, 2, 10);
  } catch (const Error&) {
    return 0;
  }
}

// `--kernels auto`: a row per shape for the kernel the dispatcher picks there.
constexpr std::string_view kAutoKernel = "auto";

// The kernels to run: those named (or all of the backend) that support the dtype, with the
// backend's reference library always included so every ratio is measured in the same run.
std::vector<const KernelEntry*> select_kernels(const std::vector<std::string>& names,
                                               Backend backend, DType dtype) {
  const Registry<GemmProblem>& registry = gemm_registry();
  std::vector<const KernelEntry*> chosen;
  if (names.empty()) {
    for (const KernelEntry* e : registry.of_backend(backend))
      if (e->supports(dtype)) chosen.push_back(e);
  } else {
    for (const std::string& name : names) {
      if (name == kAutoKernel) continue;  // resolved per shape by run_gemm_bench
      const KernelEntry& e = registry.get(name);
      if (e.backend != backend)
        fail(ErrorCategory::usage, "kernel '" + name + "' is a " +
                                       std::string(backend_name(e.backend)) +
                                       " kernel; this benchmark runs the " +
                                       std::string(backend_name(backend)) + " backend");
      if (!e.supports(dtype))
        fail(ErrorCategory::usage, "kernel '" + name + "' does not support " +
                                       std::string(dtype_name(dtype)));
      if (std::find(chosen.begin(), chosen.end(), &e) == chosen.end()) chosen.push_back(&e);
    }
    // The references go first, in registry order (the primary one first).
    std::vector<const KernelEntry*> references;
    for (const KernelEntry* e : registry.of_backend(backend))
      if (e->role == KernelRole::reference && e->supports(dtype) &&
          std::find(chosen.begin(), chosen.end(), e) == chosen.end())
        references.push_back(e);
    chosen.insert(chosen.begin(), references.begin(), references.end());
  }
  if (chosen.empty())
    fail(ErrorCategory::usage, "no " + std::string(backend_name(backend)) + " kernel supports " +
                                   std::string(dtype_name(dtype)));
  return chosen;
}

// The reference every ratio is taken against: the first reference entry (in registry
// order) that supports the dtype and computes in it; cuda_cublas (pedantic FP32), never
// cuda_cublas_tf32. nullptr if there is none (integer dtypes).
const KernelEntry* primary_reference(const std::vector<const KernelEntry*>& kernels, DType dtype) {
  const KernelEntry* fallback = nullptr;
  for (const KernelEntry* e : kernels) {
    if (e->role != KernelRole::reference) continue;
    if (tolerance_dtype(dtype, e->accuracy) == dtype) return e;
    if (!fallback) fallback = e;
  }
  return fallback;
}

// Random operands of one shape (a batch of them, one after another) and the problem over
// them (p points into a, b and c).
struct Operands {
  AnyMatrix a, b, c;
  GemmProblem p;
  // C as generated: put back before each kernel, so that a kernel which leaves part of C
  // unwritten is not credited with the previous kernel's result there.
  std::vector<unsigned char> c0;
  void restore_c() { std::memcpy(p.c, c0.data(), c0.size()); }
  // int8 operands, which no host matrix holds (dtype i8: a and b are then unused).
  std::vector<std::int8_t> a8, b8;
};

void* data_of(AnyMatrix& m) {
  return std::visit([](auto& x) -> void* { return x.data(); }, m);
}

std::unique_ptr<Operands> make_operands(const BenchShape& s, const BenchOptions& o, std::int64_t batch,
                                        const Distribution& dist) {
  auto ops = std::make_unique<Operands>();
  GemmProblem& p = ops->p;
  p.dtype = o.dtype;  // tf32 operands are f32 matrices: the dtype says the tensor cores read them
  p.trans_a = o.trans_a;
  p.trans_b = o.trans_b;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.layout = o.layout;
  p.batch = batch;
  // Each operand stored densely (ld = its stored width); a column-major one is, in row-major
  // terms, its transpose. Batch items follow one another: stride = one matrix.
  const bool col = o.layout == Layout::col_major;
  const auto allocate = [&](AnyMatrix& m, std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                            std::int64_t& ld, std::int64_t& stride) {
    const std::int64_t r = col ? cols : rows, c = col ? rows : cols;
    // int8 A and B are bytes (below); C is int32 then.
    if (o.dtype != DType::i8 || &m == &ops->c)
      m = random_matrix(r * batch, c, o.dtype == DType::i8 ? DType::i32 : o.dtype, dist, seed);
    ld = c;
    stride = batch > 1 ? r * c : 0;
  };
  allocate(ops->a, p.a_rows(), p.a_cols(), o.seed, p.lda, p.stride_a);
  allocate(ops->b, p.b_rows(), p.b_cols(), o.seed + 1, p.ldb, p.stride_b);
  allocate(ops->c, p.m, p.n, o.seed + 2, p.ldc, p.stride_c);  // beta = 0: overwritten
  p.a = data_of(ops->a);
  p.b = data_of(ops->b);
  p.c = data_of(ops->c);
  if (o.dtype == DType::i8) {
    // int8 inputs: every value of [-128, 127], from the same seeds.
    p.out_dtype = DType::i32;
    const auto bytes = [](std::vector<std::int8_t>& v, std::int64_t count, std::uint64_t seed) {
      v.resize(std::size_t(count));
      for (std::int64_t i = 0; i < count; ++i) v[std::size_t(i)] = std::int8_t(splitmix64(seed * 0x100000001ull + std::uint64_t(i)));
    };
    bytes(ops->a8, p.a_span(), o.seed);
    bytes(ops->b8, p.b_span(), o.seed + 1);
    p.a = ops->a8.data();
    p.b = ops->b8.data();
  }
  const auto* c = static_cast<const unsigned char*>(p.c);
  ops->c0.assign(c, c + std::size_t(p.c_span()) * dtype_size(p.c_dtype()));
  return ops;
}

// Below this many flops a shape is its own probe: even the naive kernels take well under a
// second.
constexpr double kFirstProbeFlops = 2e8;

// The same proportions as s with about `flops` flops; every side a multiple of 64 where s's is
// at least 64, so kernels with divisibility rules accept it where they accept s.
BenchShape scaled(const BenchShape& s, double flops) {
  const double f = std::cbrt(flops / s.flops());
  auto side = [&](std::int64_t x) {
    if (x < 64) return x;
    return std::max<std::int64_t>(64, std::int64_t(double(x) * f) / 64 * 64);
  };
  return {side(s.m), side(s.n), side(s.k)};
}

// A kernel's rate (FLOP/s) on smaller shapes of s's proportions (one product each), for a
// first shape too large to run blind: a slow rung's single run there can take minutes
// (cpu_naive at 4096^3). Each probe is 8x the last while the estimate says s would exceed
// `limit` and the next probe would stay under a quarter of it. 0 when no probe could run.
double probe_rate(Context& ctx, Stream stream, const KernelEntry& e, const BenchShape& s, double batch_flops,
                  const BenchOptions& o, const Distribution& dist, double limit) {
  double rate = 0;
  for (double budget = kFirstProbeFlops; budget < s.flops(); budget *= 8) {
    const BenchShape probe = scaled(s, budget);
    if (probe.flops() >= s.flops()) break;
    const auto ops = make_operands(probe, o, 1, dist);
    if (e.rejects(as_row_major(ops->p))) break;
    // One untimed run first: lazy loading and thread start-up would inflate the estimate.
    const double seconds = detail::time_gemm(ctx, stream, e, nullptr, ops->p, {1, 1, limit}).entry.front();
    if (seconds <= 0) break;
    rate = std::max(rate, probe.flops() / seconds);
    if (batch_flops / rate <= limit || seconds * 8 > limit / 4) break;
  }
  return rate;
}

// The exact or double-double reference of each batch item, for problems small enough to
// check in full; computed once per shape, it serves every kernel.
struct References {
  bool full = false;
  std::vector<std::vector<double>> items;
};

// Checks every batch item of p's result; the row gets the worst item's figures (the first
// failing one's when any fails).
VerifyResult check_result(const GemmProblem& p, const References& refs, const KernelEntry& e,
                          DType tol_dtype, std::uint64_t seed) {
  const GemmProblem row_major = as_row_major(p);
  VerifyResult worst;
  for (std::int64_t i = 0; i < p.batch; ++i) {
    const GemmProblem item = batch_item(row_major, i);
    VerifyResult r;
    if (refs.full) {
      r.method = VerifyMode::full;
      r.tolerance = tolerance(tol_dtype, item.k);
      r.error = relative_frobenius_error(item.c_dtype(), item.c, item.m, item.n, item.ldc,
                                         refs.items[std::size_t(i)]);
      r.passed = r.error <= r.tolerance;
      if (!r.passed && !std::isnan(r.error))  // the per-entry check says where
        r = verify(item, nullptr, VerifyMode::full, seed, e.accuracy);
    } else {
      r = verify(item, nullptr, VerifyMode::automatic, seed, e.accuracy);
    }
    if (!r.passed) {
      if (p.batch > 1) r.detail = "batch item " + std::to_string(i) + ": " + r.detail;
      return r;
    }
    if (i == 0 || r.error > worst.error) worst = r;
  }
  return worst;
}

}  // namespace

BenchReport run_gemm_bench(Context& ctx, const BenchOptions& o,
                           const std::function<void(const BenchProgress&)>& progress) {
  if (o.shapes.empty()) fail(ErrorCategory::usage, "the benchmark has no shapes");
  for (const BenchShape& s : o.shapes)
    if (s.m < 1 || s.n < 1 || s.k < 1)
      fail(ErrorCategory::usage, "benchmark shape " + s.text() + ": every side must be positive");
  if (o.batch < 1) fail(ErrorCategory::usage, "benchmark batch " + std::to_string(o.batch) + " < 1");
  const Backend backend = ctx.backend();
  BenchReport report;
  report.operation = "gemm";
  report.backend = backend;
  report.dtype = o.dtype;
  const auto kernels = select_kernels(o.kernels, backend, o.dtype);
  const KernelEntry* reference_entry = primary_reference(kernels, o.dtype);
  report.percent_of = reference_entry ? reference_entry->name : "";
  // On the GPU every kernel is timed in runs alternating with the reference's, so both see
  // the same clocks: a GPU under sustained load slows down, and sequential timing would
  // favour whichever ran first (seen on the H200: cuBLAS itself slowed over one sweep). Not
  // on the CPU: there the two thread pools (OpenMP, OpenBLAS) would wake each other's cores
  // cold and distort both.
  report.paired = backend == Backend::cuda;
  report.l2_flushed = backend == Backend::cuda;
  const int device_cc = ctx.compute_capability();
  const TimingOptions timing{o.warmup, o.reps, o.max_seconds};
  const Distribution dist = Distribution::parse(is_integer(o.dtype) ? "ints:-9:9" : "uniform");
  const detail::BenchStream stream(ctx);

  std::vector<BenchShape> shapes = o.shapes;
  // Smallest first: a kernel's rate at a smaller shape predicts its time at a larger one.
  std::stable_sort(shapes.begin(), shapes.end(),
                   [](const BenchShape& x, const BenchShape& y) { return x.flops() < y.flops(); });

  // Each kernel's best rate so far (FLOP/s at its fastest run), to predict larger shapes.
  std::map<const KernelEntry*, double> best_rate;
  const bool with_auto = std::find(o.kernels.begin(), o.kernels.end(), kAutoKernel) != o.kernels.end();
  const std::size_t total = shapes.size() * (kernels.size() + (with_auto ? 1 : 0));
  std::size_t done = 0;
  // A failure at one shape (out of memory, a device error) or of one kernel is recorded in
  // its row; the other results still count.
  auto failure = [&](const std::exception& ex) {
    const auto* error = dynamic_cast<const Error*>(&ex);
    const Error e = error ? *error
                          : dynamic_cast<const std::bad_alloc*>(&ex)
                                ? Error(ErrorCategory::out_of_memory, "out of host memory")
                                : Error(ErrorCategory::internal, ex.what());
    if (!report.first_failure) report.first_failure = e;
    return "failed: " + std::string(e.what());
  };
  // Runs predicted to take longer than this are skipped, from the first shape on.
  const double run_limit = o.max_run_seconds;
  for (const BenchShape& s : shapes) {
    std::unique_ptr<Operands> ops;
    // One double reference per batch item serves every kernel; past the full-check limit
    // each result gets a Freivalds check instead (integers: always exact).
    References refs;
    refs.full = !is_integer(o.dtype) &&
                double(o.batch) * double(s.m) * double(s.n) * double(s.k) <= kFullVerifyLimit;
    std::string shape_failure;
    try {
      ops = make_operands(s, o, o.batch, dist);
      if (refs.full) {
        const GemmProblem row_major = as_row_major(ops->p);
        for (std::int64_t i = 0; i < o.batch; ++i)
          refs.items.push_back(reference_gemm(batch_item(row_major, i), nullptr));
      }
    } catch (const std::exception& ex) {
      shape_failure = failure(ex);
    }

    const std::size_t first_row = report.rows.size();
    // One row: entry e at this shape, listed as `label` (its name, or "auto").
    const auto run_row = [&](const KernelEntry* e, const std::string& label) {
      ++done;
      if (progress) progress(BenchProgress{done, total, label, s});
      BenchRow base;  // what a row says whatever happens to the run
      base.operation = report.operation;
      base.kernel = label;
      base.size = o.batch > 1 ? std::to_string(o.batch) + " x " + s.text() : s.text();
      base.dtype = o.dtype;
      GemmBenchFacts& facts = base.gemm.emplace(
          GemmBenchFacts{s, o.batch, o.trans_a, o.trans_b, o.layout, std::nullopt, o.dtype});
      const auto take_entry = [&](const KernelEntry& k) {
        base.rung = k.rung;
        facts.accuracy = k.accuracy;
        facts.tolerance_dtype = tolerance_dtype(o.dtype, k.accuracy);
      };
      if (e) {
        take_entry(*e);
        base.reference = e->role == KernelRole::reference && label == e->name;
      }
      BenchRow r = base;
      if (!shape_failure.empty()) {
        r.skipped = r.failed = true;
        r.check.passed = false;
        r.note = shape_failure;
        report.rows.push_back(r);
        return;
      }
      const GemmProblem& p = ops->p;
      try {
        if (!e) {  // auto at this shape: what the dispatcher picks, or why nothing
          e = &choose_gemm_kernel(ctx, p, {});
          take_entry(*e);
          base.note = "auto ran " + e->name;
          r = base;
        }
        const auto rejects = [&](const KernelEntry& k) { return k.rejects(as_row_major(p)); };
        // A large first shape: estimate the kernel's rate on smaller ones before running it.
        if (!best_rate.count(e) && s.flops() > kFirstProbeFlops && !rejects(*e) &&
            device_cc >= e->min_compute_capability)
          if (const double rate = probe_rate(ctx, stream.get(), *e, s, p.flops(), o, dist, run_limit); rate > 0)
            best_rate[e] = rate;
        // Kernels that cannot or should not run this shape get a row that says why.
        std::string skip;
        if (backend == Backend::cuda && device_cc < e->min_compute_capability) {
          skip = "needs compute capability " + std::to_string(e->min_compute_capability) +
                 ", the device has " + std::to_string(device_cc);
        } else if (auto why = rejects(*e)) {
          skip = *why;
        } else if (auto rate = best_rate.find(e); rate != best_rate.end()) {
          const double predicted = p.flops() / rate->second;
          if (predicted > run_limit)
            skip = "predicted " + seconds_text(predicted) + " per run (--max-run-seconds " +
                   seconds_text(run_limit) + ")";
        }
        if (!skip.empty()) {
          r.skipped = true;
          r.note = "skipped: " + skip;
          report.rows.push_back(r);
          return;
        }
        const bool paired = report.paired && reference_entry && e != reference_entry &&
                            !rejects(*reference_entry) &&
                            device_cc >= reference_entry->min_compute_capability;
        ops->restore_c();
        record_runs(r, detail::time_gemm(ctx, stream.get(), *e, paired ? reference_entry : nullptr, p, timing),
                    p.flops(), backend == Backend::cpu);
        if (r.timing.min_s > 0) best_rate[e] = std::max(best_rate[e], p.flops() / r.timing.min_s);
        r.check = check_result(p, refs, *e, r.gemm->tolerance_dtype, o.seed);
      } catch (const std::exception& ex) {
        r = base;
        r.skipped = r.failed = true;
        r.check.passed = false;
        r.note = failure(ex);
      }
      report.rows.push_back(r);
    };
    for (const KernelEntry* e : kernels) run_row(e, e->name);
    if (with_auto) run_row(nullptr, std::string(kAutoKernel));
    const auto shape_rows = report.rows.begin() + std::ptrdiff_t(first_row);
    const double copy_s = backend == Backend::cuda && shape_failure.empty()
                              ? copy_of_traffic_seconds(ctx, stream.get(), ops->p)
                              : 0;
    const auto ref = std::find_if(shape_rows, report.rows.end(), [&](const BenchRow& r) {
      return reference_entry && r.kernel == reference_entry->name && !r.skipped;
    });
    set_ratios(shape_rows, report.rows.end(), ref == report.rows.end() ? nullptr : &*ref, copy_s);
  }
  return report;
}

namespace {

// printf into a string
template <class... Args>
std::string format(const char* pattern, Args... args) {
  const int size = std::snprintf(nullptr, 0, pattern, args...);
  std::string text(std::size_t(std::max(size, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), pattern, args...);
  text.pop_back();
  return text;
}

}  // namespace

std::string bench_table(const BenchReport& report, const RunMeta& meta) {
  const bool gpu = report.backend == Backend::cuda;
  const std::string ref_name = gpu ? "cuBLAS" : "OpenBLAS";
  const std::string where = gpu && meta.gpu ? meta.gpu->name
                                            : meta.cpu + ", " + std::to_string(meta.cpu_threads) +
                                                  " threads, OpenBLAS " + meta.openblas_threading;
  std::string out = format("gemmkit bench: %s backend, %s, %s\n", std::string(backend_name(report.backend)).c_str(),
                           std::string(dtype_name(report.dtype)).c_str(), where.c_str());
  out += format("%-24s %-16s %10s %10s %10s %8s %9s %5s %7s%s\n", "kernel", "MxNxK", "median ms", "min ms",
                "GFLOP/s", ("% " + ref_name).c_str(), "error", "reps", "spread", gpu ? "  % copy" : "");
  for (const BenchRow& r : report.rows) {
    if (r.skipped) {
      out += format("%-24s %-16s %s\n", r.kernel.c_str(), r.size.c_str(), r.note.c_str());
      continue;
    }
    std::string note;
    const DType tolerance = r.gemm ? r.gemm->tolerance_dtype : r.dtype;
    if (tolerance != report.dtype) note = "  (" + std::string(dtype_name(tolerance)) + " tolerance)";
    if (r.kernel == kAutoKernel) note += "  (" + r.note + ")";
    if (!r.check.passed) note += "  FAILED";
    const std::string percent =
        r.percent_of_reference < 0 ? "-" : format("%.1f%%", r.percent_of_reference);
    const std::string copy =
        !gpu ? "" : r.percent_of_copy < 0 ? format("  %6s", "-") : format("  %5.1f%%", r.percent_of_copy);
    out += format("%-24s %-16s %10.3f %10.3f %10.2f %8s %9s %5d %7s%s%s\n", r.kernel.c_str(),
                  r.size.c_str(), r.timing.median_s * 1e3, r.timing.min_s * 1e3, r.rate,
                  percent.c_str(), format("%.1e", r.check.error).c_str(), r.timing.reps,
                  spread_text(r.timing).c_str(), copy.c_str(), note.c_str());
  }
  if (!report.percent_of.empty())
    out += format("%% %s: GFLOP/s as a percentage of %s at the same shape\n", ref_name.c_str(),
                  report.percent_of.c_str());
  if (gpu)
    out += "% copy: a device copy moving the bytes the product must (A and B read, C written, and read "
           "when beta != 0) as a percentage of the kernel's time: 100% is the memory-bandwidth ceiling\n";
  out += format("error: relative Frobenius error against the exact product (a double-double "
                "reference; past %.0e multiply-adds, --verify auto's check; integers exact)\n",
                kFullVerifyLimit);
  out += noisy_legend() + "\n";
  return out;
}

}  // namespace gemmkit

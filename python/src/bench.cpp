// The GEMM benchmark engine (gemmkit/bench.hpp) and the run's meta (run_meta.hpp). Rows come
// back as dicts with the columns of `gemmkit bench --json` (times in ms; None where a row was
// skipped), so that a DataFrame of them reads like the CLI's results.
#include <nanobind/stl/tuple.h>

#include "bindings.hpp"
#include "gemmkit/bench.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/run_meta.hpp"

namespace gemmkit::python {
namespace {

nb::object number_or_none(bool skipped, double x) {
  return skipped ? nb::none() : nb::cast(x);
}

nb::dict row_dict(const BenchRow& r, const BenchReport& report) {
  const GemmBenchFacts& g = r.gemm.value();
  nb::dict d;
  d["kernel"] = r.kernel;
  d["backend"] = std::string(backend_name(report.backend));
  d["rung"] = r.rung;
  d["reference"] = r.reference;
  d["dtype"] = std::string(dtype_name(r.dtype));
  d["accuracy"] = g.accuracy ? nb::cast(std::string(dtype_name(*g.accuracy))) : nb::none();
  d["m"] = g.shape.m;
  d["n"] = g.shape.n;
  d["k"] = g.shape.k;
  d["batch"] = g.batch;
  d["skipped"] = r.skipped;
  d["failed"] = r.failed;
  d["note"] = r.note;
  d["reps"] = r.timing.reps;
  d["median_ms"] = number_or_none(r.skipped, r.timing.median_s * 1e3);
  d["min_ms"] = number_or_none(r.skipped, r.timing.min_s * 1e3);
  d["max_ms"] = number_or_none(r.skipped, r.timing.max_s * 1e3);
  d["noisy"] = !r.skipped && r.timing.noisy;
  d["noisy_reason"] = r.timing.noisy_reason;
  d["gflops"] = number_or_none(r.skipped, r.rate);
  d["percent_of_reference"] =
      r.percent_of_reference < 0 ? nb::none() : nb::cast(r.percent_of_reference);
  d["percent_of_copy"] = r.percent_of_copy < 0 ? nb::none() : nb::cast(r.percent_of_copy);
  d["paired_reference_median_ms"] =
      r.reference_median_s > 0 ? nb::cast(r.reference_median_s * 1e3) : nb::none();
  d["error"] = number_or_none(r.skipped, r.check.error);
  d["error_method"] = std::string(verify_mode_name(r.check.method));
  d["tolerance"] = number_or_none(r.skipped, r.check.tolerance);
  d["tolerance_dtype"] = std::string(dtype_name(g.tolerance_dtype));
  d["passed"] = r.check.passed;
  d["check"] = r.check.check;
  d["detail"] = r.check.detail;
  return d;
}

nb::dict meta_dict(const RunMeta& meta) {
  nb::dict d;
  d["schema_version"] = meta.schema_version;
  d["gemmkit_version"] = meta.gemmkit_version;
  d["commit"] = meta.commit;
  d["dirty"] = meta.dirty;
  d["date_utc"] = meta.date_utc;
  d["host"] = meta.host;
  d["cpu"] = meta.cpu;
  d["cpu_threads"] = meta.cpu_threads;
  d["openblas_config"] = meta.openblas_config;
  d["openblas_threading"] = meta.openblas_threading;
  d["openblas_threads"] = meta.openblas_threads;
  d["cuda_build"] = meta.cuda_build;
  if (meta.gpu) {
    nb::dict gpu;
    gpu["index"] = meta.gpu->index;
    gpu["name"] = meta.gpu->name;
    gpu["compute_capability"] = nb::make_tuple(meta.gpu->cc_major, meta.gpu->cc_minor);
    gpu["sm_count"] = meta.gpu->sm_count;
    gpu["total_global_memory"] = meta.gpu->total_global_memory;
    d["gpu"] = gpu;
  } else {
    d["gpu"] = nb::none();
  }
  d["device_note"] = meta.device_note;
  d["driver_version"] = meta.driver_version;
  d["cuda_runtime_version"] = meta.cuda_runtime_version;
  d["cublas_version"] = meta.cublas_version;
  d["device_name"] = meta.device_name();
  return d;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def(
      "run_gemm_bench",
      [](Context& ctx, std::vector<std::string> kernels,
         std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes,
         std::string_view dtype, bool trans_a, bool trans_b, std::string_view layout,
         std::int64_t batch, int warmup, int reps, double max_seconds, double max_run_seconds,
         std::uint64_t seed, nb::object progress) {
        BenchOptions options;
        options.kernels = std::move(kernels);
        for (const auto& [sm, sn, sk] : shapes) options.shapes.push_back({sm, sn, sk});
        options.dtype = dtype_from_name(dtype);
        options.trans_a = trans_a;
        options.trans_b = trans_b;
        const std::optional<Layout> parsed = parse_layout(layout);
        if (!parsed) fail(ErrorCategory::usage, "layout: '" + std::string(layout) + "' is not row or col");
        options.layout = *parsed;
        if (batch < 1) fail(ErrorCategory::usage, "batch must be positive");
        options.batch = batch;
        options.warmup = warmup;
        options.reps = reps;
        options.max_seconds = max_seconds;
        options.max_run_seconds = max_run_seconds;
        options.seed = seed;

        // The callback runs on this thread with the GIL taken back; a Python exception in it
        // ends the run (it propagates through the engine as nb::python_error).
        std::function<void(const BenchProgress&)> callback;
        if (!progress.is_none())
          callback = [&progress](const BenchProgress& at) {
            nb::gil_scoped_acquire acquire;
            progress(at.done, at.total, at.kernel, at.shape.text());
          };
        BenchReport report;
        {
          nb::gil_scoped_release release;
          report = run_gemm_bench(ctx, options, callback);
        }
        nb::list rows;
        for (const BenchRow& r : report.rows) rows.append(row_dict(r, report));
        nb::dict out;
        out["backend"] = std::string(backend_name(report.backend));
        out["dtype"] = std::string(dtype_name(report.dtype));
        out["percent_of"] = report.percent_of.empty() ? nb::none() : nb::cast(report.percent_of);
        out["paired"] = report.paired;
        out["l2_flushed"] = report.l2_flushed;
        out["rows"] = rows;
        out["all_passed"] = report.all_passed();
        out["failed_rows"] = report.failed_rows();
        if (report.first_failure) {
          out["first_failure"] = std::string(report.first_failure->what());
          out["first_failure_category"] =
              std::string(category_name(report.first_failure->category()));
        } else {
          out["first_failure"] = nb::none();
          out["first_failure_category"] = nb::none();
        }
        {
          nb::gil_scoped_release release;
          const RunMeta meta = run_meta(&ctx);
          nb::gil_scoped_acquire acquire;
          out["meta"] = meta_dict(meta);
        }
        return out;
      },
      nb::arg("context"), nb::arg("kernels"), nb::arg("shapes"), nb::arg("dtype") = "f32",
      nb::arg("trans_a") = false, nb::arg("trans_b") = false, nb::arg("layout") = "row",
      nb::arg("batch") = 1, nb::arg("warmup") = 1, nb::arg("reps") = 5,
      nb::arg("max_seconds") = 3.0, nb::arg("max_run_seconds") = 2.0, nb::arg("seed") = 1,
      nb::arg("progress").none() = nb::none(),
      "The benchmark engine on the context's backend: every kernel named (empty: all that "
      "run the dtype) beside the backend's reference, at every (m, n, k) shape, each result "
      "verified. `progress(done, total, kernel, shape)` is called before each run. Returns a "
      "dict: backend, dtype, percent_of, paired, l2_flushed, rows (dicts with the columns of "
      "`gemmkit bench --json`), all_passed, failed_rows, first_failure, meta (run_meta). Runs "
      "without the GIL.");

  m.def(
      "run_meta",
      [](const Context* ctx) {
        RunMeta meta;
        {
          nb::gil_scoped_release release;
          meta = run_meta(ctx);
        }
        return meta_dict(meta);
      },
      nb::arg("context").none() = nb::none(),
      "Where and when: gemmkit's version and commit, date, host, CPU, OpenBLAS, GPU and CUDA "
      "versions (the `meta` of every --json of gemmkit).");
}

}  // namespace gemmkit::python

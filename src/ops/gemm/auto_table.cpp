#include "ops/gemm/auto_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "gemmkit/dtype.hpp"

namespace gemmkit::detail {
namespace {

#include "ops/gemm/auto_table.inc"  // kTuningRun and kTunedShapes, written by make_auto_table.py

bool rows_on_16_bytes(const GemmProblem& p) {
  const auto on16 = [&](const void* ptr, std::int64_t ld) {
    const std::int64_t bytes = std::int64_t(dtype_size(p.dtype));
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && (ld * bytes) % 16 == 0;
  };
  return on16(p.a, p.lda) && on16(p.b, p.ldb);
}

double log2_of(std::int64_t x) { return std::log2(double(std::max<std::int64_t>(x, 1))); }

// A measured shape with its logarithms worked out once: auto looks here on every call.
struct Indexed {
  const TunedShape* shape;
  double log_m, log_n, log_k, log_batch;
};
const std::vector<Indexed>& index() {
  static const std::vector<Indexed> rows = [] {
    std::vector<Indexed> v;
    for (const TunedShape& s : kTunedShapes)
      v.push_back({&s, log2_of(s.m), log2_of(s.n), log2_of(s.k), log2_of(s.batch)});
    return v;
  }();
  return rows;
}

}  // namespace

const TuningRun& tuning_run() { return kTuningRun; }

std::vector<TunedMatch> nearest_tuned_shapes(const GemmProblem& p, std::size_t limit) {
  const bool aligned = rows_on_16_bytes(p);
  const double lm = log2_of(p.m), ln = log2_of(p.n), lk = log2_of(p.k), lb = log2_of(p.batch);
  std::vector<TunedMatch> nearest;  // sorted by distance, at most `limit`
  for (const Indexed& x : index()) {
    const TunedShape& s = *x.shape;
    if (s.dtype != p.dtype || s.rows_on_16_bytes != aligned) continue;
    const double d = std::abs(x.log_m - lm) + std::abs(x.log_n - ln) + std::abs(x.log_k - lk) +
                     std::abs(x.log_batch - lb) + 0.5 * (s.trans_a != p.trans_a) +
                     0.5 * (s.trans_b != p.trans_b);
    // Of equally near shapes, the table's first (its order is the suites').
    const auto at = std::upper_bound(nearest.begin(), nearest.end(), d,
                                     [](double v, const TunedMatch& m) { return v < m.distance; });
    if (std::size_t(at - nearest.begin()) >= limit) continue;
    nearest.insert(at, {&s, d});
    if (nearest.size() > limit) nearest.pop_back();
  }
  return nearest;
}

std::string tuned_shape_string(const TunedShape& s) {
  GemmProblem p;
  p.m = s.m, p.n = s.n, p.k = s.k, p.batch = s.batch;
  p.trans_a = s.trans_a, p.trans_b = s.trans_b;
  return p.shape_string();
}

MeasuredTable<GemmProblem> gemm_measured_table() {
  constexpr std::size_t kTries = 4;
  MeasuredTable<GemmProblem> table;
  table.backend = Backend::cuda;
  table.compute_capability = kTuningRun.compute_capability;
  table.rule = std::string("the kernel measured fastest at the nearest shape of the problem's class (dtype, rows on "
                           "16 bytes or not) in the tuning run (") +
               kTuningRun.results + "), if it accepts the problem (the next nearest otherwise)";
  table.picks = [](const GemmProblem& p, bool described) {
    std::vector<MeasuredTable<GemmProblem>::Pick> picks;
    for (const TunedMatch& match : nearest_tuned_shapes(p, kTries)) {
      if (!described) {
        picks.push_back({match.shape->kernel, {}});
        continue;
      }
      char measured[64];
      std::snprintf(measured, sizeof measured, "%.1f%% of cuBLAS", match.shape->percent_of_cublas);
      picks.push_back({match.shape->kernel, "fastest at " + tuned_shape_string(*match.shape) + " (" + measured +
                                                ") in the tuning run on the " + kTuningRun.device});
    }
    return picks;
  };
  return table;
}

}  // namespace gemmkit::detail

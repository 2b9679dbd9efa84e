#include "gemmkit/bench_report.hpp"

#include <algorithm>

namespace gemmkit {

std::string_view rate_unit_name(RateUnit unit) { return unit == RateUnit::gbs ? "GB/s" : "GFLOP/s"; }

std::string BenchShape::text() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

bool BenchReport::all_passed() const {
  return std::all_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.skipped || r.check.passed; });
}

std::size_t BenchReport::failed_rows() const {
  return std::size_t(std::count_if(rows.begin(), rows.end(), [](const BenchRow& r) { return r.failed; }));
}

void record_runs(BenchRow& row, const PairedTimes& runs, double work, bool cpu) {
  row.seconds = runs.entry;
  row.timing = timing_spread(runs.entry, cpu, runs.reference);
  row.rate = row.timing.median_s > 0 ? work / row.timing.median_s / 1e9 : 0;
  row.reference_median_s = runs.reference.empty() ? 0 : median_of(runs.reference);
}

void set_ratios(std::vector<BenchRow>::iterator first, std::vector<BenchRow>::iterator last,
                const BenchRow* reference, double copy_median_s) {
  for (auto r = first; r != last; ++r) {
    if (r->skipped) continue;
    if (r->reference_median_s > 0)
      r->percent_of_reference = 100.0 * r->reference_median_s / r->timing.median_s;
    else if (reference && !reference->skipped)
      r->percent_of_reference = 100.0 * r->rate / reference->rate;
    if (copy_median_s > 0) r->percent_of_copy = 100.0 * copy_median_s / r->timing.median_s;
  }
}

}  // namespace gemmkit

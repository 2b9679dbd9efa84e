#include "gemmkit/timing_spread.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace gemmkit {

namespace {

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// (max - min) / median of the runs; 0 for fewer than two.
double relative_spread(std::vector<double>& sorted) {
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() < 2) return 0;
  const double median = median_of_sorted(sorted);
  return median > 0 ? (sorted.back() - sorted.front()) / median : 0;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

}  // namespace

double median_of(std::vector<double> seconds) {
  if (seconds.empty()) return 0;
  std::sort(seconds.begin(), seconds.end());
  return median_of_sorted(seconds);
}

CoreLoad core_load(int threads) {
  CoreLoad load;
  load.threads = threads;
  cpu_set_t set;
  CPU_ZERO(&set);
  load.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                           : int(std::thread::hardware_concurrency());
  // getloadavg, not a stream over /proc/loadavg: a module linked with a static libstdc++ (as
  // one GPU image's compiler does) crashed extracting a double beside PyTorch's libstdc++.
  double load1 = -1;
  if (getloadavg(&load1, 1) == 1) load.load1 = load1;
  return load;
}

TimingSpread timing_spread(std::vector<double> seconds, bool cpu, std::vector<double> reference) {
  TimingSpread t;
  t.reps = int(seconds.size());
  if (seconds.empty()) return t;
  t.spread = relative_spread(seconds);
  t.min_s = seconds.front();
  t.max_s = seconds.back();
  t.median_s = median_of_sorted(seconds);
  if (!reference.empty()) t.reference_spread = relative_spread(reference);
  if (cpu) t.load = core_load(omp_get_max_threads());
  std::string why;
  const auto add = [&](const std::string& reason) { why += (why.empty() ? "" : "; ") + reason; };
  const std::string limit = percent(kNoisySpread);
  if (t.spread > kNoisySpread) add("spread " + percent(t.spread) + " > " + limit);
  if (t.reference_spread > kNoisySpread)
    add("the reference's paired runs spread " + percent(t.reference_spread) + " > " + limit);
  if (t.load.shared()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "cores shared (1-minute load %.2f, less the run's %d threads, is above the %d "
                                   "idle of %d cores)",
                  t.load.load1, t.load.threads, t.load.cores - t.load.threads, t.load.cores);
    add(buf);
  }
  t.noisy = !why.empty();
  t.noisy_reason = why;
  return t;
}

std::string spread_text(const TimingSpread& t) {
  return (t.spread >= 10 ? std::string(">999%") : percent(t.spread)) + (t.noisy ? "*" : "");
}

std::string noisy_legend() {
  return "spread: (max - min) / median of the timed runs; *: noisy, a spread above " + percent(kNoisySpread) +
         " (or the reference's paired runs'), or on the CPU the cores shared (the 1-minute load less the "
         "run's threads above the idle cores)";
}

}  // namespace gemmkit

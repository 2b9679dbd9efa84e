// The spread of a kernel's timed runs and whether they were noisy: the one rule every timed
// row of gemmkit follows (run_gemm_bench's rows, and the --bench rows of reduce, spmv and
// conv1d), so that a figure measured on shared cores or with a drifting clock says so.
#pragma once

#include <string>
#include <vector>

namespace gemmkit {

// A row is noisy when (max - min) / median of its timed runs, or of the reference's runs
// paired with them, is above this.
inline constexpr double kNoisySpread = 0.10;

// How busy the cores were when a CPU row's runs ended.
struct CoreLoad {
  double load1 = -1;  // the 1-minute load average (/proc/loadavg); -1: unknown
  int cores = 0;      // the cores this process may run on (its affinity mask)
  int threads = 0;    // the threads the run uses (OpenMP's)
  // The cores are shared: the load of other processes (load1 less the run's own threads)
  // is more than the cores the run leaves idle (cores - threads) can take.
  bool shared() const { return load1 >= 0 && load1 - threads > cores - threads; }
};
CoreLoad core_load(int threads);  // now

struct TimingSpread {
  int reps = 0;  // the timed runs (samples)
  double min_s = 0, median_s = 0, max_s = 0;
  double spread = 0;             // (max - min) / median
  double reference_spread = -1;  // the same of the reference's paired runs; -1: not paired
  CoreLoad load;                 // of a CPU run (load1 -1 otherwise)
  bool noisy = false;
  std::string noisy_reason;  // why, when noisy: "spread 23.1% > 10%; cores shared (load 3.10 ...)"
};

// The median of timed runs (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> seconds);

// `seconds`: a row's timed runs, in any order. `cpu`: the run was on the CPU (the load
// check applies, with OpenMP's threads). `reference`: the reference's runs timed in pairs
// with these (empty when not paired).
TimingSpread timing_spread(std::vector<double> seconds, bool cpu, std::vector<double> reference = {});

// For tables: the spread as "4.2%", with "*" after it when the row is noisy ("31.0%*"), and
// the one line that says what that means.
std::string spread_text(const TimingSpread& t);
std::string noisy_legend();

}  // namespace gemmkit

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <omp.h>

#include "cli.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/io.hpp"
#include "gemmkit/openblas.hpp"
#include "gemmkit_commit.hpp"

namespace gemmkit::cli {

std::optional<Backend> parse_backend(const std::string& text) {
  if (text == "auto") return std::nullopt;
  if (text == "cpu") return Backend::cpu;
  if (text == "cuda") return Backend::cuda;
  fail(ErrorCategory::usage, "unknown backend '" + text + "' (expected auto, cpu or cuda)");
}

VectorFile read_vector_file(const std::string& path, const std::string& what) {
  AnyMatrix m = read_matrix(path);
  const std::int64_t rows = rows_of(m), cols = cols_of(m);
  if (rows != 1 && cols != 1 && rows * cols != 0)
    fail(ErrorCategory::input, path + ": " + what + " must be a vector (1-D, n x 1 or 1 x n), and a " +
                                   std::to_string(rows) + " x " + std::to_string(cols) +
                                   " matrix is not a vector");
  return {std::move(m), rows == 1 && cols > 1};
}

void write_json(const std::string& path, const nlohmann::json& value) {
  AtomicFile file(path);
  file.write(value.dump(2) + "\n");
  file.commit();
}

bool progress_wanted() { return isatty(STDERR_FILENO) == 1; }

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

}  // namespace

nlohmann::json environment_json() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  nlohmann::json env = {
      {"gemmkit_version", GEMMKIT_VERSION},
      {"commit", GEMMKIT_GIT_COMMIT},
      {"date", utc_now()},
      {"host", host},
      {"cpu", cpu_model()},
      {"cpu_threads", omp_get_max_threads()},
      {"cuda_build", cuda_compiled()},
  };
  const OpenBlasInfo blas = openblas_info();
  env["openblas"] = {{"config", blas.config}, {"threading", blas.threading}, {"threads", blas.threads}};
  const DeviceQuery q = query_devices();
  if (!q.devices.empty()) {
    const DeviceInfo& d = q.devices.front();
    env["gpu"] = {{"name", d.name},
                  {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                  {"sm_count", d.sm_count},
                  {"sm_clock_mhz", d.clock_khz / 1000},
                  {"driver_version", d.driver_version},
                  {"runtime_version", d.runtime_version}};
  } else {
    env["gpu"] = nullptr;
    env["gpu_note"] = q.message;
  }
  return env;
}

}  // namespace gemmkit::cli

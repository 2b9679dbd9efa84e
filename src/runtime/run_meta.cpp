#include "gemmkit/run_meta.hpp"

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string_view>

#include "ops/gemm/bench_device.hpp"
#include "gemmkit/context.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/openblas.hpp"
#include "gemmkit/version.hpp"
#include "gemmkit_commit.hpp"  // generated at build time (cmake/git_commit.cmake)

namespace gemmkit {
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
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

RunMeta build_meta() {
  RunMeta meta;
  meta.gemmkit_version = GEMMKIT_VERSION;
  // `git describe --dirty` marks a tree with uncommitted changes by a suffix.
  constexpr std::string_view dirty_suffix = "-dirty";
  std::string commit = GEMMKIT_GIT_COMMIT;
  if (commit.size() > dirty_suffix.size() && commit.ends_with(dirty_suffix)) {
    commit.resize(commit.size() - dirty_suffix.size());
    meta.dirty = true;
  }
  meta.commit = commit;
  return meta;
}

RunMeta run_meta(const Context* context) {
  RunMeta meta = build_meta();
  meta.date_utc = utc_now();
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  meta.host = host;
  meta.cpu = cpu_model();
  meta.cpu_threads = omp_get_max_threads();
  try {  // loads OpenBLAS if it is not yet: left blank where it cannot be (ulimit -v)
    const OpenBlasInfo blas = openblas_info();
    meta.openblas_config = blas.config;
    meta.openblas_threading = blas.threading;
    meta.openblas_threads = blas.threads;
  } catch (const Error&) {
  }
  meta.cuda_build = cuda_compiled();
  const DeviceQuery q = query_devices();
  if (q.devices.empty()) {
    meta.device_note = q.message;
    return meta;
  }
  meta.cublas_version = cuda_versions().cublas;  // loads cuBLAS: only where a GPU is used
  const int index = context && context->backend() == Backend::cuda ? context->device() : 0;
  for (const DeviceInfo& d : q.devices)
    if (d.index == index) meta.gpu = d;
  if (!meta.gpu) meta.gpu = q.devices.front();
  meta.driver_version = meta.gpu->driver_version;
  meta.cuda_runtime_version = meta.gpu->runtime_version;
  return meta;
}

}  // namespace gemmkit

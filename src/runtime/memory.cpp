#include "gemmkit/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "gemmkit/error.hpp"
#include "gemmkit/registry.hpp"
#include "gemmkit/verify.hpp"

namespace gemmkit {
namespace {

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(bytes) / double(std::uint64_t{1} << 30));
  return buf;
}

// Bytes this process maps now (VmSize), or nullopt when /proc is not there.
std::optional<std::uint64_t> mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  if (!(statm >> pages)) return std::nullopt;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::optional<std::uint64_t> mem_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// What a cgroup v2 memory limit leaves (memory.max less memory.current), or nullopt.
std::optional<std::uint64_t> cgroup_available() {
  std::ifstream max_file("/sys/fs/cgroup/memory.max"), current_file("/sys/fs/cgroup/memory.current");
  std::uint64_t max = 0, current = 0;
  if (!(max_file >> max) || !(current_file >> current)) return std::nullopt;  // absent, or "max"
  return max > current ? max - current : 0;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

std::uint64_t matrix_bytes(std::int64_t rows, std::int64_t cols, DType dtype) {
  std::uint64_t bytes = 0;
  if (rows < 0 || cols < 0 ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), &bytes) ||
      __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(dtype_size(dtype)), &bytes))
    fail(ErrorCategory::input, "a " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                                   std::string(dtype_name(dtype)) + " matrix has more bytes than 64 bits count");
  return bytes;
}

HostMemory address_space() {
  HostMemory result;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = mapped_bytes().value_or(0);
    result.available = limit.rlim_cur > used ? limit.rlim_cur - used : 0;
    result.limited_by = "ulimit -v";
  }
  return result;
}

HostMemory host_memory() {
  HostMemory result = address_space();
  if (const auto free = mem_available(); free && *free < result.available) {
    result.available = *free;
    result.limited_by = "MemAvailable";
  }
  if (const auto left = cgroup_available(); left && *left < result.available) {
    result.available = *left;
    result.limited_by = "cgroup memory.max";
  }
  return result;
}

GemmMemory estimate_gemm_memory(const GemmProblem& p, VerifyMode mode) {
  GemmMemory result;
  if (writes_nothing(p)) return result;  // an empty C: nothing to copy, compute or check, whatever K is
  // Spans of the stored operands, the whole batch (a row-major problem's matrices).
  const std::uint64_t a = matrix_bytes(1, p.a_span(), p.dtype);
  const std::uint64_t b = matrix_bytes(1, p.b_span(), p.dtype);
  const std::uint64_t c = matrix_bytes(1, p.c_span(), p.c_dtype());
  result.device = saturating_add(saturating_add(a, b), c);
  if (mode != VerifyMode::none || is_integer(p.dtype)) {
    // Reference blocks of 2^18 entries (double-double or 128-bit: 4 MiB) and the panel of B,
    // plus per-row and per-column vectors of a few doubles each (Freivalds keeps 4 vectors
    // in double-double and their magnitudes: 12 doubles per row or column).
    const std::uint64_t lines = static_cast<std::uint64_t>(p.m + p.n + p.k);
    result.host = (std::uint64_t{16} << 20) + lines * 12 * sizeof(double);
  }
  return result;
}

void require_host_memory(std::uint64_t bytes, const std::string& what) {
  const HostMemory host = host_memory();
  if (bytes <= host.available) return;
  if (host.limited_by == "MemAvailable" && bytes <= kMemAvailableFloor) return;
  fail(ErrorCategory::out_of_memory, what + " needs " + gib(bytes) + " GiB of host memory, " +
                                         gib(host.available) + " GiB available (limit from " +
                                         host.limited_by + ")");
}

void require_address_space(std::uint64_t bytes, const std::string& what) {
  const HostMemory space = address_space();
  if (bytes > space.available)
    fail(ErrorCategory::out_of_memory, what + " needs " + gib(bytes) + " GiB of address space, " +
                                           gib(space.available) + " GiB left (limit from " +
                                           space.limited_by + ")");
}

void require_device_memory(std::uint64_t bytes, const std::string& what) {
  const std::optional<DeviceMemory> device = device_memory();
  if (device && bytes > device->free)
    fail(ErrorCategory::out_of_memory, what + " needs " + gib(bytes) + " GiB of device memory, " +
                                           gib(device->free) + " GiB free of " + gib(device->total));
}

}  // namespace gemmkit

// Memory a command needs, estimated before it starts, against what the machine can give:
// a run that cannot fit is refused with the figures instead of being killed half-way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gemmkit/gemm.hpp"

namespace gemmkit {

enum class VerifyMode;  // gemmkit/verify.hpp (not included: CUDA sources include this header)

// Bytes of a rows x cols matrix of `dtype`; an input error when that overflows 64 bits.
std::uint64_t matrix_bytes(std::int64_t rows, std::int64_t cols, DType dtype);

// Host memory this process can still allocate: the least of the address-space limit
// (RLIMIT_AS, `ulimit -v`) less what the process maps now, the system's MemAvailable, and
// what a cgroup v2 memory.max leaves.
struct HostMemory {
  std::uint64_t available = UINT64_MAX;
  std::string limited_by;  // "ulimit -v", "MemAvailable", "cgroup memory.max", or empty
};
HostMemory host_memory();
// The address space alone: what RLIMIT_AS (`ulimit -v`) leaves beyond what the process maps
// now (limited_by "ulimit -v"), for maps that are mostly never touched (a library's buffers).
HostMemory address_space();

// Free and total memory of the current CUDA device; nullopt without one.
struct DeviceMemory {
  std::uint64_t free = 0, total = 0;
};
std::optional<DeviceMemory> device_memory();

// What running and verifying `problem` needs beyond its operands in host memory (the
// verification's working set, a few MiB plus O(m + n + k)), and on the device (A, B and C
// copied there) when it runs there. An empty C (m or n 0) needs nothing, whatever k is.
struct GemmMemory {
  std::uint64_t host = 0, device = 0;
};
GemmMemory estimate_gemm_memory(const GemmProblem& problem, VerifyMode mode);

// Fail with ErrorCategory::out_of_memory, "WHAT needs X GiB of host memory, Y GiB available
// (limit from ...)", when `bytes` exceed what host_memory() says is available. MemAvailable
// alone refuses only requests above kMemAvailableFloor: it is the kernel's estimate, and in
// a sandboxed container (gVisor, seen on the GPU machine with PyTorch loaded) it can read
// near 0 while memory is plentiful; the hard limits (ulimit -v, cgroup) always apply.
inline constexpr std::uint64_t kMemAvailableFloor = std::uint64_t{256} << 20;
void require_host_memory(std::uint64_t bytes, const std::string& what);
// The same against address_space(): "WHAT needs X GiB of address space, Y GiB left (limit
// from ulimit -v)".
void require_address_space(std::uint64_t bytes, const std::string& what);
// The same against the device's free memory; nothing when there is no device.
void require_device_memory(std::uint64_t bytes, const std::string& what);

}  // namespace gemmkit

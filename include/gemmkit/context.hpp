// The device API's state: one Context per device (or one for the CPU backend). It owns what
// kernels need besides their operands, so that nothing is kept in statics:
//   - the library handles (cuBLAS, cuSPARSE), created on first use;
//   - a workspace pool: one device buffer per stream, grown (stream-ordered) when a call
//     needs more and then reused, so calls allocate nothing once warm;
//   - the device's properties and per-kernel facts (occupancy, attributes), asked once.
// A Context may be used from several host threads and streams at once. Destroy it only
// after the work queued through it is done (it frees the workspaces).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "gemmkit/device.hpp"

struct CUstream_st;  // the CUDA runtime's stream; no CUDA header is needed here

namespace gemmkit {

enum class Backend { cpu, cuda };
std::string_view backend_name(Backend backend);

// A CUDA stream (the same type as cudaStream_t). nullptr is the legacy default stream. CPU
// work ignores it and runs synchronously on the calling thread.
using Stream = CUstream_st*;

// Device memory lent to a call for its scratch (partial sums, flags, operand copies). A
// call that gets one uses it instead of the context's pool; it must hold at least the
// bytes the call's *_workspace_bytes function returns, aligned to 256 bytes, and must not
// be used by another call on another stream at the same time.
struct Workspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// Every workspace the library hands out starts on this boundary.
inline constexpr std::size_t kWorkspaceAlignment = 256;

class Context {
 public:
  // The CUDA backend when this build has it and a device is present, else the CPU.
  Context();
  // Backend::cuda: the CUDA context of `device` (-1: the calling thread's current device);
  // a device error (exit 1) when there is no such device. Backend::cpu: the CPU context.
  explicit Context(Backend backend, int device = -1);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Backend backend() const;
  int device() const;                     // -1 for the CPU context
  const DeviceInfo& device_info() const;  // asked once; empty for the CPU context
  int compute_capability() const;         // e.g. 90; 0 for the CPU context

  // The pool's workspace for `stream`: at least `bytes` of device memory, aligned to
  // kWorkspaceAlignment. Calls on one stream run in order, so they share one buffer; a
  // larger request replaces it in stream order (cudaFreeAsync/cudaMallocAsync), never
  // waiting for the device. Thread-safe. An out-of-memory error says what was asked.
  Workspace workspace(Stream stream, std::size_t bytes);
  // Device bytes the pool holds now, over every stream.
  std::size_t workspace_bytes_held() const;
  // Device allocations the pool has made so far (a warm loop of calls adds none).
  std::uint64_t workspace_allocations() const;
  // Frees the pool after waiting for the device to finish. Safe to call any time.
  void release_workspaces();

  // For kernel launchers: an int computed once per context under `key` (a kernel's
  // address, say): blocks that fit on an SM, an attribute set on a function.
  int cached(const void* key, const std::function<int()>& compute) const;

  // The backend's handles and pool (src/ only).
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmkit

// Where and when a result was made: the `meta` object every --json of gemmkit starts with
// ({"meta": {...}, ..., "rows": [...]}), as plain data.
#pragma once

#include <optional>
#include <string>

#include "gemmkit/device.hpp"

namespace gemmkit {

class Context;

// Version of the JSON result schema ({"meta": {...}, ..., "rows": [...]}); raised whenever
// a field changes meaning or goes away (adding one does not).
inline constexpr int kResultSchemaVersion = 1;

struct RunMeta {
  int schema_version = kResultSchemaVersion;
  std::string gemmkit_version;  // GEMMKIT_VERSION of the library
  std::string commit;           // `git describe` of the tree the library was built from, or "unknown"
  bool dirty = false;           // that tree had uncommitted changes
  std::string date_utc;         // when run_meta() was called, e.g. "2026-11-24T01:30:00Z"
  std::string host;
  std::string cpu;              // CPU model
  int cpu_threads = 0;          // OpenMP threads
  std::string openblas_config, openblas_threading;
  int openblas_threads = 0;
  bool cuda_build = false;      // built with the CUDA backend
  // The GPU (the context's device, else device 0); name empty when there is none, and
  // device_note says why.
  std::optional<DeviceInfo> gpu;
  std::string device_note;
  int driver_version = 0;        // CUDA driver (e.g. 12080); 0: none
  int cuda_runtime_version = 0;  // CUDA runtime the library runs with; 0: none
  int cublas_version = 0;        // e.g. 120803 (major*10000 + minor*100 + patch); 0: not built
  // The device results were measured on: the GPU's name, or the CPU model.
  std::string device_name() const { return gpu ? gpu->name : cpu; }
};

// Describes this process now. With a CUDA context, its device; else device 0 if any.
// Loads OpenBLAS (and, with a GPU, cuBLAS) to ask their versions.
RunMeta run_meta(const Context* context = nullptr);
// The build alone (version, commit, dirty), asking nothing of the machine or its libraries.
RunMeta build_meta();

}  // namespace gemmkit

// What the library knows about itself and its machine: CUDA devices (and why there are
// none), the kernel catalogue of every operation, versions and the run's meta.

#include "bindings.hpp"
#include "gemmkit/catalogue.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"
#include "gemmkit/run_meta.hpp"
#include "gemmkit/version.hpp"

namespace gemmkit::python {

DType dtype_from_name(std::string_view name) {
  if (std::optional<DType> dtype = parse_dtype(name)) return *dtype;
  std::string known;
  for (DType d : all_dtypes()) known += (known.empty() ? "" : ", ") + std::string(dtype_name(d));
  fail(ErrorCategory::usage, "unknown dtype '" + std::string(name) + "' (known: " + known + ")");
}

namespace {

nb::dict device_dict(const DeviceInfo& d) {
  nb::dict out;
  out["index"] = d.index;
  out["name"] = d.name;
  out["compute_capability"] = nb::make_tuple(d.cc_major, d.cc_minor);
  out["sm_count"] = d.sm_count;
  out["total_global_memory"] = d.total_global_memory;
  out["shared_memory_per_block"] = d.shared_memory_per_block;
  out["shared_memory_per_block_optin"] = d.shared_memory_per_block_optin;
  out["shared_memory_per_sm"] = d.shared_memory_per_sm;
  out["constant_memory"] = d.constant_memory;
  out["registers_per_block"] = d.registers_per_block;
  out["registers_per_sm"] = d.registers_per_sm;
  out["l2_cache_bytes"] = d.l2_cache_bytes;
  out["warp_size"] = d.warp_size;
  out["max_threads_per_block"] = d.max_threads_per_block;
  out["max_threads_per_sm"] = d.max_threads_per_sm;
  out["max_blocks_per_sm"] = d.max_blocks_per_sm;
  out["max_block_dim"] = nb::make_tuple(d.max_block_dim[0], d.max_block_dim[1], d.max_block_dim[2]);
  out["max_grid_dim"] = nb::make_tuple(d.max_grid_dim[0], d.max_grid_dim[1], d.max_grid_dim[2]);
  out["clock_khz"] = d.clock_khz;
  out["memory_clock_khz"] = d.memory_clock_khz;
  out["memory_bus_width_bits"] = d.memory_bus_width_bits;
  out["fp32_peak_tflops"] = d.fp32_peak_tflops();
  out["memory_bandwidth_gbs"] = d.memory_bandwidth_gbs();
  out["driver_version"] = d.driver_version;
  out["runtime_version"] = d.runtime_version;
  return out;
}

nb::dict catalogue_dict(const CatalogueEntry& c) {
  const KernelInfo& e = *c.kernel;
  const std::optional<DType> accuracy = c.gemm ? c.gemm->accuracy : std::nullopt;
  nb::dict out;
  out["operation"] = std::string(c.operation);
  out["name"] = e.name;
  out["backend"] = std::string(backend_name(e.backend));
  out["rung"] = e.rung;
  out["role"] = std::string(kernel_role_name(e.role));
  out["summary"] = e.summary;
  nb::list dtypes;
  for (DType d : e.dtypes) dtypes.append(std::string(dtype_name(d)));
  out["dtypes"] = dtypes;
  out["accuracy"] = accuracy ? nb::cast(std::string(dtype_name(*accuracy))) : nb::none();
  out["min_compute_capability"] = e.min_compute_capability;
  out["auto"] = e.auto_priority > 0;
  out["batched"] = c.gemm && c.gemm->batched;
  return out;
}

}  // namespace

void bind_info(nb::module_& m) {
  m.attr("__version__") = GEMMKIT_VERSION;
  m.attr("cuda_compiled") = cuda_compiled();

  m.def(
      "devices",
      []() {
        const DeviceQuery query = query_devices();
        nb::list devices;
        for (const DeviceInfo& d : query.devices) devices.append(device_dict(d));
        return nb::make_tuple(devices, std::string(no_device_reason_name(query.reason)),
                              query.message);
      },
      "(devices, reason, message): one dict per CUDA device, and when there is none the "
      "reason's name ('not_built', 'no_driver', ...) and the sentence saying why.");
  m.def("no_device_message", &no_device_message,
        "The sentence gemmkit uses when a CUDA device is needed and there is none.");

  m.def(
      "catalogue",
      [](std::string_view operation) {
        nb::list rows;
        for (const CatalogueEntry& e : catalogue(operation)) rows.append(catalogue_dict(e));
        return rows;
      },
      nb::arg("operation") = "",
      "Every kernel of every operation (or of one: 'gemm', 'reduce', 'spmv', 'conv1d'), "
      "one dict each.");

  m.def(
      "versions",
      []() {
        const CudaVersions cuda = cuda_versions();
        const RunMeta meta = run_meta();
        nb::dict out;
        out["gemmkit"] = std::string(GEMMKIT_VERSION);
        out["commit"] = meta.commit;
        out["dirty"] = meta.dirty;
        out["cuda_build"] = meta.cuda_build;
        out["cuda_runtime"] = cuda.runtime;
        out["cuda_driver"] = cuda.driver;
        out["cublas"] = cuda.cublas;
        out["openblas"] = meta.openblas_config;
        return out;
      },
      "The library's version and commit, and the CUDA runtime, driver and cuBLAS it runs with "
      "(0 where absent).");
}

}  // namespace gemmkit::python

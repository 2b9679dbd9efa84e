// gemmkit.Context: the library's per-device state (cuBLAS/cuSPARSE handles, the workspace
// pool, device facts) as a Python object. The package keeps one default context per device
// (gemmkit/_context.py); a program that wants its own passes `context=` to any call.

#include "bindings.hpp"
#include "gemmkit/device.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit::python {

namespace {

Backend backend_from_name(std::string_view name) {
  if (name == "cpu") return Backend::cpu;
  if (name == "cuda") return Backend::cuda;
  fail(ErrorCategory::usage,
       "unknown backend '" + std::string(name) + "' (known: auto, cpu, cuda)");
}

}  // namespace

void bind_context(nb::module_& m) {
  nb::class_<Context>(m, "Context",
                      "The library's state for one device (or the CPU): cuBLAS and cuSPARSE "
                      "handles, a workspace pool with one buffer per stream, device facts. Calls "
                      "on one context may come from several threads and streams.")
      .def(
          "__init__",
          [](Context* self, std::string_view backend, int device) {
            if (backend == "auto") {
              if (device >= 0)
                new (self) Context(Backend::cuda, device);
              else
                new (self) Context();
            } else {
              new (self) Context(backend_from_name(backend), device);
            }
          },
          nb::arg("backend") = "auto", nb::arg("device") = -1,
          "backend: 'auto' (CUDA when a device is present, else the CPU), 'cpu' or 'cuda'. "
          "device: the CUDA device's index (-1: the current one). Raises DeviceError when "
          "CUDA is asked for and there is no such device.")
      .def_prop_ro("backend", [](const Context& c) { return std::string(backend_name(c.backend())); },
                   "'cpu' or 'cuda'.")
      .def_prop_ro("device", &Context::device, "The CUDA device's index; -1 for the CPU context.")
      .def_prop_ro("compute_capability", &Context::compute_capability,
                   "e.g. 90 for Hopper; 0 for the CPU context.")
      .def_prop_ro("workspace_bytes_held", &Context::workspace_bytes_held,
                   "Device bytes the workspace pool holds now, over every stream.")
      .def_prop_ro("workspace_allocations", &Context::workspace_allocations,
                   "Device allocations the pool has made so far (a warm loop of calls adds "
                   "none).")
      .def("release_workspaces", &Context::release_workspaces, nb::call_guard<nb::gil_scoped_release>(),
           "Frees the workspace pool after waiting for the device to finish its work.")
      .def("__repr__", [](const Context& c) {
        if (c.backend() == Backend::cpu) return std::string("gemmkit.Context(backend='cpu')");
        return "gemmkit.Context(backend='cuda', device=" + std::to_string(c.device()) + ", name='" +
               c.device_info().name + "')";
      });
}

}  // namespace gemmkit::python

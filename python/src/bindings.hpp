// The extension module gemmkit._gemmkit, one file per part of the toolkit. Each bind_*
// function adds its part's functions and classes to the module (module.cpp calls them).
// The module works on raw pointers, shapes and streams; the package's Python layer
// (python/gemmkit/) turns arrays, tensors and graphs into them.
#pragma once

#include <nanobind/nanobind.h>
// The standard-library casters every part uses (str, str arguments, None, lists).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string_view>

#include "gemmkit/context.hpp"
#include "gemmkit/dtype.hpp"

namespace gemmkit::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);      // errors.cpp: gemmkit.Error and its subclasses
void bind_context(nb::module_& m);     // context.cpp: gemmkit.Context
void bind_info(nb::module_& m);        // info.cpp: devices, the catalogue, versions
void bind_matmul(nb::module_& m);      // matmul.cpp: GEMM on host and device pointers
void bind_walks(nb::module_& m);       // walks.cpp: exact walk counts
void bind_primitives(nb::module_& m);  // primitives.cpp: reduce, spmv, conv1d
void bind_bench(nb::module_& m);       // bench.cpp: the benchmark engine

// "f32", "bf16", ... to a DType; a usage error (ValueError) naming the known ones otherwise.
DType dtype_from_name(std::string_view name);

// A stream handle passed from Python as an integer (torch's cuda_stream, CuPy's ptr; 0 is
// the legacy default stream).
inline Stream stream_from_int(std::uintptr_t handle) { return reinterpret_cast<Stream>(handle); }

}  // namespace gemmkit::python

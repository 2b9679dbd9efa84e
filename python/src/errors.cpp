// gemmkit::Error as Python exceptions. Every category has its own class, derived from
// gemmkit.Error and from the built-in exception a Python user expects for it, so that
// `except ValueError` catches bad input and `except gemmkit.Error` catches everything the
// library raises. The message is the library's, unchanged.
#include <Python.h>

#include <array>
#include <string>

#include "bindings.hpp"
#include "gemmkit/error.hpp"

namespace gemmkit::python {
namespace {

struct ErrorClass {
  ErrorCategory category;
  const char* name;
  PyObject* builtin;
  const char* doc;
};

// Filled once at import; the classes live as long as the module (they are its attributes).
std::array<PyObject*, 7> g_classes{};

std::size_t index_of(ErrorCategory category) { return static_cast<std::size_t>(category); }

}  // namespace

void bind_errors(nb::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "gemmkit.Error", "Base class of every error gemmkit raises; `category` names its kind.",
      PyExc_Exception, nullptr);
  if (base == nullptr) throw nb::python_error();
  m.attr("Error") = nb::steal(base);

  const ErrorClass classes[] = {
      {ErrorCategory::usage, "UsageError", PyExc_ValueError,
       "A call that cannot be done as asked: a bad argument, mismatched shapes, a kernel that "
       "refuses the problem."},
      {ErrorCategory::input, "InputError", PyExc_ValueError,
       "Input data that is malformed, unreadable or unsupported (a file, a graph, a value)."},
      {ErrorCategory::device, "DeviceError", PyExc_RuntimeError,
       "A CUDA, cuBLAS or driver failure, or no CUDA device where one is needed."},
      {ErrorCategory::out_of_memory, "OutOfMemoryError", PyExc_MemoryError,
       "A host or device allocation failed; the message says how much was asked and how much "
       "is free."},
      {ErrorCategory::numeric, "NumericError", PyExc_ArithmeticError,
       "A result that is not representable (integer overflow) or that failed verification."},
      {ErrorCategory::internal, "InternalError", PyExc_RuntimeError, "A bug in gemmkit."},
      {ErrorCategory::output, "OutputError", PyExc_OSError,
       "Writing a result failed (full disk, closed pipe)."},
  };
  for (const ErrorClass& c : classes) {
    const std::string qualified = std::string("gemmkit.") + c.name;
    nb::object bases = nb::make_tuple(nb::borrow(base), nb::borrow(c.builtin));
    PyObject* cls =
        PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), nullptr);
    if (cls == nullptr) throw nb::python_error();
    nb::object owned = nb::steal(cls);
    owned.attr("category") = std::string(category_name(c.category));
    m.attr(c.name) = owned;
    g_classes[index_of(c.category)] = cls;
  }

  nb::register_exception_translator([](const std::exception_ptr& error, void*) {
    try {
      std::rethrow_exception(error);
    } catch (const Error& e) {
      PyErr_SetString(g_classes[index_of(e.category())], e.what());
    }
  });
}

}  // namespace gemmkit::python

// The extension module pypto._core is assembled from one binding file per layer.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pypto::bindings {
void bind_ir(nanobind::module_& m);        // ir.cpp: IR nodes, printer, structural equality
void bind_compiler(nanobind::module_& m);  // compiler.cpp: passes, codegen
void bind_runtime(nanobind::module_& m);   // runtime.cpp: tensors, engines, running programs
void bind_kernel(nanobind::module_& m);    // kernel.cpp: the instruction-level @pto.kernel API

// A Python int (or bool) as int64; one that does not fit is a TypeError naming it
// (nanobind::cast would throw a bare std::bad_cast).
inline int64_t to_int64(nanobind::handle h) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    throw nanobind::type_error(("the integer " + std::string(nanobind::repr(h).c_str()) + " does not fit in 64 bits").c_str());
  }
  return v;
}

// A list or tuple of Python ints as int64s (TypeError for anything else or a too large int).
inline std::vector<int64_t> to_int64_list(nanobind::handle h) {
  std::vector<int64_t> out;
  for (nanobind::handle item : h) {
    if (!PyLong_Check(item.ptr())) throw nanobind::type_error("expected a list of ints");
    out.push_back(to_int64(item));
  }
  return out;
}
}  // namespace pypto::bindings

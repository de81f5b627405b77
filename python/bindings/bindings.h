// The extension module pypto._core is assembled from one binding file per layer.
#pragma once
#include <nanobind/nanobind.h>

namespace pypto::bindings {
void bind_ir(nanobind::module_& m);        // ir.cpp: IR nodes, printer, structural equality
void bind_compiler(nanobind::module_& m);  // compiler.cpp: passes, codegen
void bind_runtime(nanobind::module_& m);   // runtime.cpp: tensors, engines, running programs
void bind_kernel(nanobind::module_& m);    // kernel.cpp: the instruction-level @pto.kernel API
}  // namespace pypto::bindings

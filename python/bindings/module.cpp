// Entry point of the extension module; each layer binds itself.
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "pypto/base/error.h"

NB_MODULE(_core, m) {
  m.doc() = "pypto C++ core: IR, passes, codegen, runtime";
  nanobind::exception<pypto::PyptoError>(m, "PyptoError");
  pypto::bindings::bind_ir(m);
  pypto::bindings::bind_compiler(m);
  pypto::bindings::bind_runtime(m);
  pypto::bindings::bind_kernel(m);
}

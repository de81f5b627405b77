#include "bindings.h"
namespace pypto::bindings {
void bind_compiler(nanobind::module_& m) {}
}  // namespace pypto::bindings

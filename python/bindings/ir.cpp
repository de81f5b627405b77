#include "bindings.h"
namespace pypto::bindings {
void bind_ir(nanobind::module_& m) {}
}  // namespace pypto::bindings

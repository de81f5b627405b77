#include "bindings.h"
namespace pypto::bindings {
void bind_runtime(nanobind::module_& m) {}
}  // namespace pypto::bindings

// Registers every op family of the language.
#include "pypto/ir/op_registry.h"

namespace pypto::ir {
void register_all_ops(OpRegistry& registry) {}
}  // namespace pypto::ir

// The call site an op's type rule sees: arguments and attributes by parameter name.
#include "pypto/ir/op_def.h"

namespace pypto::ir {

ExprPtr CallSite::arg(const std::string& name) const {
  size_t k = 0;
  for (auto& p : op.params) {
    if (p.kind == ParamKind::kAttr) continue;
    if (p.name == name) return k < args.size() ? args[k] : nullptr;
    ++k;
  }
  PYPTO_CHECK(false, "op '" + op.name + "' has no argument '" + name + "'");
  return nullptr;
}

const AttrValue& CallSite::attr(const std::string& name) const {
  auto it = attrs.find(name);
  PYPTO_CHECK(it != attrs.end(), "op '" + op.name + "' has no attribute '" + name + "'");
  return it->second;
}

}  // namespace pypto::ir

// Def/use collection over statements.
#include "pypto/ir/var_uses.h"

namespace pypto::ir {
namespace {

class UseCollector : public IRVisitor {
 public:
  VarUses uses;

 protected:
  void visit_var(const VarPtr& v) override {
    if (uses.used_set.insert(v.get()).second) uses.used.push_back(v);
  }
  void visit_def(const VarPtr& v) override {
    if (uses.defined_set.insert(v.get()).second) uses.defined.push_back(v);
  }
};

}  // namespace

std::vector<VarPtr> VarUses::free_vars() const {
  std::vector<VarPtr> out;
  for (auto& v : used)
    if (!defined_set.count(v.get())) out.push_back(v);
  return out;
}

VarUses collect_var_uses(const StmtPtr& s) {
  UseCollector c;
  c.visit(s);
  return std::move(c.uses);
}

}  // namespace pypto::ir

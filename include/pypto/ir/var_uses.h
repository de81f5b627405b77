// Which Vars a piece of IR defines and which it uses; the dataflow facts passes ask for.
#pragma once
#include <unordered_set>
#include <vector>

#include "pypto/ir/visitor.h"

namespace pypto::ir {

struct VarUses {
  std::vector<VarPtr> defined;  // in definition order
  std::vector<VarPtr> used;     // in first-use order, each once
  std::unordered_set<const Var*> defined_set, used_set;
  // Vars used but not defined inside, in first-use order.
  std::vector<VarPtr> free_vars() const;
};

VarUses collect_var_uses(const StmtPtr& s);

}  // namespace pypto::ir

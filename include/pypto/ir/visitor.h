// One visitor and one mutator base class do all IR traversal (as in Halide).
// The visitor walks every node; the mutator rebuilds a node only when a child changed.
#pragma once
#include <functional>
#include <unordered_map>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const ExprPtr& e);
  virtual void visit(const StmtPtr& s);
  void visit_function(const Function& f);
  friend struct IRVisitorAccess;  // the generated default visits (visitor.cpp)

 protected:
  // One hook per node of the list (nodes.def): visit_<hook>(const Node&), whose default
  // visits the node's fields in list order (child expressions and statements, task info;
  // defined Vars through visit_def). Types' shape expressions are not visited.
  virtual void visit_var(const VarPtr& v) {}
#define PYPTO_X(Kind, Class, hook) virtual void visit_##hook(const Class& n);
  PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
  PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
  void visit_task(const TaskInfo& t);  // the expressions of a launch's task info
  // Called for every Var a statement defines (assign targets, loop vars, iter args, return vars).
  // A while loop's iter args are defined before its condition is visited.
  virtual void visit_def(const VarPtr& v) {}
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual ExprPtr mutate(const ExprPtr& e);
  virtual StmtPtr mutate(const StmtPtr& s);
  // The function with its body (and parameters, through mutate_def) mutated.
  FunctionPtr mutate_function(const FunctionPtr& f);

 protected:
  // One hook per node of the list (nodes.def): mutate_<hook>(node). The defaults mutate the
  // node's fields in list order and rebuild the node through its make() only when one
  // changed (a Call gets the type its op's type rule infers for the new arguments).
  // Var uses are replaced by what `mutate_def` returned for their definition.
#define PYPTO_X(Kind, Class, hook) virtual ExprPtr mutate_##hook(const std::shared_ptr<const Class>& n);
  PYPTO_EXPR_NODES(PYPTO_X)
#undef PYPTO_X
#define PYPTO_X(Kind, Class, hook) virtual StmtPtr mutate_##hook(const std::shared_ptr<const Class>& n);
  PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
  // A defining occurrence; the default keeps the Var. Overrides return a replacement Var,
  // which every later use then refers to.
  virtual VarPtr mutate_def(const VarPtr& v) { return v; }
  // mutate_seq for passes that replace one statement by several: a statement `x` whose
  // result is a SeqStmts and for which splice(x) holds contributes that sequence's statements
  // to `s` itself (one flat list, as the printer writes it and the parser reads it back).
  StmtPtr mutate_seq_spliced(const std::shared_ptr<const SeqStmts>& s, const std::function<bool(const StmtPtr&)>& splice);

  VarPtr define(const VarPtr& v);  // applies mutate_def once and records the replacement
  std::vector<ExprPtr> mutate_all(const std::vector<ExprPtr>& es, bool* changed);
  TaskInfo mutate_task(const TaskInfo& t, bool* changed);
  std::unordered_map<const Var*, VarPtr> replaced_;

 private:
  // The default mutation of one field, by its kind in the node list (nodes.def).
  template <typename T>
  const T& mutate_field_attr(const T& x, bool*) { return x; }
  double mutate_field_float(double x, bool*) { return x; }
  const OpDef* mutate_field_op(const OpDef* x, bool*) { return x; }
  const Attrs& mutate_field_attrs(const Attrs& x, bool*) { return x; }
  const std::vector<VarPtr>& mutate_field_extra(const std::vector<VarPtr>& x, bool*) { return x; }
  ExprPtr mutate_field_expr(const ExprPtr& x, bool* changed);
  std::vector<ExprPtr> mutate_field_exprs(const std::vector<ExprPtr>& x, bool* changed) { return mutate_all(x, changed); }
  VarPtr mutate_field_def(const VarPtr& x, bool* changed);
  std::vector<VarPtr> mutate_field_defs(const std::vector<VarPtr>& x, bool* changed);
  StmtPtr mutate_field_stmt(const StmtPtr& x, bool* changed);
  std::vector<StmtPtr> mutate_field_stmts(const std::vector<StmtPtr>& x, bool* changed);
  TaskInfo mutate_field_task(const TaskInfo& x, bool* changed) { return mutate_task(x, changed); }
};

// `e` with uses of the Vars in `values` replaced (calls rebuilt with their types inferred again).
ExprPtr substitute(const ExprPtr& e, const std::unordered_map<const Var*, ExprPtr>& values);

}  // namespace pypto::ir

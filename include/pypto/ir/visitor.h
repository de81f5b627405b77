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

 protected:
  // Defaults visit children. Types' shape expressions are not visited.
  virtual void visit_var(const VarPtr& v) {}
  virtual void visit_call(const Call& c);
  virtual void visit_func_call(const FuncCall& c);
  virtual void visit_assign(const AssignStmt& s);
  virtual void visit_eval(const EvalStmt& s);
  virtual void visit_for(const ForStmt& s);
  virtual void visit_while(const WhileStmt& s);
  virtual void visit_if(const IfStmt& s);
  virtual void visit_yield(const YieldStmt& s);
  virtual void visit_return(const ReturnStmt& s);
  virtual void visit_seq(const SeqStmts& s);
  virtual void visit_scope(const ScopeStmt& s);
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
  // Var uses are replaced by what `mutate_def` returned for their definition.
  virtual ExprPtr mutate_var(const VarPtr& v);
  // A defining occurrence; the default keeps the Var. Overrides return a replacement Var,
  // which every later use then refers to.
  virtual VarPtr mutate_def(const VarPtr& v) { return v; }
  virtual ExprPtr mutate_call(const std::shared_ptr<const Call>& c);
  virtual ExprPtr mutate_func_call(const std::shared_ptr<const FuncCall>& c);
  virtual StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s);
  virtual StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s);
  virtual StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s);
  virtual StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s);
  virtual StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s);
  virtual StmtPtr mutate_yield(const std::shared_ptr<const YieldStmt>& s);
  virtual StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s);
  virtual StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s);
  // mutate_seq for passes that replace one statement by several: a statement `x` whose
  // result is a SeqStmts and for which splice(x) holds contributes that sequence's statements
  // to `s` itself (one flat list, as the printer writes it and the parser reads it back).
  StmtPtr mutate_seq_spliced(const std::shared_ptr<const SeqStmts>& s, const std::function<bool(const StmtPtr&)>& splice);
  virtual StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s);

  VarPtr define(const VarPtr& v);  // applies mutate_def once and records the replacement
  std::vector<ExprPtr> mutate_all(const std::vector<ExprPtr>& es, bool* changed);
  TaskInfo mutate_task(const TaskInfo& t, bool* changed);
  std::unordered_map<const Var*, VarPtr> replaced_;
};

}  // namespace pypto::ir

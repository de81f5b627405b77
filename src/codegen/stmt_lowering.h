// Lowering of statements (assignments, loops with carried values, branches, yields,
// returns) into an instruction stream. Kernels and host programs share it; they differ
// only in the KernelBuilder they pass (tiles vs tensor slots, function calls).
#pragma once
#include <vector>

#include "pypto/ops/kernel_builder.h"

namespace pypto::codegen {

class StmtLowering {
 public:
  explicit StmtLowering(ops::KernelBuilder& kb) : kb_(kb) {}
  void lower(const ir::StmtPtr& stmt);
  // The values of the function's ReturnStmt (empty when it returns nothing).
  const std::vector<ir::ExprPtr>& returned() const { return returned_; }

 private:
  // Where a loop-carried or branch-joined value lives: a tile slot, a register or a tensor slot.
  struct Carried {
    enum Kind { kTile, kScalar, kTensor, kArray } kind = kScalar;
    int index = -1;          // tile slot, register, or tensor slot (-1: set by the first yield)
    const ir::Var* var = nullptr;  // the variable bound to a tensor slot on the first yield
  };

  void lower_assign(const ir::AssignStmt& s);
  void lower_eval(const ir::EvalStmt& s);
  void lower_for(const ir::ForStmt& s);
  void lower_while(const ir::WhileStmt& s);
  // Binds a finished loop's return vars to the homes of its carried values.
  void bind_results(const std::vector<ir::VarPtr>& return_vars, std::vector<Carried>& carried);
  void lower_if(const ir::IfStmt& s);
  void lower_yield(const ir::YieldStmt& s);
  void lower_return(const ir::ReturnStmt& s);
  void lower_seq(const ir::SeqStmts& s);
  void lower_scope(const ir::ScopeStmt& s);
  Carried carry(const ir::VarPtr& var, const ir::ExprPtr& init);
  void copy_into(Carried& target, const ir::ExprPtr& value);
  void copy_tile(int dst, int src);

  ops::KernelBuilder& kb_;
  std::vector<std::vector<Carried>*> yield_targets_;
  std::vector<ir::ExprPtr> returned_;
};

}  // namespace pypto::codegen

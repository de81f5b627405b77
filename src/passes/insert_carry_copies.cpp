// InsertCarryCopies: a loop-carried tile shares one buffer address with the value yielded for
// it. When the body still reads the carried tile after that value is computed (`m = new_max`
// after `alpha = exp(m - new_max)`), sharing would clobber it; a copy just before the yield fixes it.
#include "pypto/ir/op_registry.h"
#include "pypto/ir/var_uses.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

class CarryCopier : public IRMutator {
 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    auto r = std::static_pointer_cast<const ForStmt>(IRMutator::mutate_for(s));
    StmtPtr body = copied_body(r->iter_args, r->body);
    if (!body) return r;
    return ForStmt::make(r->loop_var, r->start, r->stop, r->step, r->iter_args, r->init_values, body, r->return_vars,
                         r->for_kind, r->stages, r->span);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    auto r = std::static_pointer_cast<const WhileStmt>(IRMutator::mutate_while(s));
    StmtPtr body = copied_body(r->iter_args, r->body);
    if (!body) return r;
    return WhileStmt::make(r->iter_args, r->init_values, r->cond, body, r->return_vars, r->span);
  }

 private:
  // The loop body with a copy before its trailing yield for every carried tile that needs
  // one; null when none does.
  static StmtPtr copied_body(const std::vector<VarPtr>& iter_args, const StmtPtr& body) {
    auto* seq = body->as<SeqStmts>();
    if (!seq || seq->stmts.empty()) return nullptr;
    auto* y = seq->stmts.back()->as<YieldStmt>();
    if (!y) return nullptr;
    std::vector<StmtPtr> stmts(seq->stmts.begin(), seq->stmts.end() - 1);
    std::vector<ExprPtr> values = y->values;
    bool changed = false;
    for (size_t i = 0; i < iter_args.size() && i < values.size(); ++i) {
      auto* tile = iter_args[i]->type->as<TileType>();
      auto* yv = values[i]->as<Var>();
      if (!tile || !yv || yv == iter_args[i].get()) continue;
      if (!needs_copy(stmts, iter_args[i].get(), yv)) continue;
      auto* ytile = values[i]->type->as<TileType>();
      if (!ytile || (ytile->memory != MemorySpace::Vec && ytile->memory != MemorySpace::Mat))
        fail(ErrorKind::kType, y->span,
             "loop-carried tile '" + iter_args[i]->name + "' is read after its next value '" + yv->name +
                 "' is computed, and " + memory_space_name(ytile ? ytile->memory : tile->memory) +
                 " tiles cannot be copied on chip to keep both",
             "compute the next value of '" + iter_args[i]->name + "' after its last use in the loop body");
      auto copy = Var::make(yv->name + "_carry", values[i]->type, y->span);
      stmts.push_back(AssignStmt::make(
          copy, make_op_call("tile.move", {values[i]}, {}, {{"target_memory", ytile->memory}}, y->span), y->span));
      values[i] = copy;
      changed = true;
    }
    if (!changed) return nullptr;
    stmts.push_back(YieldStmt::make(values, y->span));
    return SeqStmts::make(stmts, seq->span);
  }

  // True when `carried` is read by a statement after the one defining `next`, or `next` is
  // not defined in this body at all (another carried value, or a value from outside the loop).
  static bool needs_copy(const std::vector<StmtPtr>& stmts, const Var* carried, const Var* next) {
    size_t def = stmts.size();
    for (size_t k = 0; k < stmts.size() && def == stmts.size(); ++k)
      if (collect_var_uses(stmts[k]).defined_set.count(next)) def = k;
    if (def == stmts.size()) return true;
    for (size_t k = def + 1; k < stmts.size(); ++k)
      if (collect_var_uses(stmts[k]).used_set.count(carried)) return true;
    // Defined and the carried value read by the same statement (e.g. inside a nested loop).
    VarUses at_def = collect_var_uses(stmts[def]);
    return !stmts[def]->as<AssignStmt>() && at_def.used_set.count(carried);
  }
};

bool is_kernel(const Function& f) {
  return f.func_type == FunctionType::InCore || f.func_type == FunctionType::AIC || f.func_type == FunctionType::AIV;
}

}  // namespace

ProgramPtr insert_carry_copies(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    functions.push_back(is_kernel(*f) ? CarryCopier().mutate_function(f) : f);
    changed |= functions.back() != f;
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes

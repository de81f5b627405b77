// Copies of a loop body, shared by the passes that replicate loop bodies (Unroll,
// PipelineLoops). Internal to src/passes.
#pragma once
#include <vector>

#include "pypto/ir/visitor.h"

namespace pypto::passes {
using namespace ir;

// Appends the statements of `s` to `out`, flattening nested sequences.
inline void splice(const StmtPtr& s, std::vector<StmtPtr>& out);

// One copy of a loop body: given values replace the loop variable and iter args; every Var
// the body defines is a fresh Var (so each copy defines its own SSA values).
class BodyCopy : public IRMutator {
 public:
  std::unordered_map<const Var*, ExprPtr> values;

  // Integer arithmetic on the substituted constant folds at once (`0 * 32` -> 0), as the
  // parser folds constants, so the printed copy parses back to the same program.
  ExprPtr mutate(const ExprPtr& e) override {
    ExprPtr r = IRMutator::mutate(e);
    auto* b = r && r != e ? r->as<BinaryExpr>() : nullptr;
    if (!b) return r;
    auto x = as_const_int(b->a), y = as_const_int(b->b);
    auto* st = r->type->as<ScalarType>();
    if (x && y && st && st->dtype == DataType::BOOL) {  // comparisons of constants
      switch (b->op) {
        case BinaryOp::Eq: return ConstBool::make(*x == *y, b->span);
        case BinaryOp::Ne: return ConstBool::make(*x != *y, b->span);
        case BinaryOp::Lt: return ConstBool::make(*x < *y, b->span);
        case BinaryOp::Le: return ConstBool::make(*x <= *y, b->span);
        case BinaryOp::Gt: return ConstBool::make(*x > *y, b->span);
        case BinaryOp::Ge: return ConstBool::make(*x >= *y, b->span);
        default: return r;
      }
    }
    if (!x || !y || !st || dtype_is_float(st->dtype) || st->dtype == DataType::BOOL) return r;
    switch (b->op) {
      case BinaryOp::Add: return ConstInt::make(*x + *y, st->dtype, b->span);
      case BinaryOp::Sub: return ConstInt::make(*x - *y, st->dtype, b->span);
      case BinaryOp::Mul: return ConstInt::make(*x * *y, st->dtype, b->span);
      case BinaryOp::Min: return ConstInt::make(std::min(*x, *y), st->dtype, b->span);
      case BinaryOp::Max: return ConstInt::make(std::max(*x, *y), st->dtype, b->span);
      default: return r;
    }
  }
  using IRMutator::mutate;

 protected:
  // A branch whose condition became a constant keeps only the arm taken (as the parser
  // does for a constant condition); the branch's results are that arm's yields.
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    ExprPtr cond = mutate(s->cond);
    auto* c = cond->as<ConstBool>();
    if (!c) return IRMutator::mutate_if(s);
    const StmtPtr& arm = c->value ? s->then_body : s->else_body;
    std::vector<StmtPtr> out;
    if (arm) splice(mutate(arm), out);
    if (!out.empty() && out.back()->as<YieldStmt>()) {
      const auto& vals = out.back()->as<YieldStmt>()->values;
      for (size_t i = 0; i < s->return_vars.size() && i < vals.size(); ++i) values[s->return_vars[i].get()] = vals[i];
      out.pop_back();
    }
    return SeqStmts::make(out, s->span);
  }

  ExprPtr mutate_var(const VarPtr& v) override {
    auto it = values.find(v.get());
    return it != values.end() ? it->second : IRMutator::mutate_var(v);
  }
  VarPtr mutate_def(const VarPtr& v) override { return Var::make(v->name, copy_type(v->type), v->span); }

 private:
  // Valid shapes and dynamic dims may name the loop variable or values of the body.
  TypePtr copy_type(const TypePtr& t) {
    auto exprs = [&](const std::vector<ExprPtr>& es, bool* changed) {
      std::vector<ExprPtr> out;
      for (auto& e : es) {
        out.push_back(mutate(e));
        *changed |= out.back() != e;
      }
      return out;
    };
    bool changed = false;
    if (auto* tile = t->as<TileType>()) {
      auto valid = exprs(tile->valid_shape, &changed);
      return changed ? TileType::make(tile->shape, tile->dtype, tile->memory, valid, tile->pad, tile->addr) : t;
    }
    if (auto* tensor = t->as<TensorType>()) {
      auto shape = exprs(tensor->shape, &changed);
      return changed ? std::make_shared<TensorType>(shape, tensor->dtype, tensor->stride, tensor->dn) : t;
    }
    if (auto* tuple = t->as<TupleType>()) {  // the tiles of a multi-result op
      std::vector<TypePtr> elems;
      for (auto& e : tuple->elems) {
        elems.push_back(copy_type(e));
        changed |= elems.back() != e;
      }
      return changed ? TupleType::make(elems) : t;
    }
    return t;
  }
};

// A mutator whose rewritten sequences are flat: a statement replaced by a sequence (a loop
// by its copies) is spliced into the enclosing one.
class SplicingMutator : public IRMutator {
 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    auto r = IRMutator::mutate_seq(s);
    if (r == s) return r;
    std::vector<StmtPtr> out;
    splice(r, out);
    return SeqStmts::make(out, s->span);
  }
};

inline void splice(const StmtPtr& s, std::vector<StmtPtr>& out) {
  if (auto* seq = s->as<SeqStmts>())
    for (auto& x : seq->stmts) splice(x, out);
  else
    out.push_back(s);
}

}  // namespace pypto::passes

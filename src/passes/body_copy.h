// Copies of a loop body, shared by the passes that replicate loop bodies (Unroll,
// PipelineLoops). Internal to src/passes.
#pragma once
#include <vector>

#include "pypto/ir/visitor.h"

namespace pypto::passes {
using namespace ir;

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
      return changed ? TensorType::make(shape, tensor->dtype) : t;
    }
    return t;
  }
};

// Appends the statements of `s` to `out`, flattening nested sequences.
inline void splice(const StmtPtr& s, std::vector<StmtPtr>& out);

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

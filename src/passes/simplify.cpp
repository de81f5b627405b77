// Simplify: folds scalar arithmetic on constants (`0 * 64 + 16` -> 16, `4 < 8` -> True), drops
// `x + 0` and `x * 1`, and removes assignments of pure values nobody uses (repeatedly, so
// chains of dead values go too). Writes and kernel calls are never removed.
#include <cmath>
#include <unordered_set>

#include "pypto/ops/op_registry.h"
#include "pypto/base/scalar_ops.h"

#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

std::optional<double> as_const_float(const ExprPtr& e) {
  if (auto* f = e->as<ConstFloat>()) return f->value;
  return std::nullopt;
}

// A constant zero divisor in code that runs: Python raises ZeroDivisionError, so this is a
// compile error at the user's line (base/scalar_ops.h; at run time the engines raise).
[[noreturn]] void zero_divisor(BinaryOp op, bool is_float, const Span& sp) {
  const char* what = op == BinaryOp::Mod ? "modulo" : "division";
  fail(ErrorKind::kValue, sp,
       std::string(is_float ? "float " : "integer ") + what + " by zero: the divisor of '" + binary_op_symbol(op) +
           "' is the constant " + (is_float ? "0.0" : "0"),
       "guard the divisor, or change the constant that makes it zero");
}

ExprPtr fold_int(BinaryOp op, int64_t a, int64_t b, DataType dt, const Span& sp) {
  long long r = 0;
  switch (op) {
    // An overflowing result stays unfolded: the run reports it at its line (base/scalar_ops.h).
    case BinaryOp::Add: return scalar::add_overflows(a, b, &r) ? nullptr : ConstInt::make(r, dt, sp);
    case BinaryOp::Sub: return scalar::sub_overflows(a, b, &r) ? nullptr : ConstInt::make(r, dt, sp);
    case BinaryOp::Mul: return scalar::mul_overflows(a, b, &r) ? nullptr : ConstInt::make(r, dt, sp);
    case BinaryOp::FloorDiv: return ConstInt::make(scalar::int_floor_div(a, b), dt, sp);
    case BinaryOp::Mod: return ConstInt::make(scalar::int_floor_mod(a, b), dt, sp);
    case BinaryOp::Min: return ConstInt::make(std::min(a, b), dt, sp);
    case BinaryOp::Max: return ConstInt::make(std::max(a, b), dt, sp);
    case BinaryOp::Eq: return ConstBool::make(a == b, sp);
    case BinaryOp::Ne: return ConstBool::make(a != b, sp);
    case BinaryOp::Lt: return ConstBool::make(a < b, sp);
    case BinaryOp::Le: return ConstBool::make(a <= b, sp);
    case BinaryOp::Gt: return ConstBool::make(a > b, sp);
    case BinaryOp::Ge: return ConstBool::make(a >= b, sp);
    default: return nullptr;  // Div gives a float; And/Or take bools
  }
}

ExprPtr fold_float(BinaryOp op, double a, double b, DataType dt, const Span& sp) {
  switch (op) {
    case BinaryOp::Add: return ConstFloat::make(a + b, dt, sp);
    case BinaryOp::Sub: return ConstFloat::make(a - b, dt, sp);
    case BinaryOp::Mul: return ConstFloat::make(a * b, dt, sp);
    case BinaryOp::Div: return ConstFloat::make(a / b, dt, sp);
    case BinaryOp::FloorDiv: return ConstFloat::make(scalar::float_floor_div(a, b), dt, sp);
    case BinaryOp::Mod: return ConstFloat::make(scalar::float_mod(a, b), dt, sp);
    case BinaryOp::Min: return ConstFloat::make(std::min(a, b), dt, sp);
    case BinaryOp::Max: return ConstFloat::make(std::max(a, b), dt, sp);
    case BinaryOp::Lt: return ConstBool::make(a < b, sp);
    case BinaryOp::Le: return ConstBool::make(a <= b, sp);
    case BinaryOp::Gt: return ConstBool::make(a > b, sp);
    case BinaryOp::Ge: return ConstBool::make(a >= b, sp);
    default: return nullptr;
  }
}

class Folder : public IRMutator {
 public:
  explicit Folder(const isa::ChipSpec& chip) : chip_(chip) {}
  ExprPtr mutate(const ExprPtr& e) override {
    ExprPtr r = IRMutator::mutate(e);
    if (!r) return r;
    if (auto* b = r->as<BinaryExpr>()) return fold(*b, r);
    if (auto* c = r->as<Call>()) {  // pl.system.available_*_count(): numbers of the chip compiled for
      if (c->op->name == "system.available_aiv_count") return ConstInt::make(chip_.aiv_cores, DataType::INDEX, c->span);
      if (c->op->name == "system.available_cluster_count") return ConstInt::make(chip_.clusters, DataType::INDEX, c->span);
    }
    if (auto* u = r->as<UnaryExpr>()) {
      if (u->op == UnaryOp::Not)
        if (auto* c = u->a->as<ConstBool>()) return ConstBool::make(!c->value, u->span);
      if (u->op == UnaryOp::Neg) {
        if (auto* c = u->a->as<ConstInt>())
          return ConstInt::make(scalar::wrap_neg(c->value), c->type->as<ScalarType>()->dtype, u->span);
        if (auto* c = u->a->as<ConstFloat>()) return ConstFloat::make(-c->value, c->type->as<ScalarType>()->dtype, u->span);
      }
    }
    return r;
  }
  using IRMutator::mutate;

 protected:
  const isa::ChipSpec& chip_;
  // Valid shapes in tile types fold like the call arguments they came from.
  VarPtr mutate_def(const VarPtr& v) override {
    auto* t = v->type->as<TileType>();
    if (!t || t->valid_shape.empty()) return v;
    bool changed = false;
    std::vector<ExprPtr> valid = mutate_all(t->valid_shape, &changed);
    if (!changed) return v;
    return Var::make(v->name, TileType::make(t->shape, t->dtype, t->memory, valid, t->pad, t->addr), v->span);
  }

 private:
  // Branches whose condition folds to a constant false never run: a zero divisor there is
  // no error (as in Python).
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    ExprPtr cond = mutate(s->cond);
    auto* c = cond ? cond->as<ConstBool>() : nullptr;
    const int saved = dead_;
    if (c && !c->value) ++dead_;
    StmtPtr then_body = mutate(s->then_body);
    dead_ = saved;
    if (c && c->value) ++dead_;
    StmtPtr else_body = mutate(s->else_body);
    dead_ = saved;
    bool changed = cond != s->cond || then_body != s->then_body || else_body != s->else_body;
    std::vector<VarPtr> return_vars;
    for (auto& v : s->return_vars) {
      return_vars.push_back(define(v));
      changed |= return_vars.back() != v;
    }
    if (!changed) return s;
    return IfStmt::make(cond, then_body, else_body, return_vars, s->span);
  }
  int dead_ = 0;

  ExprPtr fold(const BinaryExpr& b, const ExprPtr& self) const {
    DataType dt = self->type->as<ScalarType>()->dtype;
    auto ia = as_const_int(b.a), ib = as_const_int(b.b);
    if (b.op == BinaryOp::Div || b.op == BinaryOp::FloorDiv || b.op == BinaryOp::Mod) {
      auto fz = as_const_float(b.b);
      if ((ib && *ib == 0) || (fz && *fz == 0)) {
        if (dead_) return self;
        zero_divisor(b.op, fz || dtype_is_float(dt), b.span);
      }
    }
    if (ia && ib && !dtype_is_float(dt) && dt != DataType::BOOL)
      if (auto f = fold_int(b.op, *ia, *ib, dt, b.span)) return f;
    auto fa = as_const_float(b.a), fb = as_const_float(b.b);
    if (dtype_is_float(dt) && (fa || ia) && (fb || ib)) {
      double x = fa ? *fa : static_cast<double>(*ia), y = fb ? *fb : static_cast<double>(*ib);
      if (auto f = fold_float(b.op, x, y, dt, b.span)) return f;
    }
    if (auto* ca = b.a->as<ConstBool>(); ca && b.b->as<ConstBool>()) {
      bool y = b.b->as<ConstBool>()->value;
      if (b.op == BinaryOp::And) return ConstBool::make(ca->value && y, b.span);
      if (b.op == BinaryOp::Or) return ConstBool::make(ca->value || y, b.span);
    }
    // Identities on integers, where the other operand already has the result's type.
    auto same_type = [&](const ExprPtr& x) {
      auto* st = x->type->as<ScalarType>();
      return st && st->dtype == dt && !dtype_is_float(dt);
    };
    if ((b.op == BinaryOp::Add || b.op == BinaryOp::Sub) && ib && *ib == 0 && same_type(b.a)) return b.a;
    if (b.op == BinaryOp::Add && ia && *ia == 0 && same_type(b.b)) return b.b;
    if ((b.op == BinaryOp::Mul || b.op == BinaryOp::FloorDiv) && ib && *ib == 1 && same_type(b.a)) return b.a;
    if (b.op == BinaryOp::Mul && ia && *ia == 1 && same_type(b.b)) return b.b;
    return self;
  }
};

// Every Var used anywhere, including in the types of defined values (valid shapes, dims).
class UseCounter : public IRVisitor {
 public:
  std::unordered_set<const Var*> used;

 protected:
  void visit_var(const VarPtr& v) override { used.insert(v.get()); }
  void visit_def(const VarPtr& v) override {
    auto exprs = [&](const std::vector<ExprPtr>& es) {
      for (auto& e : es)
        if (e) visit(e);
    };
    if (auto* t = v->type->as<TileType>()) exprs(t->valid_shape), exprs(t->shape);
    if (auto* t = v->type->as<TensorType>()) exprs(t->shape);
    if (auto* t = v->type->as<TupleType>())  // the tiles of a multi-result op
      for (auto& e : t->elems)
        if (auto* tile = e->as<TileType>()) exprs(tile->valid_shape), exprs(tile->shape);
  }
};

bool pure(const ExprPtr& e) {
  if (auto* c = e->as<Call>()) {
    if (!c->op->writes.empty() || c->op->effects) return false;
    for (auto& a : c->args)
      if (a && !pure(a)) return false;
    return true;
  }
  if (e->as<FuncCall>()) return false;
  if (auto* b = e->as<BinaryExpr>()) return pure(b->a) && pure(b->b);
  if (auto* u = e->as<UnaryExpr>()) return pure(u->a);
  if (auto* c = e->as<CastExpr>()) return pure(c->a);
  return true;
}

class DeadAssignments : public IRMutator {
 public:
  explicit DeadAssignments(const std::unordered_set<const Var*>& used) : used_(used) {}
  bool removed = false;

 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    std::vector<StmtPtr> out;
    bool changed = false;
    for (auto& st : s->stmts) {
      if (auto* a = st->as<AssignStmt>(); a && !used_.count(a->var.get()) && pure(a->value)) {
        changed = removed = true;
        continue;
      }
      out.push_back(mutate(st));
      changed |= out.back() != st;
    }
    return changed ? SeqStmts::make(out, s->span) : s;
  }

 private:
  const std::unordered_set<const Var*>& used_;
};

}  // namespace

ExprPtr simplify_expr(const ExprPtr& expr, const isa::ChipSpec& chip) { return Folder(chip).mutate(expr); }

ProgramPtr simplify(const ProgramPtr& program, const PassContext& ctx) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    FunctionPtr g = Folder(ctx.chip).mutate_function(f);
    for (;;) {
      UseCounter uses;
      uses.visit_function(*g);
      for (auto& p : g->params) uses.used.insert(p.get());
      DeadAssignments dead(uses.used);
      FunctionPtr h = dead.mutate_function(g);
      if (!dead.removed) break;
      g = h;
    }
    functions.push_back(g);
    changed |= g != f;
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes

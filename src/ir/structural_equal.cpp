// Structural equality and hashing modulo variable identity. Variables correspond when they
// are defined at the same position (parameter, assignment, loop variable, iter_arg, return
// variable); the correspondence must be one to one. Spans never take part.
#include "pypto/ir/structural_equal.h"

#include <functional>
#include <unordered_map>
#include <vector>

#include "pypto/ir/op_def.h"

namespace pypto::ir {
namespace {

// The statements of a SeqStmts with nested SeqStmts spliced in (see the Seq cases below).
void flatten_seq(const StmtPtr& s, std::vector<StmtPtr>* out) {
  if (auto* q = s->as<SeqStmts>()) {
    for (auto& x : q->stmts) flatten_seq(x, out);
  } else {
    out->push_back(s);
  }
}

class Equal {
 public:
  // Defines or checks the correspondence of two variables; a free variable is mapped on first use.
  bool var(const Var* a, const Var* b) {
    auto ia = fwd_.find(a);
    auto ib = bwd_.find(b);
    if (ia != fwd_.end() || ib != bwd_.end()) return ia != fwd_.end() && ib != bwd_.end() && ia->second == b;
    if (!type(a->type, b->type)) return false;
    fwd_[a] = b;
    bwd_[b] = a;
    return true;
  }

  // Task ids are names: equal programs may number their launches differently, so ids are
  // matched one-to-one as they are met (like Vars).
  bool task_id(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return a == b;
    auto ia = task_fwd_.find(a);
    auto ib = task_bwd_.find(b);
    if (ia != task_fwd_.end() || ib != task_bwd_.end())
      return ia != task_fwd_.end() && ib != task_bwd_.end() && ia->second == b;
    task_fwd_[a] = b;
    task_bwd_[b] = a;
    return true;
  }

  bool task(const TaskInfo& a, const TaskInfo& b) {
    if (a.block_num != b.block_num || a.manual != b.manual || a.deps.size() != b.deps.size()) return false;
    if (!task_id(a.task_id, b.task_id)) return false;
    for (size_t i = 0; i < a.deps.size(); ++i)
      if (!task_id(a.deps[i], b.deps[i])) return false;
    if (a.sync_start != b.sync_start || a.name_hint != b.name_hint || a.role != b.role || a.split != b.split ||
        a.split_slot_num != b.split_slot_num || a.slot_num != b.slot_num ||
        a.allow_early_resolve != b.allow_early_resolve || a.windowize != b.windowize)
      return false;
    if (!opt_expr(a.core_num, b.core_num) || !opt_expr(a.predicate, b.predicate)) return false;
    return exprs(a.dyn_deps, b.dyn_deps) && exprs(a.no_dep_args, b.no_dep_args) && exprs(a.dumps, b.dumps);
  }
  bool opt_expr(const ExprPtr& a, const ExprPtr& b) { return (!a && !b) || (a && b && expr(a, b)); }

  bool vars(const std::vector<VarPtr>& a, const std::vector<VarPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!var(a[i].get(), b[i].get())) return false;
    return true;
  }

  bool exprs(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!expr(a[i], b[i])) return false;
    return true;
  }

  bool types(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!type(a[i], b[i])) return false;
    return true;
  }

  bool type(const TypePtr& a, const TypePtr& b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case TypeKind::Scalar: return a->as<ScalarType>()->dtype == b->as<ScalarType>()->dtype;
      case TypeKind::Tensor: {
        auto *x = a->as<TensorType>(), *y = b->as<TensorType>();
        return x->dtype == y->dtype && exprs(x->shape, y->shape);
      }
      case TypeKind::Tile: {
        auto *x = a->as<TileType>(), *y = b->as<TileType>();
        return x->dtype == y->dtype && x->memory == y->memory && x->pad == y->pad && x->addr == y->addr &&
               exprs(x->shape, y->shape) && exprs(x->valid_shape, y->valid_shape);
      }
      case TypeKind::Tuple: return types(a->as<TupleType>()->elems, b->as<TupleType>()->elems);
      case TypeKind::None: return true;
      case TypeKind::Array: {
        auto *x = a->as<ArrayType>(), *y = b->as<ArrayType>();
        return x->size == y->size && x->dtype == y->dtype;
      }
    }
    return false;
  }

  bool expr(const ExprPtr& a, const ExprPtr& b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    if (a->kind == ExprKind::Var) return var(a->as<Var>(), b->as<Var>());
    if (!type(a->type, b->type)) return false;
    switch (a->kind) {
      case ExprKind::ConstInt: return a->as<ConstInt>()->value == b->as<ConstInt>()->value;
      case ExprKind::ConstFloat: {
        double x = a->as<ConstFloat>()->value, y = b->as<ConstFloat>()->value;
        return x == y || (x != x && y != y);
      }
      case ExprKind::ConstBool: return a->as<ConstBool>()->value == b->as<ConstBool>()->value;
      case ExprKind::Binary: {
        auto *x = a->as<BinaryExpr>(), *y = b->as<BinaryExpr>();
        return x->op == y->op && expr(x->a, y->a) && expr(x->b, y->b);
      }
      case ExprKind::Unary: {
        auto *x = a->as<UnaryExpr>(), *y = b->as<UnaryExpr>();
        return x->op == y->op && expr(x->a, y->a);
      }
      case ExprKind::Cast: return expr(a->as<CastExpr>()->a, b->as<CastExpr>()->a);  // the dtype is in the type
      case ExprKind::Call: {
        auto *x = a->as<Call>(), *y = b->as<Call>();
        if (x->op == y->op && x->op->name == "task.latest")  // a task id names a launch (see task_id)
          return task_id(std::get<int64_t>(x->attrs.at("task_id")), std::get<int64_t>(y->attrs.at("task_id")));
        return x->op == y->op && x->attrs == y->attrs && exprs(x->args, y->args);
      }
      case ExprKind::FuncCall: {
        auto *x = a->as<FuncCall>(), *y = b->as<FuncCall>();
        return x->callee == y->callee && task(x->task, y->task) && exprs(x->args, y->args);
      }
      case ExprKind::List: return exprs(a->as<ListExpr>()->elems, b->as<ListExpr>()->elems);
      case ExprKind::TupleGet: {
        auto *x = a->as<TupleGetItem>(), *y = b->as<TupleGetItem>();
        return x->index == y->index && expr(x->tuple, y->tuple);
      }
      default: return false;
    }
  }

  bool stmt(const StmtPtr& a, const StmtPtr& b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case StmtKind::Assign: {
        auto *x = a->as<AssignStmt>(), *y = b->as<AssignStmt>();
        return expr(x->value, y->value) && var(x->var.get(), y->var.get());
      }
      case StmtKind::Eval: return expr(a->as<EvalStmt>()->expr, b->as<EvalStmt>()->expr);
      case StmtKind::Yield: return exprs(a->as<YieldStmt>()->values, b->as<YieldStmt>()->values);
      case StmtKind::Return: return exprs(a->as<ReturnStmt>()->values, b->as<ReturnStmt>()->values);
      case StmtKind::Seq: {
        // A SeqStmts inside a SeqStmts is its statements in place: the printer writes both the
        // same way, so the grouping is not part of the structure.
        std::vector<StmtPtr> x, y;
        flatten_seq(a, &x);
        flatten_seq(b, &y);
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
          if (!stmt(x[i], y[i])) return false;
        return true;
      }
      case StmtKind::Scope: {
        auto *x = a->as<ScopeStmt>(), *y = b->as<ScopeStmt>();
        return x->level == y->level && task(x->task, y->task) && stmt(x->body, y->body);
      }
      case StmtKind::For: {
        auto *x = a->as<ForStmt>(), *y = b->as<ForStmt>();
        return x->for_kind == y->for_kind && x->stages == y->stages && x->attrs == y->attrs && expr(x->start, y->start) &&
               expr(x->stop, y->stop) && expr(x->step, y->step) && exprs(x->init_values, y->init_values) &&
               var(x->loop_var.get(), y->loop_var.get()) && vars(x->iter_args, y->iter_args) && stmt(x->body, y->body) &&
               vars(x->return_vars, y->return_vars);
      }
      case StmtKind::While: {
        auto *x = a->as<WhileStmt>(), *y = b->as<WhileStmt>();
        return exprs(x->init_values, y->init_values) && vars(x->iter_args, y->iter_args) && expr(x->cond, y->cond) &&
               stmt(x->body, y->body) && vars(x->return_vars, y->return_vars);
      }
      case StmtKind::If: {
        auto *x = a->as<IfStmt>(), *y = b->as<IfStmt>();
        return expr(x->cond, y->cond) && vars(x->return_vars, y->return_vars) && stmt(x->then_body, y->then_body) &&
               stmt(x->else_body, y->else_body);
      }
    }
    return false;
  }

  bool function(const Function& a, const Function& b) {
    return a.name == b.name && a.func_type == b.func_type && a.level == b.level && a.role == b.role &&
           a.attrs == b.attrs && a.directions == b.directions && vars(a.params, b.params) &&
           types(a.return_types, b.return_types) && stmt(a.body, b.body);
  }

 private:
  std::unordered_map<const Var*, const Var*> fwd_, bwd_;
  std::unordered_map<int64_t, int64_t> task_fwd_, task_bwd_;
};

// Hashing mirrors Equal: variables hash by the order in which they are first met.
class Hasher {
 public:
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  void mix(uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
  void mix_str(const std::string& s) { mix(std::hash<std::string>()(s)); }

  void var(const Var* v) {
    auto it = ids_.find(v);
    if (it == ids_.end()) {
      ids_[v] = ids_.size();
      mix(0xabc);
      type(v->type);
    } else {
      mix(it->second);
    }
  }

  void type(const TypePtr& t) {
    if (!t) return mix(0);
    mix(static_cast<uint64_t>(t->kind) + 100);
    if (auto* s = t->as<ScalarType>()) mix(static_cast<uint64_t>(s->dtype));
    if (auto* s = t->as<TensorType>()) {
      mix(static_cast<uint64_t>(s->dtype));
      for (auto& e : s->shape) expr(e);
    }
    if (auto* s = t->as<TileType>()) {
      mix(static_cast<uint64_t>(s->dtype));
      mix(static_cast<uint64_t>(s->memory));
      mix(static_cast<uint64_t>(s->pad));
      mix(static_cast<uint64_t>(s->addr));
      for (auto& e : s->shape) expr(e);
      mix(s->valid_shape.size());
      for (auto& e : s->valid_shape) expr(e);
    }
    if (auto* s = t->as<TupleType>())
      for (auto& e : s->elems) type(e);
    if (auto* s = t->as<ArrayType>()) {
      mix(static_cast<uint64_t>(s->dtype));
      mix(static_cast<uint64_t>(s->size));
    }
  }

  void attr(const AttrValue& v) {
    mix(v.index());
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) mix_str(x);
          else if constexpr (std::is_same_v<T, double>) mix(std::hash<double>()(x));
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (auto i : x) mix(static_cast<uint64_t>(i));
          } else mix(static_cast<uint64_t>(x));
        },
        v);
  }

  void expr(const ExprPtr& e) {
    if (!e) return mix(1);
    mix(static_cast<uint64_t>(e->kind) + 200);
    if (auto* v = e->as<Var>()) return var(v);
    type(e->type);
    if (auto* c = e->as<ConstInt>()) mix(static_cast<uint64_t>(c->value));
    if (auto* c = e->as<ConstFloat>()) mix(std::hash<double>()(c->value));
    if (auto* c = e->as<ConstBool>()) mix(c->value);
    if (auto* b = e->as<BinaryExpr>()) {
      mix(static_cast<uint64_t>(b->op));
      expr(b->a);
      expr(b->b);
    }
    if (auto* u = e->as<UnaryExpr>()) {
      mix(static_cast<uint64_t>(u->op));
      expr(u->a);
    }
    if (auto* c = e->as<CastExpr>()) expr(c->a);
    if (auto* c = e->as<Call>()) {
      mix_str(c->op->name);
      for (auto& a : c->args) expr(a);
      for (auto& [k, v] : c->attrs) {
        if (c->op->name == "task.latest") continue;  // a task id is a name (see task())
        mix_str(k);
        attr(v);
      }
    }
    if (auto* c = e->as<FuncCall>()) {
      mix_str(c->callee);
      task(c->task);
      for (auto& a : c->args) expr(a);
    }
    if (auto* l = e->as<ListExpr>())
      for (auto& a : l->elems) expr(a);
    if (auto* t = e->as<TupleGetItem>()) {
      mix(t->index);
      expr(t->tuple);
    }
  }

  // Task info without the ids themselves (they are names; see the comparison).
  void task(const TaskInfo& t) {
    mix(static_cast<uint64_t>(t.block_num));
    mix(t.manual ? 1 : 0);
    mix(t.task_id >= 0 ? 1 : 0);
    mix(t.deps.size());
    for (auto& e : t.dyn_deps) expr(e);
    mix(static_cast<uint64_t>(t.role * 7 + t.split * 3 + t.slot_num + t.sync_start + 2 * t.allow_early_resolve + 4 * t.windowize));
    mix(std::hash<std::string>{}(t.name_hint));
    for (auto& e : t.no_dep_args) expr(e);
    for (auto& e : t.dumps) expr(e);
    if (t.core_num) expr(t.core_num);
    if (t.predicate) expr(t.predicate);
  }

  void stmt(const StmtPtr& s) {
    if (!s) return mix(2);
    mix(static_cast<uint64_t>(s->kind) + 300);
    if (auto* a = s->as<AssignStmt>()) {
      expr(a->value);
      var(a->var.get());
    }
    if (auto* a = s->as<EvalStmt>()) expr(a->expr);
    if (auto* y = s->as<YieldStmt>())
      for (auto& v : y->values) expr(v);
    if (auto* r = s->as<ReturnStmt>())
      for (auto& v : r->values) expr(v);
    if (s->as<SeqStmts>()) {
      std::vector<StmtPtr> flat;
      flatten_seq(s, &flat);
      for (auto& x : flat) stmt(x);
    }
    if (auto* sc = s->as<ScopeStmt>()) {
      mix(static_cast<uint64_t>(sc->level));
      task(sc->task);
      stmt(sc->body);
    }
    if (auto* f = s->as<ForStmt>()) {
      mix(static_cast<uint64_t>(f->for_kind));
      mix(static_cast<uint64_t>(f->stages));
      expr(f->start);
      expr(f->stop);
      expr(f->step);
      for (auto& v : f->init_values) expr(v);
      var(f->loop_var.get());
      for (auto& v : f->iter_args) var(v.get());
      stmt(f->body);
      for (auto& v : f->return_vars) var(v.get());
    }
    if (auto* w = s->as<WhileStmt>()) {
      for (auto& v : w->init_values) expr(v);
      for (auto& v : w->iter_args) var(v.get());
      expr(w->cond);
      stmt(w->body);
      for (auto& v : w->return_vars) var(v.get());
    }
    if (auto* i = s->as<IfStmt>()) {
      expr(i->cond);
      for (auto& v : i->return_vars) var(v.get());
      stmt(i->then_body);
      stmt(i->else_body);
    }
  }

  void function(const Function& f) {
    mix_str(f.name);
    mix(static_cast<uint64_t>(f.func_type));
    mix(f.level ? 1 + static_cast<uint64_t>(*f.level) : 0);
    mix(f.role ? 1 + static_cast<uint64_t>(*f.role) : 0);
    for (auto& [k, v] : f.attrs) mix_str(k);
    for (auto d : f.directions) mix(static_cast<uint64_t>(d));
    for (auto& p : f.params) var(p.get());
    for (auto& t : f.return_types) type(t);
    stmt(f.body);
  }

 private:
  std::unordered_map<const Var*, uint64_t> ids_;
};

}  // namespace

bool structural_equal(const ProgramPtr& a, const ProgramPtr& b) {
  if (!a || !b) return a == b;
  if (a->name != b->name || a->functions.size() != b->functions.size()) return false;
  for (size_t i = 0; i < a->functions.size(); ++i)
    if (!structural_equal(a->functions[i], b->functions[i])) return false;
  return true;
}
bool structural_equal(const FunctionPtr& a, const FunctionPtr& b) {
  if (!a || !b) return a == b;
  return Equal().function(*a, *b);
}
bool structural_equal(const StmtPtr& a, const StmtPtr& b) { return Equal().stmt(a, b); }
bool structural_equal(const ExprPtr& a, const ExprPtr& b) { return Equal().expr(a, b); }
bool structural_equal(const TypePtr& a, const TypePtr& b) { return Equal().type(a, b); }

uint64_t structural_hash(const ProgramPtr& p) {
  Hasher h;
  h.mix_str(p->name);
  for (auto& f : p->functions) {
    Hasher fh;
    fh.function(*f);
    h.mix(fh.h);
  }
  return h.h;
}
uint64_t structural_hash(const FunctionPtr& f) {
  Hasher h;
  h.function(*f);
  return h.h;
}
uint64_t structural_hash(const StmtPtr& s) {
  Hasher h;
  h.stmt(s);
  return h.h;
}
uint64_t structural_hash(const ExprPtr& e) {
  Hasher h;
  h.expr(e);
  return h.h;
}
uint64_t structural_hash(const TypePtr& t) {
  Hasher h;
  h.type(t);
  return h.h;
}

}  // namespace pypto::ir

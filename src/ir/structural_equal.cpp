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
        return x->dtype == y->dtype && x->stride == y->stride && x->dn == y->dn && exprs(x->shape, y->shape);
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

  // Field comparisons by field kind (nodes.def).
  template <typename T>
  bool eq_attr(const T& x, const T& y) { return x == y; }
  bool eq_float(double x, double y) { return x == y || (x != x && y != y); }
  bool eq_op(const OpDef* x, const OpDef* y) { return x == y; }
  bool eq_attrs(const Attrs& x, const Attrs& y) { return x == y; }
  bool eq_extra(const std::vector<VarPtr>&, const std::vector<VarPtr>&) { return true; }
  bool eq_expr(const ExprPtr& x, const ExprPtr& y) { return expr(x, y); }
  bool eq_exprs(const std::vector<ExprPtr>& x, const std::vector<ExprPtr>& y) { return exprs(x, y); }
  bool eq_def(const VarPtr& x, const VarPtr& y) { return var(x.get(), y.get()); }
  bool eq_defs(const std::vector<VarPtr>& x, const std::vector<VarPtr>& y) { return vars(x, y); }
  bool eq_stmt(const StmtPtr& x, const StmtPtr& y) { return stmt(x, y); }
  bool eq_stmts(const std::vector<StmtPtr>& x, const std::vector<StmtPtr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!stmt(x[i], y[i])) return false;
    return true;
  }
  bool eq_task(const TaskInfo& x, const TaskInfo& y) { return task(x, y); }

  bool expr(const ExprPtr& a, const ExprPtr& b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    if (a->kind == ExprKind::Var) return var(a->as<Var>(), b->as<Var>());
    if (!type(a->type, b->type)) return false;
    if (auto* x = a->as<Call>(); x && x->op->name == "task.latest") {  // a task id names a launch (see task_id)
      auto* y = b->as<Call>();
      return x->op == y->op &&
             task_id(std::get<int64_t>(x->attrs.at("task_id")), std::get<int64_t>(y->attrs.at("task_id")));
    }
    switch (a->kind) {
#define PYPTO_EQ(kind, name) &&eq_##kind(x->name, y->name)
#define PYPTO_X(Kind, Class, hook)                 \
  case ExprKind::Kind: {                           \
    auto *x = a->as<Class>(), *y = b->as<Class>(); \
    return true PYPTO_FIELDS_##Class(PYPTO_EQ);    \
  }
      PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
#undef PYPTO_X
      default: return false;
    }
  }

  bool stmt(const StmtPtr& a, const StmtPtr& b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    if (a->kind == StmtKind::Seq) {
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
    switch (a->kind) {
#define PYPTO_X(Kind, Class, hook)                 \
  case StmtKind::Kind: {                           \
    auto *x = a->as<Class>(), *y = b->as<Class>(); \
    return true PYPTO_FIELDS_##Class(PYPTO_EQ);    \
  }
      PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
#undef PYPTO_EQ
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
      for (int64_t st : s->stride) mix(static_cast<uint64_t>(st));
      mix(s->dn ? 1 : 0);
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

  // Field hashes by field kind (nodes.def).
  template <typename T>
  void h_attr(const T& x) { mix(static_cast<uint64_t>(x)); }
  void h_attr(const std::string& x) { mix_str(x); }
  void h_float(double x) { mix(std::hash<double>()(x)); }
  void h_op(const OpDef* x) { mix_str(x->name); }
  void h_attrs(const Attrs& x) {
    for (auto& [k, v] : x) {
      mix_str(k);
      attr(v);
    }
  }
  void h_extra(const std::vector<VarPtr>&) {}
  void h_expr(const ExprPtr& x) { expr(x); }
  void h_exprs(const std::vector<ExprPtr>& x) {
    mix(x.size());
    for (auto& e : x) expr(e);
  }
  void h_def(const VarPtr& x) { var(x.get()); }
  void h_defs(const std::vector<VarPtr>& x) {
    mix(x.size());
    for (auto& v : x) var(v.get());
  }
  void h_stmt(const StmtPtr& x) { stmt(x); }
  void h_stmts(const std::vector<StmtPtr>& x) {
    for (auto& s : x) stmt(s);
  }
  void h_task(const TaskInfo& t) { task(t); }

  void expr(const ExprPtr& e) {
    if (!e) return mix(1);
    mix(static_cast<uint64_t>(e->kind) + 200);
    if (auto* v = e->as<Var>()) return var(v);
    type(e->type);
    if (auto* c = e->as<Call>(); c && c->op->name == "task.latest") return h_op(c->op);  // a task id is a name
    switch (e->kind) {
#define PYPTO_H(kind, name) h_##kind(x->name);
#define PYPTO_X(Kind, Class, hook) \
  case ExprKind::Kind: {           \
    auto* x = e->as<Class>();      \
    PYPTO_FIELDS_##Class(PYPTO_H)  \
    break;                         \
  }
      PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
#undef PYPTO_X
      default: break;
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
    if (s->as<SeqStmts>()) {
      std::vector<StmtPtr> flat;
      flatten_seq(s, &flat);
      for (auto& x : flat) stmt(x);
      return;
    }
    switch (s->kind) {
#define PYPTO_X(Kind, Class, hook) \
  case StmtKind::Kind: {           \
    auto* x = s->as<Class>();      \
    PYPTO_FIELDS_##Class(PYPTO_H)  \
    break;                         \
  }
      PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
#undef PYPTO_H
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

// Default traversal of the IR visitor and mutator.
#include "pypto/ir/visitor.h"

namespace pypto::ir {

// ---------------------------------------------------------------- IRVisitor
// Dispatch and default visits come from the node list (nodes.def).

void IRVisitor::visit(const ExprPtr& e) {
  if (!e) return;
  switch (e->kind) {
    case ExprKind::Var: visit_var(std::static_pointer_cast<const Var>(e)); break;
#define PYPTO_X(Kind, Class, hook) \
  case ExprKind::Kind: visit_##hook(*e->as<Class>()); break;
    PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
#undef PYPTO_X
  }
}

void IRVisitor::visit(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind) {
#define PYPTO_X(Kind, Class, hook) \
  case StmtKind::Kind: visit_##hook(*s->as<Class>()); break;
    PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
  }
}

namespace {
// The default visit of one field, by its kind in the node list.
template <typename V>
struct FieldVisitor {
  V& v;
  template <typename T>
  void attr(const T&) {}
  void float_(double) {}
  void op(const OpDef*) {}
  void attrs(const Attrs&) {}
  void extra(const std::vector<VarPtr>&) {}
  void expr(const ExprPtr& e) { v.visit(e); }
  void exprs(const std::vector<ExprPtr>& es) {
    for (auto& e : es) v.visit(e);
  }
  void def(const VarPtr& d) { v.def(d); }
  void defs(const std::vector<VarPtr>& ds) {
    for (auto& d : ds) v.def(d);
  }
  void stmt(const StmtPtr& s) { v.visit(s); }
  void stmts(const std::vector<StmtPtr>& ss) {
    for (auto& s : ss) v.visit(s);
  }
  void task(const TaskInfo& t) { v.task(t); }
};
}  // namespace

// Access for FieldVisitor to the protected hooks.
struct IRVisitorAccess {
  IRVisitor& self;
  void visit(const ExprPtr& e) { self.visit(e); }
  void visit(const StmtPtr& s) { self.visit(s); }
  void def(const VarPtr& d) { self.visit_def(d); }
  void task(const TaskInfo& t) { self.visit_task(t); }
};

#define PYPTO_VF(kind, name) PYPTO_VF_(kind, name)
#define PYPTO_VF_(kind, name) fv.PYPTO_FK_##kind(n.name);
#define PYPTO_FK_attr attr
#define PYPTO_FK_float float_
#define PYPTO_FK_op op
#define PYPTO_FK_attrs attrs
#define PYPTO_FK_extra extra
#define PYPTO_FK_expr expr
#define PYPTO_FK_exprs exprs
#define PYPTO_FK_def def
#define PYPTO_FK_defs defs
#define PYPTO_FK_stmt stmt
#define PYPTO_FK_stmts stmts
#define PYPTO_FK_task task
#define PYPTO_X(Kind, Class, hook)                  \
  void IRVisitor::visit_##hook(const Class& n) {    \
    IRVisitorAccess access{*this};                  \
    FieldVisitor<IRVisitorAccess> fv{access};       \
    PYPTO_FIELDS_##Class(PYPTO_VF) (void)fv;        \
  }
PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X

void IRVisitor::visit_function(const Function& f) {
  for (auto& p : f.params) visit_def(p);
  visit(f.body);
}

void IRVisitor::visit_task(const TaskInfo& t) {
  for (auto& d : t.dyn_deps) visit(d);
  if (t.core_num) visit(t.core_num);
  for (auto& d : t.no_dep_args) visit(d);
  for (auto& d : t.dumps) visit(d);
  if (t.predicate) visit(t.predicate);
}

// ---------------------------------------------------------------- IRMutator

VarPtr IRMutator::define(const VarPtr& v) {
  VarPtr nv = mutate_def(v);
  if (nv != v) replaced_[v.get()] = nv;
  return nv;
}

ExprPtr IRMutator::mutate_var(const VarPtr& v) {
  auto it = replaced_.find(v.get());
  return it == replaced_.end() ? v : it->second;
}

TaskInfo IRMutator::mutate_task(const TaskInfo& t, bool* changed) {
  TaskInfo out = t;
  out.dyn_deps = mutate_all(t.dyn_deps, changed);
  out.no_dep_args = mutate_all(t.no_dep_args, changed);
  out.dumps = mutate_all(t.dumps, changed);
  for (ExprPtr* e : {&out.core_num, &out.predicate})
    if (*e) {
      ExprPtr m = mutate(*e);
      *changed |= m != *e;
      *e = m;
    }
  return out;
}

std::vector<ExprPtr> IRMutator::mutate_all(const std::vector<ExprPtr>& es, bool* changed) {
  std::vector<ExprPtr> out;
  out.reserve(es.size());
  for (auto& e : es) {
    out.push_back(e ? mutate(e) : e);
    if (out.back() != e) *changed = true;
  }
  return out;
}

ExprPtr IRMutator::mutate_field_expr(const ExprPtr& x, bool* changed) {
  ExprPtr m = x ? mutate(x) : x;
  *changed |= m != x;
  return m;
}
VarPtr IRMutator::mutate_field_def(const VarPtr& x, bool* changed) {
  VarPtr m = define(x);
  *changed |= m != x;
  return m;
}
std::vector<VarPtr> IRMutator::mutate_field_defs(const std::vector<VarPtr>& xs, bool* changed) {
  std::vector<VarPtr> out;
  out.reserve(xs.size());
  for (auto& x : xs) out.push_back(mutate_field_def(x, changed));
  return out;
}
StmtPtr IRMutator::mutate_field_stmt(const StmtPtr& x, bool* changed) {
  StmtPtr m = x ? mutate(x) : x;
  *changed |= m != x;
  return m;
}
std::vector<StmtPtr> IRMutator::mutate_field_stmts(const std::vector<StmtPtr>& xs, bool* changed) {
  std::vector<StmtPtr> out;
  out.reserve(xs.size());
  for (auto& x : xs) out.push_back(mutate_field_stmt(x, changed));
  return out;
}

ExprPtr IRMutator::mutate(const ExprPtr& e) {
  if (!e) return e;
  switch (e->kind) {
#define PYPTO_X(Kind, Class, hook) \
  case ExprKind::Kind: return mutate_##hook(std::static_pointer_cast<const Class>(e));
    PYPTO_EXPR_NODES(PYPTO_X)
#undef PYPTO_X
  }
  return e;
}

StmtPtr IRMutator::mutate(const StmtPtr& s) {
  if (!s) return s;
  switch (s->kind) {
#define PYPTO_X(Kind, Class, hook) \
  case StmtKind::Kind: return mutate_##hook(std::static_pointer_cast<const Class>(s));
    PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
  }
  return s;
}

namespace {
// How a node is rebuilt from its mutated fields (given in list order), through its make().
// Generated where make() takes the fields in list order, then the span (ListExpr, IfStmt, ...);
// written out below for the nodes whose make() differs (a dtype kept from the type, another
// order, extra arguments). A written-out rebuild is a better match than this template.
template <class Class, class... Fields>
auto rebuild(const Class& n, Fields&&... fields) -> decltype(Class::make(std::forward<Fields>(fields)..., n.span)) {
  return Class::make(std::forward<Fields>(fields)..., n.span);
}
ExprPtr rebuild(const ConstInt& n, int64_t v) { return ConstInt::make(v, n.type->as<ScalarType>()->dtype, n.span); }
ExprPtr rebuild(const ConstFloat& n, double v) { return ConstFloat::make(v, n.type->as<ScalarType>()->dtype, n.span); }
ExprPtr rebuild(const Call& n, const OpDef* op, Attrs attrs, std::vector<ExprPtr> args) {
  return Call::make(op, std::move(args), std::move(attrs), n.span);
}
ExprPtr rebuild(const FuncCall& n, std::string callee, std::vector<ExprPtr> args, TaskInfo task) {
  return FuncCall::make(std::move(callee), std::move(args), n.type, n.span, std::move(task));
}
// The element's type follows the tuple's (e.g. the addresses memory planning gave it).
ExprPtr rebuild(const TupleGetItem& n, int index, ExprPtr tuple) { return TupleGetItem::make(std::move(tuple), index, n.span); }
ExprPtr rebuild(const CastExpr& n, ExprPtr a) {
  return CastExpr::make(std::move(a), n.type->as<ScalarType>()->dtype, "round", n.span);
}

StmtPtr rebuild(const AssignStmt& n, ExprPtr value, VarPtr var) { return AssignStmt::make(std::move(var), std::move(value), n.span); }
// Passes drop a loop's attrs (parser hints).
StmtPtr rebuild(const ForStmt& n, ForKind for_kind, int64_t stages, const Attrs&, ExprPtr start, ExprPtr stop, ExprPtr step,
                std::vector<ExprPtr> init_values, VarPtr loop_var, std::vector<VarPtr> iter_args, StmtPtr body,
                std::vector<VarPtr> return_vars) {
  return ForStmt::make(std::move(loop_var), std::move(start), std::move(stop), std::move(step), std::move(iter_args),
                       std::move(init_values), std::move(body), std::move(return_vars), for_kind, stages, n.span);
}
StmtPtr rebuild(const WhileStmt& n, std::vector<ExprPtr> init_values, std::vector<VarPtr> iter_args, ExprPtr cond, StmtPtr body,
                std::vector<VarPtr> return_vars) {
  return WhileStmt::make(std::move(iter_args), std::move(init_values), std::move(cond), std::move(body),
                         std::move(return_vars), n.span);
}
StmtPtr rebuild(const ScopeStmt& n, Level level, TaskInfo task, StmtPtr body, std::vector<VarPtr> block_vars) {
  return ScopeStmt::make(level, std::move(body), n.span, std::move(task), std::move(block_vars));
}
}  // namespace

// The default mutators: each field mutated in list order; rebuilt when one changed.
#define PYPTO_MF(kind, name) auto f_##name = mutate_field_##kind(n->name, &changed);
#define PYPTO_MA(kind, name) , std::move(f_##name)
#define PYPTO_X(Kind, Class, hook)                                    \
  ExprPtr IRMutator::mutate_##hook(const std::shared_ptr<const Class>& n) { \
    bool changed = false;                                             \
    PYPTO_FIELDS_##Class(PYPTO_MF) if (!changed) return n;            \
    return rebuild(*n PYPTO_FIELDS_##Class(PYPTO_MA));                \
  }
PYPTO_EXPR_NODES_NO_VAR(PYPTO_X)
#undef PYPTO_X
#define PYPTO_X(Kind, Class, hook)                                    \
  StmtPtr IRMutator::mutate_##hook(const std::shared_ptr<const Class>& n) { \
    bool changed = false;                                             \
    PYPTO_FIELDS_##Class(PYPTO_MF) if (!changed) return n;            \
    return rebuild(*n PYPTO_FIELDS_##Class(PYPTO_MA));                \
  }
PYPTO_STMT_NODES(PYPTO_X)
#undef PYPTO_X
#undef PYPTO_MF
#undef PYPTO_MA

StmtPtr IRMutator::mutate_seq_spliced(const std::shared_ptr<const SeqStmts>& s,
                                      const std::function<bool(const StmtPtr&)>& splice) {
  bool changed = false;
  std::vector<StmtPtr> stmts;
  for (auto& x : s->stmts) {
    StmtPtr y = mutate(x);
    changed |= y != x;
    auto* seq = y->as<SeqStmts>();
    if (seq && splice(x))
      stmts.insert(stmts.end(), seq->stmts.begin(), seq->stmts.end());
    else
      stmts.push_back(y);
  }
  return changed ? SeqStmts::make(stmts, s->span) : s;
}

FunctionPtr IRMutator::mutate_function(const FunctionPtr& f) {
  bool changed = false;
  std::vector<VarPtr> params;
  for (auto& p : f->params) {
    params.push_back(define(p));
    changed |= params.back() != p;
  }
  auto body = mutate(f->body);
  changed |= body != f->body;
  if (!changed) return f;
  return Function::make(f->name, params, f->directions, f->return_types, body, f->func_type, f->span, f->level, f->role,
                        f->attrs);
}

}  // namespace pypto::ir

namespace pypto::ir {
namespace {
class Substitute : public IRMutator {
 public:
  explicit Substitute(const std::unordered_map<const Var*, ExprPtr>& v) : values_(v) {}

 protected:
  ExprPtr mutate_var(const VarPtr& v) override {
    auto it = values_.find(v.get());
    return it == values_.end() ? IRMutator::mutate_var(v) : it->second;
  }

 private:
  const std::unordered_map<const Var*, ExprPtr>& values_;
};
}  // namespace

ExprPtr substitute(const ExprPtr& e, const std::unordered_map<const Var*, ExprPtr>& values) {
  return Substitute(values).mutate(e);
}
}  // namespace pypto::ir

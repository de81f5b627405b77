// Default traversal of the IR visitor and mutator.
#include "pypto/ir/visitor.h"

namespace pypto::ir {

// ---------------------------------------------------------------- IRVisitor

void IRVisitor::visit(const ExprPtr& e) {
  if (!e) return;
  switch (e->kind) {
    case ExprKind::Var: visit_var(std::static_pointer_cast<const Var>(e)); break;
    case ExprKind::ConstInt:
    case ExprKind::ConstFloat:
    case ExprKind::ConstBool: break;
    case ExprKind::Binary: {
      auto* b = e->as<BinaryExpr>();
      visit(b->a);
      visit(b->b);
      break;
    }
    case ExprKind::Unary: visit(e->as<UnaryExpr>()->a); break;
    case ExprKind::Cast: visit(e->as<CastExpr>()->a); break;
    case ExprKind::Call: visit_call(*e->as<Call>()); break;
    case ExprKind::FuncCall: visit_func_call(*e->as<FuncCall>()); break;
    case ExprKind::List:
      for (auto& x : e->as<ListExpr>()->elems) visit(x);
      break;
    case ExprKind::TupleGet: visit(e->as<TupleGetItem>()->tuple); break;
  }
}

void IRVisitor::visit(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Assign: visit_assign(*s->as<AssignStmt>()); break;
    case StmtKind::Eval: visit_eval(*s->as<EvalStmt>()); break;
    case StmtKind::For: visit_for(*s->as<ForStmt>()); break;
    case StmtKind::While: visit_while(*s->as<WhileStmt>()); break;
    case StmtKind::If: visit_if(*s->as<IfStmt>()); break;
    case StmtKind::Yield: visit_yield(*s->as<YieldStmt>()); break;
    case StmtKind::Return: visit_return(*s->as<ReturnStmt>()); break;
    case StmtKind::Seq: visit_seq(*s->as<SeqStmts>()); break;
    case StmtKind::Scope: visit_scope(*s->as<ScopeStmt>()); break;
  }
}

void IRVisitor::visit_function(const Function& f) {
  for (auto& p : f.params) visit_def(p);
  visit(f.body);
}

void IRVisitor::visit_call(const Call& c) {
  for (auto& a : c.args) visit(a);
}
void IRVisitor::visit_func_call(const FuncCall& c) {
  for (auto& a : c.args) visit(a);
  visit_task(c.task);
}
void IRVisitor::visit_task(const TaskInfo& t) {
  for (auto& d : t.dyn_deps) visit(d);
  if (t.core_num) visit(t.core_num);
  for (auto& d : t.no_dep_args) visit(d);
  for (auto& d : t.dumps) visit(d);
  if (t.predicate) visit(t.predicate);
}
void IRVisitor::visit_assign(const AssignStmt& s) {
  visit(s.value);
  visit_def(s.var);
}
void IRVisitor::visit_eval(const EvalStmt& s) { visit(s.expr); }
void IRVisitor::visit_for(const ForStmt& s) {
  visit(s.start);
  visit(s.stop);
  visit(s.step);
  for (auto& v : s.init_values) visit(v);
  visit_def(s.loop_var);
  for (auto& v : s.iter_args) visit_def(v);
  visit(s.body);
  for (auto& v : s.return_vars) visit_def(v);
}
void IRVisitor::visit_while(const WhileStmt& s) {
  for (auto& v : s.init_values) visit(v);
  for (auto& v : s.iter_args) visit_def(v);
  visit(s.cond);
  visit(s.body);
  for (auto& v : s.return_vars) visit_def(v);
}
void IRVisitor::visit_if(const IfStmt& s) {
  visit(s.cond);
  visit(s.then_body);
  visit(s.else_body);
  for (auto& v : s.return_vars) visit_def(v);
}
void IRVisitor::visit_yield(const YieldStmt& s) {
  for (auto& v : s.values) visit(v);
}
void IRVisitor::visit_return(const ReturnStmt& s) {
  for (auto& v : s.values) visit(v);
}
void IRVisitor::visit_seq(const SeqStmts& s) {
  for (auto& x : s.stmts) visit(x);
}
void IRVisitor::visit_scope(const ScopeStmt& s) {
  visit_task(s.task);  // evaluated where the scope starts, outside its body
  visit(s.body);
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

ExprPtr IRMutator::mutate(const ExprPtr& e) {
  if (!e) return e;
  switch (e->kind) {
    case ExprKind::Var: return mutate_var(std::static_pointer_cast<const Var>(e));
    case ExprKind::ConstInt:
    case ExprKind::ConstFloat:
    case ExprKind::ConstBool: return e;
    case ExprKind::Binary: {
      auto* b = e->as<BinaryExpr>();
      auto x = mutate(b->a), y = mutate(b->b);
      if (x == b->a && y == b->b) return e;
      return std::make_shared<BinaryExpr>(b->op, x, y, b->type, b->span);
    }
    case ExprKind::Unary: {
      auto* u = e->as<UnaryExpr>();
      auto x = mutate(u->a);
      if (x == u->a) return e;
      return std::make_shared<UnaryExpr>(u->op, x, u->type, u->span);
    }
    case ExprKind::Cast: {
      auto* c = e->as<CastExpr>();
      auto x = mutate(c->a);
      if (x == c->a) return e;
      return CastExpr::make(x, e->type->as<ScalarType>()->dtype, "round", c->span);
    }
    case ExprKind::Call: return mutate_call(std::static_pointer_cast<const Call>(e));
    case ExprKind::FuncCall: return mutate_func_call(std::static_pointer_cast<const FuncCall>(e));
    case ExprKind::List: {
      auto* l = e->as<ListExpr>();
      bool changed = false;
      auto elems = mutate_all(l->elems, &changed);
      return changed ? ListExpr::make(std::move(elems), l->span) : e;
    }
    case ExprKind::TupleGet: {
      auto* t = e->as<TupleGetItem>();
      auto x = mutate(t->tuple);
      if (x == t->tuple) return e;
      // The element's type follows the tuple's (e.g. the addresses memory planning gave it).
      auto* tt = x->type ? x->type->as<TupleType>() : nullptr;
      bool has = tt && t->index >= 0 && t->index < static_cast<int>(tt->elems.size());
      return std::make_shared<TupleGetItem>(x, t->index, has ? tt->elems[t->index] : t->type, t->span);
    }
  }
  return e;
}

ExprPtr IRMutator::mutate_call(const std::shared_ptr<const Call>& c) {
  bool changed = false;
  auto args = mutate_all(c->args, &changed);
  if (!changed) return c;
  return std::make_shared<Call>(c->op, std::move(args), c->attrs, c->type, c->span);
}

ExprPtr IRMutator::mutate_func_call(const std::shared_ptr<const FuncCall>& c) {
  bool changed = false;
  auto args = mutate_all(c->args, &changed);
  TaskInfo task = mutate_task(c->task, &changed);
  if (!changed) return c;
  auto out = std::make_shared<FuncCall>(c->callee, std::move(args), c->type, c->span);
  out->task = std::move(task);
  return out;
}

StmtPtr IRMutator::mutate(const StmtPtr& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Assign: return mutate_assign(std::static_pointer_cast<const AssignStmt>(s));
    case StmtKind::Eval: return mutate_eval(std::static_pointer_cast<const EvalStmt>(s));
    case StmtKind::For: return mutate_for(std::static_pointer_cast<const ForStmt>(s));
    case StmtKind::While: return mutate_while(std::static_pointer_cast<const WhileStmt>(s));
    case StmtKind::If: return mutate_if(std::static_pointer_cast<const IfStmt>(s));
    case StmtKind::Yield: return mutate_yield(std::static_pointer_cast<const YieldStmt>(s));
    case StmtKind::Return: return mutate_return(std::static_pointer_cast<const ReturnStmt>(s));
    case StmtKind::Seq: return mutate_seq(std::static_pointer_cast<const SeqStmts>(s));
    case StmtKind::Scope: return mutate_scope(std::static_pointer_cast<const ScopeStmt>(s));
  }
  return s;
}

StmtPtr IRMutator::mutate_assign(const std::shared_ptr<const AssignStmt>& s) {
  auto value = mutate(s->value);
  auto var = define(s->var);
  if (value == s->value && var == s->var) return s;
  return AssignStmt::make(var, value, s->span);
}

StmtPtr IRMutator::mutate_eval(const std::shared_ptr<const EvalStmt>& s) {
  auto e = mutate(s->expr);
  return e == s->expr ? s : EvalStmt::make(e, s->span);
}

StmtPtr IRMutator::mutate_for(const std::shared_ptr<const ForStmt>& s) {
  bool changed = false;
  auto start = mutate(s->start), stop = mutate(s->stop), step = mutate(s->step);
  changed |= start != s->start || stop != s->stop || step != s->step;
  auto init = mutate_all(s->init_values, &changed);
  auto loop_var = define(s->loop_var);
  changed |= loop_var != s->loop_var;
  std::vector<VarPtr> iter_args, return_vars;
  for (auto& v : s->iter_args) {
    iter_args.push_back(define(v));
    changed |= iter_args.back() != v;
  }
  auto body = mutate(s->body);
  changed |= body != s->body;
  for (auto& v : s->return_vars) {
    return_vars.push_back(define(v));
    changed |= return_vars.back() != v;
  }
  if (!changed) return s;
  return ForStmt::make(loop_var, start, stop, step, iter_args, init, body, return_vars, s->for_kind, s->stages, s->span);
}

StmtPtr IRMutator::mutate_while(const std::shared_ptr<const WhileStmt>& s) {
  bool changed = false;
  auto init = mutate_all(s->init_values, &changed);
  std::vector<VarPtr> iter_args, return_vars;
  for (auto& v : s->iter_args) {
    iter_args.push_back(define(v));
    changed |= iter_args.back() != v;
  }
  auto cond = mutate(s->cond);
  auto body = mutate(s->body);
  changed |= cond != s->cond || body != s->body;
  for (auto& v : s->return_vars) {
    return_vars.push_back(define(v));
    changed |= return_vars.back() != v;
  }
  if (!changed) return s;
  return WhileStmt::make(iter_args, init, cond, body, return_vars, s->span);
}

StmtPtr IRMutator::mutate_if(const std::shared_ptr<const IfStmt>& s) {
  auto cond = mutate(s->cond);
  auto then_body = mutate(s->then_body);
  auto else_body = mutate(s->else_body);
  bool changed = cond != s->cond || then_body != s->then_body || else_body != s->else_body;
  std::vector<VarPtr> return_vars;
  for (auto& v : s->return_vars) {
    return_vars.push_back(define(v));
    changed |= return_vars.back() != v;
  }
  if (!changed) return s;
  return IfStmt::make(cond, then_body, else_body, return_vars, s->span);
}

StmtPtr IRMutator::mutate_yield(const std::shared_ptr<const YieldStmt>& s) {
  bool changed = false;
  auto values = mutate_all(s->values, &changed);
  return changed ? YieldStmt::make(values, s->span) : s;
}

StmtPtr IRMutator::mutate_return(const std::shared_ptr<const ReturnStmt>& s) {
  bool changed = false;
  auto values = mutate_all(s->values, &changed);
  return changed ? ReturnStmt::make(values, s->span) : s;
}

StmtPtr IRMutator::mutate_seq(const std::shared_ptr<const SeqStmts>& s) {
  bool changed = false;
  std::vector<StmtPtr> stmts;
  for (auto& x : s->stmts) {
    stmts.push_back(mutate(x));
    changed |= stmts.back() != x;
  }
  return changed ? SeqStmts::make(stmts, s->span) : s;
}

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

StmtPtr IRMutator::mutate_scope(const std::shared_ptr<const ScopeStmt>& s) {
  auto body = mutate(s->body);
  bool changed = body != s->body;
  TaskInfo task = mutate_task(s->task, &changed);
  if (!changed) return s;
  auto out = std::make_shared<ScopeStmt>(s->level, body, s->span);
  out->task = std::move(task);
  out->block_vars = s->block_vars;
  return out;
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

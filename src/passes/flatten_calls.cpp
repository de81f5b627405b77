// FlattenCalls: an op call nested inside another expression becomes its own assignment to
// a fresh Var just before the statement, so that every tile the program computes is a Var
// that memory planning can place and codegen can name.
#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

std::string temp_name(const ExprPtr& call) {
  if (auto* c = call->as<Call>()) {
    const std::string& n = c->op->name;
    return n.substr(n.find('.') + 1);
  }
  if (auto* f = call->as<FuncCall>()) return f->callee + "_result";
  return "t";
}

class Flattener : public IRMutator {
 public:
  using IRMutator::mutate;
  // One result of a multi-result op (`pl.sort32(t)[0]`): the call is named, its tuple placed.
  ExprPtr mutate(const ExprPtr& e) override {
    ExprPtr r = IRMutator::mutate(e);
    auto* g = r ? r->as<TupleGetItem>() : nullptr;
    if (!g || !g->tuple->as<Call>()) return r;
    return TupleGetItem::make(hoist(g->tuple), g->index, g->span);
  }

 protected:
  // Nested calls are replaced by Vars whose assignments collect in `hoisted_`.
  ExprPtr mutate_call(const std::shared_ptr<const Call>& c) override { return hoist_args(IRMutator::mutate_call(c)); }
  ExprPtr mutate_func_call(const std::shared_ptr<const FuncCall>& c) override {
    return hoist_args(IRMutator::mutate_func_call(c));
  }

  // Values yielded or returned, and loop init values, are named too: a loop-carried tile
  // shares storage with them.
  StmtPtr mutate_yield(const std::shared_ptr<const YieldStmt>& s) override {
    auto r = std::static_pointer_cast<const YieldStmt>(IRMutator::mutate_yield(s));
    auto values = hoist_all(r->values);
    return values == r->values ? r : YieldStmt::make(values, r->span);
  }
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    auto r = std::static_pointer_cast<const ReturnStmt>(IRMutator::mutate_return(s));
    auto values = hoist_all(r->values);
    return values == r->values ? r : ReturnStmt::make(values, r->span);
  }
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    auto r = std::static_pointer_cast<const ForStmt>(IRMutator::mutate_for(s));
    auto init = hoist_all(r->init_values);
    if (init == r->init_values) return r;
    return ForStmt::make(r->loop_var, r->start, r->stop, r->step, r->iter_args, init, r->body, r->return_vars,
                         r->for_kind, r->stages, r->span);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    // The condition runs before every iteration, so nothing is hoisted out of it (codegen
    // evaluates a call nested in it in place); init values are named like a for loop's.
    bool changed = false;
    auto init = hoist_all(mutate_all(s->init_values, &changed));
    auto body = mutate(s->body);
    if (init == s->init_values && body == s->body) return s;
    return WhileStmt::make(s->iter_args, init, s->cond, body, s->return_vars, s->span);
  }

  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    // Hoists from an enclosing statement's header (loop bounds, init values) belong before
    // that statement, not inside this block: keep them aside while the block is processed.
    std::vector<StmtPtr> outer = std::move(hoisted_);
    hoisted_.clear();
    std::vector<StmtPtr> out;
    bool changed = false;
    for (auto& st : s->stmts) {
      StmtPtr ns = mutate(st);
      changed |= ns != st || !hoisted_.empty();
      for (auto& h : hoisted_) out.push_back(h);
      hoisted_.clear();
      out.push_back(ns);
    }
    hoisted_ = std::move(outer);
    return changed ? SeqStmts::make(out, s->span) : s;
  }

 private:
  ExprPtr hoist(const ExprPtr& arg) {
    if (!arg || (!arg->as<Call>() && !arg->as<FuncCall>())) return arg;
    auto v = Var::make(temp_name(arg), arg->type, arg->span);
    hoisted_.push_back(AssignStmt::make(v, arg, arg->span));
    return v;
  }
  std::vector<ExprPtr> hoist_all(const std::vector<ExprPtr>& values) {
    std::vector<ExprPtr> out;
    for (auto& v : values) out.push_back(hoist(v));
    return out;
  }

  ExprPtr hoist_args(const ExprPtr& e) {
    if (auto* c = e->as<Call>()) {
      std::vector<ExprPtr> args;
      bool changed = false;
      for (auto& a : c->args) {
        args.push_back(hoist(a));
        changed |= args.back() != a;
      }
      if (!changed) return e;
      return Call::make(c->op, args, c->attrs, c->span);
    }
    if (auto* f = e->as<FuncCall>()) {
      std::vector<ExprPtr> args;
      bool changed = false;
      for (auto& a : f->args) {
        args.push_back(hoist(a));
        changed |= args.back() != a;
      }
      if (!changed) return e;
      return FuncCall::make(f->callee, args, f->type, f->span, f->task);
    }
    return e;
  }

  std::vector<StmtPtr> hoisted_;
};

// Bodies that are a single statement get a SeqStmts so hoisting has a block to insert into.
class WrapBodies : public IRMutator {
 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    auto r = std::static_pointer_cast<const ForStmt>(IRMutator::mutate_for(s));
    if (r->body->as<SeqStmts>()) return r;
    return ForStmt::make(r->loop_var, r->start, r->stop, r->step, r->iter_args, r->init_values,
                         SeqStmts::make({r->body}, r->body->span), r->return_vars, r->for_kind, r->stages, r->span);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    auto r = std::static_pointer_cast<const WhileStmt>(IRMutator::mutate_while(s));
    if (r->body->as<SeqStmts>()) return r;
    return WhileStmt::make(r->iter_args, r->init_values, r->cond, SeqStmts::make({r->body}, r->body->span),
                           r->return_vars, r->span);
  }
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    auto r = std::static_pointer_cast<const IfStmt>(IRMutator::mutate_if(s));
    auto wrap = [](const StmtPtr& b) { return !b || b->as<SeqStmts>() ? b : SeqStmts::make({b}, b->span); };
    auto t = wrap(r->then_body), e = wrap(r->else_body);
    if (t == r->then_body && e == r->else_body) return r;
    return IfStmt::make(r->cond, t, e, r->return_vars, r->span);
  }
};

}  // namespace

ProgramPtr flatten_calls(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    FunctionPtr g = f;
    if (!g->body->as<SeqStmts>())
      g = Function::make(g->name, g->params, g->directions, g->return_types, SeqStmts::make({g->body}, g->body->span),
                         g->func_type, g->span, g->level, g->role, g->attrs);
    g = WrapBodies().mutate_function(g);
    FunctionPtr flat = Flattener().mutate_function(g);
    functions.push_back(flat == g ? f : flat);
    changed |= functions.back() != f;
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes

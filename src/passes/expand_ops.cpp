// ExpandOps: every call of a composite op (an OpDef with `expand`: pl.sin, pl.cos, pl.addsc,
// pl.expand_clone of a single element, ...) inside an InCore function becomes the sequence of
// single-instruction op calls its definition gives, each assigned to a fresh value, so that
// memory planning places the intermediate tiles like any other tile.
#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

class Emitter : public OpExpander {
 public:
  explicit Emitter(std::vector<StmtPtr>& out) : out_(out) {}
  ExprPtr emit(const std::string& name, const ExprPtr& value) override {
    auto v = Var::make(name, value->type, value->span);
    out_.push_back(AssignStmt::make(v, value, value->span));
    return v;
  }
  ExprPtr call(const std::string& name, const std::string& op, const std::vector<ExprPtr>& args, const Attrs& attrs,
               const Span& span) override {
    return emit(name, ops::make_op_call(op, args, {}, attrs, span));
  }

 private:
  std::vector<StmtPtr>& out_;
};

class Expander : public IRMutator {
 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    std::vector<StmtPtr> out;
    bool changed = false;
    for (auto& st0 : s->stmts) {
      StmtPtr st = mutate(st0);
      changed |= st != st0;
      const Call* call = nullptr;
      if (auto* a = st->as<AssignStmt>()) call = a->value->as<Call>();
      else if (auto* e = st->as<EvalStmt>()) call = e->expr->as<Call>();
      if (!call || !call->op->expand) {
        out.push_back(st);
        continue;
      }
      // Expansions may themselves use composite ops: expand until none is left.
      std::vector<StmtPtr> pending{st};
      while (!pending.empty()) {
        StmtPtr cur = pending.front();
        pending.erase(pending.begin());
        auto* a = cur->as<AssignStmt>();
        auto* c = a ? a->value->as<Call>() : cur->as<EvalStmt>()->expr->as<Call>();
        if (!c || !c->op->expand) {
          out.push_back(cur);
          continue;
        }
        std::vector<StmtPtr> emitted;
        Emitter emitter(emitted);
        ExprPtr value = c->op->expand(*c, emitter);
        if (!value) {  // this call needs no expansion: its own lowering handles it
          PYPTO_CHECK(emitted.empty(), "pl." + c->op->name + ": an expansion that keeps the call emitted values");
          out.push_back(cur);
          continue;
        }
        emitted.push_back(a ? StmtPtr(AssignStmt::make(a->var, value, cur->span)) : StmtPtr(EvalStmt::make(value, cur->span)));
        pending.insert(pending.begin(), emitted.begin(), emitted.end());
      }
      changed = true;
    }
    return changed ? SeqStmts::make(out, s->span) : s;
  }
};

}  // namespace

ProgramPtr expand_ops(const ProgramPtr& program, const PassContext&) {
  return map_kernels(program, [](const FunctionPtr& f) {
    FunctionPtr g = f;
    if (!g->body->as<SeqStmts>())
      g = Function::make(g->name, g->params, g->directions, g->return_types, SeqStmts::make({g->body}, g->body->span),
                         g->func_type, g->span, g->level, g->role, g->attrs);
    FunctionPtr out = Expander().mutate_function(g);
    return out == g ? f : out;
  });
}

}  // namespace pypto::passes

// OutlineIncore: each `with pl.at(level=...)` scope becomes an InCore function and the scope
// becomes a call of it, so that the runtime can run it as one task on a core. A parameter
// declared as an input (no pl.Out / pl.InOut) that the body stores to is made written (Out, or
// InOut when the body also reads it), so that the task graph orders its writers and readers;
// the parser warns at the store (written_inputs).
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/var_uses.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "pypto/passes/written_inputs.h"

namespace pypto::passes {
namespace {
using namespace ir;

FunctionType function_type_for(Level level) {
  switch (level) {
    case Level::AIC: return FunctionType::AIC;
    case Level::AIV: return FunctionType::AIV;
    default: return FunctionType::InCore;
  }
}

// For every tensor written inside a scope: the Var it was before the scope (its root) and
// whether the scope also reads it.
class WriteTracker : public IRVisitor {
 public:
  std::unordered_map<const Var*, VarPtr> root;  // SSA alias -> root tensor Var
  std::vector<VarPtr> written_roots;
  std::unordered_set<const Var*> written_set, read_set;
  std::unordered_map<const Var*, Span> first_write;  // root -> the op call that first writes it

  VarPtr root_of(const VarPtr& v) const {
    auto it = root.find(v.get());
    return it == root.end() ? v : it->second;
  }

 protected:
  void visit_assign(const AssignStmt& s) override {
    visit(s.value);
    if (auto* call = s.value->as<Call>(); call && !call->op->writes.empty()) {
      if (auto target = written_arg(*call)) root[s.var.get()] = root_of(target);
    }
    if (auto* call = s.value->as<Call>(); call && is_tensor_view(*call))  // writes through a view write its tensor
      if (auto base = viewed(call->args[0])) root[s.var.get()] = root_of(base);
  }
  void visit_call(const Call& c) override {
    VarPtr target = c.op->writes.empty() ? nullptr : written_arg(c);
    if (target) {
      VarPtr r = root_of(target);
      if (written_set.insert(r.get()).second) {
        written_roots.push_back(r);
        first_write.emplace(r.get(), c.span);
      }
    }
    for (auto& a : c.args) {
      VarPtr read = is_tensor_view(c) ? nullptr : viewed(a);  // taking a view reads nothing yet
      bool is_written = target && (a.get() == target.get() || viewed(a).get() == target.get());
      if (read && read->type->as<TensorType>() && !is_written)
        read_set.insert(root_of(read).get());
      visit(a);
    }
  }
  void visit_for(const ForStmt& s) override {
    alias_carried(s.iter_args, s.init_values, s.return_vars);
    IRVisitor::visit_for(s);
  }
  void visit_while(const WhileStmt& s) override {
    alias_carried(s.iter_args, s.init_values, s.return_vars);
    IRVisitor::visit_while(s);
  }

 private:
  // A loop-carried tensor threaded through writes aliases its initial value.
  void alias_carried(const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& init_values,
                     const std::vector<VarPtr>& return_vars) {
    for (size_t i = 0; i < iter_args.size(); ++i) {
      if (init_values[i]->as<Var>() && iter_args[i]->type->as<TensorType>()) {
        VarPtr init = root_of(std::static_pointer_cast<const Var>(init_values[i]));
        root[iter_args[i].get()] = init;
        root[return_vars[i].get()] = init;
      }
    }
  }
  static VarPtr written_arg(const Call& c) { return viewed(CallSite{*c.op, c.args, c.attrs, c.span}.arg(c.op->writes)); }
  static bool is_tensor_view(const Call& c) {
    return c.op->view && c.op->name.rfind("tensor.", 0) == 0 && c.args[0] && c.args[0]->type->as<TensorType>();
  }
  // The Var a (possibly nested) tensor view reads: out for pl.store(t, [0, 0], out[4:20, :]).
  static VarPtr viewed(const ExprPtr& a) {
    if (auto* c = a ? a->as<Call>() : nullptr; c && is_tensor_view(*c)) return viewed(c->args[0]);
    if (a && a->as<Var>()) return std::static_pointer_cast<const Var>(a);
    return nullptr;
  }
};

// The Vars an extent expression reads (a symbolic dimension, or arithmetic on them).
void collect_size_vars(const ExprPtr& e, std::unordered_set<const Var*>& have, std::vector<VarPtr>& out) {
  if (!e) return;
  if (auto* v = e->as<Var>()) {
    if (have.insert(v).second) out.push_back(std::static_pointer_cast<const Var>(e));
  } else if (auto* b = e->as<BinaryExpr>()) {
    collect_size_vars(b->a, have, out);
    collect_size_vars(b->b, have, out);
  } else if (auto* c = e->as<CastExpr>()) {
    collect_size_vars(c->a, have, out);
  }
}

class Outliner : public IRMutator {
 public:
  Outliner(const Function& orchestration, std::vector<FunctionPtr>* out, std::unordered_set<std::string>* taken)
      : orch_(orchestration), out_(out), taken_(taken) {}

 protected:
  // A scope with several results becomes a SeqStmts (the call, then one TupleGetItem per
  // result); its statements are spliced into the enclosing sequence, as the printed text
  // (and so the parsed program) has them.
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    return mutate_seq_spliced(s, [](const StmtPtr& x) { return x->as<ScopeStmt>() != nullptr; });
  }

  StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s) override {
    VarUses inner = collect_var_uses(s->body);
    std::vector<VarPtr> params;
    for (auto& v : inner.free_vars()) {
      if (v->type->as<TileType>())
        fail(ErrorKind::kType, s->span,
             "tile '" + v->name + "' is defined outside the pl.at scope but used inside it; tiles live in a core's buffers",
             "load or create the tile inside the `with pl.at(...)` block");
      if (v->type->as<ArrayType>())
        fail(ErrorKind::kType, s->span,
             "pl.array '" + v->name + "' is used inside the pl.at scope; arrays live in the orchestration's memory, "
             "which kernels cannot read",
             "read the element before the scope (x = " + v->name + "[i]) and use the scalar x inside it");
      params.push_back(v);
    }
    // Symbolic sizes in the parameters' tensor types (pl.dynamic dimensions) are passed too,
    // so that the kernel can compute with them (pl.tensor.dim, loop bounds, valid shapes).
    std::unordered_set<const Var*> have;
    for (auto& p : params) have.insert(p.get());
    const size_t explicit_params = params.size();
    for (size_t i = 0; i < explicit_params; ++i)
      if (auto* t = params[i]->type->as<TensorType>())
        for (auto& d : t->shape) collect_size_vars(d, have, params);
    // Values defined inside and used after the scope become results.
    VarUses outside_uses = uses_outside(s);
    std::vector<VarPtr> results;
    for (auto& v : inner.defined) {
      if (!outside_uses.used_set.count(v.get())) continue;
      if (!v->type->as<TensorType>() && !v->type->as<ScalarType>())
        fail(ErrorKind::kType, s->span,
             "'" + v->name + "' is a tile computed inside the pl.at scope and used after it; tiles cannot leave a core",
             "store it to a tensor with pl.store(tile, offsets, tensor) inside the scope and use the tensor after it");
      results.push_back(v);
    }
    WriteTracker writes;
    writes.visit(s->body);
    std::vector<ParamDirection> dirs;
    for (auto& p : params) {
      bool written = writes.written_set.count(p.get());
      dirs.push_back(!written ? ParamDirection::In
                              : (writes.read_set.count(p.get()) ? ParamDirection::InOut : ParamDirection::Out));
    }
    std::vector<TypePtr> ret_types;
    std::vector<ExprPtr> ret_values;
    for (auto& r : results) {
      ret_types.push_back(r->type);
      ret_values.push_back(r);
    }
    std::vector<StmtPtr> body_stmts;
    if (auto* seq = s->body->as<SeqStmts>())
      body_stmts = seq->stmts;
    else
      body_stmts.push_back(s->body);
    body_stmts.push_back(ReturnStmt::make(ret_values, s->span));
    // name_hint= names the kernel (its .pto file, pass dumps and swimlane lane); a name that
    // another function has already gets a suffix _1, _2, ...
    std::string name = s->task.name_hint.empty() ? orch_.name + "_incore_" + std::to_string(out_->size())
                                                 : s->task.name_hint;
    if (taken_->count(name)) {
      int k = 1;
      while (taken_->count(name + "_" + std::to_string(k))) ++k;
      name += "_" + std::to_string(k);
    }
    taken_->insert(name);
    out_->push_back(Function::make(name, params, dirs, ret_types, SeqStmts::make(body_stmts, s->span),
                                   function_type_for(s->level), s->span));

    // SPMD block index/count parameters get placeholder arguments; the runtime fills them per block.
    std::vector<ExprPtr> args;
    for (auto& p : params) {
      bool block_var = false;
      for (auto& b : s->block_vars) block_var |= b.get() == p.get();
      args.push_back(block_var ? ConstInt::make(0, p->type->as<ScalarType>()->dtype, s->span) : ExprPtr(p));
    }
    TypePtr call_type = ret_types.empty()      ? NoneType::make()
                        : ret_types.size() == 1 ? ret_types[0]
                                                : TupleType::make(ret_types);
    ExprPtr call = FuncCall::make(name, args, call_type, s->span, s->task);
    if (results.empty()) return EvalStmt::make(call, s->span);
    if (results.size() == 1) return AssignStmt::make(results[0], call, s->span);
    auto tuple = Var::make(name + "_results", call_type, s->span);
    std::vector<StmtPtr> stmts = {AssignStmt::make(tuple, call, s->span)};
    for (size_t i = 0; i < results.size(); ++i)
      stmts.push_back(AssignStmt::make(results[i], TupleGetItem::make(tuple, static_cast<int>(i), s->span), s->span));
    return SeqStmts::make(stmts, s->span);
  }

 private:
  // Uses of Vars anywhere in the orchestration except inside scope `s`.
  VarUses uses_outside(const std::shared_ptr<const ScopeStmt>& s) {
    class Collector : public IRVisitor {
     public:
      const Stmt* skip;
      VarUses uses;
      void visit(const StmtPtr& st) override {
        if (st.get() != skip) IRVisitor::visit(st);
      }
      using IRVisitor::visit;

     protected:
      void visit_var(const VarPtr& v) override {
        if (uses.used_set.insert(v.get()).second) uses.used.push_back(v);
      }
    } c;
    c.skip = s.get();
    c.visit(orch_.body);
    return std::move(c.uses);
  }

  const Function& orch_;
  std::vector<FunctionPtr>* out_;
  std::unordered_set<std::string>* taken_;
};

}  // namespace

std::vector<WrittenInput> written_inputs(const Function& f) {
  WriteTracker writes;
  writes.visit(f.body);
  std::vector<WrittenInput> out;
  for (size_t i = 0; i < f.params.size() && i < f.directions.size(); ++i) {
    const Var* p = f.params[i].get();
    if (f.directions[i] != ParamDirection::In || !f.params[i]->type->as<TensorType>() || !writes.written_set.count(p))
      continue;
    out.push_back({static_cast<int>(i), writes.first_write[p], writes.read_set.count(p) > 0});
  }
  return out;
}

// `f` with each input parameter its body writes made Out / InOut (the same function when none).
static FunctionPtr with_written_directions(const FunctionPtr& f) {
  std::vector<WrittenInput> written = written_inputs(*f);
  if (written.empty()) return f;
  std::vector<ParamDirection> dirs = f->directions;
  for (const WrittenInput& w : written) dirs[w.param] = w.read ? ParamDirection::InOut : ParamDirection::Out;
  return Function::make(f->name, f->params, dirs, f->return_types, f->body, f->func_type, f->span, f->level, f->role,
                        f->attrs);
}

// Whether `f` calls a kernel function of `program` (an Opaque caller of kernels orchestrates).
static bool calls_kernel(const Function& f, const ProgramPtr& program) {
  struct Finder : IRVisitor {
    const ProgramPtr& program;
    bool found = false;
    explicit Finder(const ProgramPtr& p) : program(p) {}
    void visit_func_call(const FuncCall& c) override {
      auto callee = program->find(c.callee);
      found |= callee && is_kernel_function(callee->func_type);
      IRVisitor::visit_func_call(c);
    }
  } finder(program);
  finder.visit_function(f);
  return finder.found;
}

ProgramPtr outline_incore(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions, outlined;
  std::unordered_set<std::string> taken;
  for (auto& f : program->functions) taken.insert(f->name);
  for (auto& declared : program->functions) {
    FunctionPtr f = with_written_directions(declared);
    if (f->func_type != FunctionType::Orchestration && f->func_type != FunctionType::Opaque) {
      functions.push_back(f);
      continue;
    }
    size_t before = outlined.size();
    Outliner outliner(*f, &outlined, &taken);
    FunctionPtr g = outliner.mutate_function(f);
    // An Opaque function that launches scopes is an orchestration (PyPTO promotes it).
    if (f->func_type == FunctionType::Opaque && (outlined.size() > before || calls_kernel(*f, program)))
      g = Function::make(g->name, g->params, g->directions, g->return_types, g->body, FunctionType::Orchestration,
                         g->span, g->level, g->role, g->attrs);
    functions.push_back(g);
  }
  bool promoted = false;
  for (size_t i = 0; i < functions.size(); ++i) promoted |= functions[i] != program->functions[i];
  if (outlined.empty() && !promoted) return program;
  for (auto& f : outlined) functions.push_back(f);
  return Program::make(program->name, functions);
}

}  // namespace pypto::passes

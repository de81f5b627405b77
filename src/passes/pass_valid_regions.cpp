// PassValidRegions: an orchestration view with a valid region smaller than its window
// (pl.slice(..., valid_shape=[...]) with run-time values allowed, pl.slice(..., clamp=True),
// pl.tensor.set_validshape, pl.tensor.view(..., valid_shape=)) passed to a kernel carries
// that valid region into the kernel (PyPTO: the view's physical shape is the static window,
// its valid shape travels with the tensor argument).
//
// The valid extents become trailing INDEX scalar parameters of the kernel, one per axis that
// some launch narrows (`<param>_valid<axis>`); every launch of the kernel passes them (the
// view's valid extents, or the full extent where its argument is whole). Inside the kernel
// the parameter is replaced by a whole-window pl.slice of itself with those valid extents,
// so LowerTensorOps cuts the loads of it to the valid part and the stores into it to the
// valid part (the mechanism of a kernel-side valid_shape).
#include <map>
#include <set>
#include <unordered_map>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

using Valid = std::vector<ExprPtr>;  // per axis: the valid extent, null where full; empty: all full

ExprPtr idx(int64_t v) { return ConstInt::make(v); }
ExprPtr as_index(const ExprPtr& e) {
  auto* s = e && e->type ? e->type->as<ScalarType>() : nullptr;
  return s && s->dtype != DataType::INDEX ? CastExpr::make(e, DataType::INDEX) : e;
}
ExprPtr vmin(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(std::min(*ca, *cb));
  if (a.get() == b.get()) return a;
  return BinaryExpr::make(BinaryOp::Min, as_index(a), as_index(b));
}
ExprPtr vmax0(const ExprPtr& a) {
  auto ca = as_const_int(a);
  if (ca) return idx(std::max<int64_t>(0, *ca));
  return BinaryExpr::make(BinaryOp::Max, idx(0), as_index(a));
}
ExprPtr vsub(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(*ca - *cb);
  if (cb && *cb == 0) return a;
  return BinaryExpr::make(BinaryOp::Sub, as_index(a), as_index(b));
}
bool same(const ExprPtr& a, const ExprPtr& b) {
  auto x = as_const_int(a), y = as_const_int(b);
  return a.get() == b.get() || (x && y && *x == *y);
}
const std::vector<ExprPtr>& elems(const ExprPtr& e) {
  static const std::vector<ExprPtr> none;
  auto* l = e ? e->as<ListExpr>() : nullptr;
  return l ? l->elems : none;
}
Valid normalized(Valid v) {
  for (auto& e : v)
    if (e) return v;
  return {};
}

// Walks the orchestration functions: the valid region of each tensor Var, and per launch
// the valid region of each tensor argument. With `extra` set, launches get the extra
// arguments of the narrowed parameters of their callee.
class OrchValid : public IRMutator {
 public:
  // (callee, param index) -> the axes some launch narrows.
  std::map<std::pair<std::string, size_t>, std::set<size_t>> narrowed;
  const std::map<std::string, std::vector<std::pair<size_t, size_t>>>* extra = nullptr;  // callee -> (param, axis)
  const ProgramPtr* program = nullptr;

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    StmtPtr r = IRMutator::mutate_assign(s);
    if (auto* c = s->value->as<Call>()) track(*c, s->var);
    if (auto* v = s->value->as<Var>(); v && valid_.count(v)) valid_[s->var.get()] = valid_[v];
    return r;
  }

  ExprPtr mutate_func_call(const std::shared_ptr<const FuncCall>& c) override {
    auto r = std::static_pointer_cast<const FuncCall>(IRMutator::mutate_func_call(c));
    FunctionPtr callee = (*program)->find(c->callee);
    if (!callee || !is_kernel_function(callee->func_type)) return r;
    if (!extra) {
      for (size_t i = 0; i < c->args.size() && i < callee->params.size(); ++i) {
        Valid v = valid_of(c->args[i]);
        for (size_t a = 0; a < v.size(); ++a)
          if (v[a]) narrowed[{c->callee, i}].insert(a);
      }
      return r;
    }
    auto it = extra->find(c->callee);
    if (it == extra->end()) return r;
    std::vector<ExprPtr> args = r->args;
    for (auto [i, a] : it->second) {
      Valid v = valid_of(c->args[i]);
      ExprPtr e = a < v.size() && v[a] ? v[a] : extent(c->args[i], a);
      args.push_back(as_index(e));
    }
    auto out = std::make_shared<FuncCall>(r->callee, args, r->type, r->span);
    out->task = r->task;
    return out;
  }

 private:
  Valid valid_of(const ExprPtr& e) {
    if (auto* c = e ? e->as<Call>() : nullptr) return region(*c, "the view");  // a view written in the call
    auto* v = e ? e->as<Var>() : nullptr;
    auto it = v ? valid_.find(v) : valid_.end();
    return it == valid_.end() ? Valid{} : it->second;
  }
  static ExprPtr extent(const ExprPtr& t, size_t a) { return t->type->as<TensorType>()->shape.at(a); }

  void track(const Call& c, const VarPtr& var) {
    Valid v = region(c, "'" + var->name + "'");
    if (!v.empty()) valid_[var.get()] = v;
  }

  // The valid region of the view op call `c` (empty: whole, or not a view).
  Valid region(const Call& c, const std::string& name) {
    const std::string& op = c.op->name;
    if (c.args.empty() || !c.args[0] || !c.args[0]->type || !c.args[0]->type->as<TensorType>()) return {};
    const Valid parent = valid_of(c.args[0]);
    auto* result = c.type ? c.type->as<TensorType>() : nullptr;
    if (!result) return {};
    if (op == "tensor.slice") {
      const auto& shape = elems(c.args[1]);
      const auto& offs = elems(c.args[2]);
      const auto& given = elems(c.args[3]);
      const auto& pshape = c.args[0]->type->as<TensorType>()->shape;
      const bool clamp = std::get<bool>(c.attrs.at("clamp"));
      std::set<int64_t> dropped;
      const int64_t rank = static_cast<int64_t>(shape.size());
      for (int64_t d : std::get<std::vector<int64_t>>(c.attrs.at("drop_dims"))) dropped.insert(d < 0 ? d + rank : d);
      Valid v;
      for (size_t a = 0; a < shape.size(); ++a) {
        ExprPtr ext = shape[a], val = ext;
        if (a < parent.size() && parent[a]) val = vmin(val, vmax0(vsub(parent[a], offs[a])));
        if (clamp) val = vmin(val, vmax0(vsub(pshape[a], offs[a])));
        if (a < given.size()) val = vmin(val, given[a]);
        const bool full = same(val, ext);
        if (dropped.count(static_cast<int64_t>(a))) {
          if (!full)
            fail(ErrorKind::kValue, c.span,
                 "the slice " + name + " drops axis " + std::to_string(a) + ", whose valid extent may be smaller than 1",
                 "keep the axis (a slice a:a+1 instead of an integer index) or slice a valid element");
          continue;
        }
        v.push_back(full ? nullptr : val);
      }
      return normalized(v);
    } else if (op == "tensor.set_validshape") {
      Valid v = {same(c.args[1], result->shape[0]) ? nullptr : c.args[1], same(c.args[2], result->shape[1]) ? nullptr : c.args[2]};
      return normalized(v);
    } else if (op == "tensor.view" && c.args.size() > 2 && c.args[2]) {
      const auto& given = elems(c.args[2]);
      Valid v;
      for (size_t a = 0; a < given.size(); ++a) v.push_back(same(given[a], result->shape[a]) ? nullptr : given[a]);
      return normalized(v);
    } else if (op == "tensor.transpose" && !parent.empty()) {
      const int64_t rank = static_cast<int64_t>(parent.size());
      int64_t a1 = std::get<int64_t>(c.attrs.at("axis1")), a2 = std::get<int64_t>(c.attrs.at("axis2"));
      Valid v = parent;
      std::swap(v[a1 < 0 ? a1 + rank : a1], v[a2 < 0 ? a2 + rank : a2]);
      return v;
    } else if (!parent.empty() && (op == "tensor.view" || op == "tensor.reshape" || op == "tensor.reinterpret_view")) {
      fail(ErrorKind::kValue, c.span,
           "pl." + op.substr(7) + " of '" + (c.args[0]->as<Var>() ? c.args[0]->as<Var>()->name : std::string("view")) +
               "', a view with a valid region smaller than its shape, in the orchestration: a valid region is carried "
               "through slices and transposes only",
           "reshape the whole window first and then narrow it (pl.slice(..., valid_shape=) or pl.tensor.view(..., "
           "valid_shape=))");
    }
    return {};
  }

  std::unordered_map<const Var*, Valid> valid_;
};

// Replaces the uses of the narrowed parameters by their narrowed views. A value written
// through such a view (o = pl.store(t, offs, o)) that the kernel returns is returned as the
// parameter itself (its newest version), as a returned Out parameter is.
class Substitute : public IRMutator {
 public:
  std::unordered_map<const Var*, VarPtr> to;
  std::unordered_map<const Var*, VarPtr> root;  // a view or a write through it -> the parameter

 protected:
  ExprPtr mutate_var(const VarPtr& v) override {
    auto it = to.find(v.get());
    return it == to.end() ? IRMutator::mutate_var(v) : it->second;
  }
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    StmtPtr r = IRMutator::mutate_assign(s);
    auto* c = r->as<AssignStmt>() ? r->as<AssignStmt>()->value->as<Call>() : nullptr;
    if (c && !c->op->writes.empty()) {
      size_t k = 0;
      for (const auto& p : c->op->params) {
        if (p.kind == ParamKind::kAttr) continue;
        if (p.name == c->op->writes && k < c->args.size()) {
          auto* t = c->args[k] ? c->args[k]->as<Var>() : nullptr;
          if (auto it = t ? root.find(t) : root.end(); it != root.end()) root[s->var.get()] = it->second;
        }
        ++k;
      }
    }
    return r;
  }
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    auto r = std::static_pointer_cast<const ReturnStmt>(IRMutator::mutate_return(s));
    std::vector<ExprPtr> values = r->values;
    bool changed = false;
    for (auto& v : values)
      if (auto it = v && v->as<Var>() ? root.find(v->as<Var>()) : root.end(); it != root.end()) {
        v = it->second;
        changed = true;
      }
    return changed ? ReturnStmt::make(values, r->span) : r;
  }
};

FunctionPtr narrow_kernel(const FunctionPtr& f, const std::vector<std::pair<size_t, size_t>>& extra) {
  std::vector<VarPtr> params = f->params;
  std::vector<ParamDirection> dirs = f->directions;
  std::map<size_t, Valid> valid;  // param -> per-axis valid Var
  for (auto [i, a] : extra) {
    const VarPtr& p = f->params[i];
    auto v = Var::make(p->name + "_valid" + std::to_string(a), ScalarType::make(DataType::INDEX), p->span);
    params.push_back(v);
    dirs.push_back(ParamDirection::In);
    Valid& pv = valid[i];
    pv.resize(p->type->as<TensorType>()->shape.size());
    pv[a] = v;
  }
  Substitute sub;
  std::vector<StmtPtr> head;
  for (auto& [i, pv] : valid) {
    const VarPtr& p = f->params[i];
    const auto& shape = p->type->as<TensorType>()->shape;
    std::vector<ExprPtr> zeros, given;
    for (size_t a = 0; a < shape.size(); ++a) {
      zeros.push_back(idx(0));
      given.push_back(pv[a] ? ExprPtr(pv[a]) : shape[a]);
    }
    ExprPtr view = make_op_call("tensor.slice", {p, ListExpr::make(shape), ListExpr::make(zeros)},
                                {{"valid_shape", ListExpr::make(given)}}, {}, p->span);
    auto nv = Var::make(p->name, view->type, p->span);
    head.push_back(AssignStmt::make(nv, view, p->span));
    sub.to[p.get()] = nv;
    sub.root[nv.get()] = p;
  }
  StmtPtr body = sub.mutate(f->body);
  std::vector<StmtPtr> stmts = head;
  if (auto* seq = body->as<SeqStmts>()) stmts.insert(stmts.end(), seq->stmts.begin(), seq->stmts.end());
  else stmts.push_back(body);
  return Function::make(f->name, params, dirs, f->return_types, SeqStmts::make(stmts, f->body->span), f->func_type,
                        f->span, f->level, f->role, f->attrs);
}

}  // namespace

ProgramPtr pass_valid_regions(const ProgramPtr& program, const PassContext&) {
  OrchValid scan;
  scan.program = &program;
  for (auto& f : program->functions)
    if (!is_kernel_function(f->func_type)) scan.mutate(f->body);
  if (scan.narrowed.empty()) return program;
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> extra;
  for (auto& [key, axes] : scan.narrowed)
    for (size_t a : axes) extra[key.first].push_back({key.second, a});
  OrchValid rewrite;
  rewrite.program = &program;
  rewrite.extra = &extra;
  std::vector<FunctionPtr> fns;
  for (auto& f : program->functions) {
    if (auto it = extra.find(f->name); it != extra.end()) {
      fns.push_back(narrow_kernel(f, it->second));
    } else if (!is_kernel_function(f->func_type)) {
      StmtPtr body = rewrite.mutate(f->body);
      fns.push_back(body == f->body ? f
                                    : Function::make(f->name, f->params, f->directions, f->return_types, body,
                                                     f->func_type, f->span, f->level, f->role, f->attrs));
    } else {
      fns.push_back(f);
    }
  }
  return Program::make(program->name, fns);
}

}  // namespace pypto::passes

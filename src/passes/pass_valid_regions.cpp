// PassValidRegions: an orchestration view with a valid region smaller than its window
// (pl.slice(..., valid_shape=[...]) with run-time values allowed, pl.slice(..., clamp=True),
// pl.tensor.set_validshape, pl.tensor.view(..., valid_shape=)) passed to a kernel carries
// that valid region into the kernel (PyPTO: the view's physical shape is the static window,
// its valid shape travels with the tensor argument).
//
// The valid extents become trailing INDEX scalar parameters of the kernel, one per axis that
// some launch narrows (`<param>_valid<axis>`); every launch of the kernel passes them (the
// view's valid extents, or the full extent where its argument is whole). Inside the kernel
// the tile loads and stores of the parameter are cut to them (class Narrow), and its other
// uses read a whole-window pl.slice of itself with those valid extents, which LowerTensorOps
// folds into its loads and stores the same way (the mechanism of a kernel-side valid_shape).
#include <map>
#include <set>
#include <unordered_map>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;
using namespace ops;

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
    return FuncCall::make(r->callee, args, r->type, r->span, r->task);
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
                 "a slice of " + (c.args[0]->as<Var>() ? "'" + c.args[0]->as<Var>()->name + "'" : name) + " drops axis " + std::to_string(a) + ", whose valid extent may be smaller than 1",
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

// Inside a kernel: the tile loads of a narrowed parameter (and of its versions: the results
// of stores into it, the loop-carried values it starts) get their valid_shape cut to the
// parameter's valid region, and the tiles stored into it are cut to it (tile.set_validshape)
// before the store. Every other use of the parameter itself (tensor-level ops, views of it)
// reads its narrowed view, which LowerTensorOps folds the same way.
class Narrow : public IRMutator {
 public:
  std::unordered_map<const Var*, VarPtr> to;     // the parameter -> its narrowed view
  std::unordered_map<const Var*, Valid> valid;   // the parameter and its versions -> valid extents

 protected:
  ExprPtr mutate_call(const std::shared_ptr<const Call>& c0) override {
    auto r = std::static_pointer_cast<const Call>(IRMutator::mutate_call(c0));
    const std::string& op = r->op->name;
    if (op == "tile.load") {
      const Valid* v = tracked(r->args[0]);
      if (!v) return r;
      auto shape = std::get<std::vector<int64_t>>(r->attrs.at("shape"));
      std::vector<ExprPtr> given = elems(r->args[2]);
      if (given.empty()) given = {idx(shape[0]), idx(shape[1])};
      std::vector<ExprPtr> cut = cut_valid(*v, elems(r->args[1]), given, r->span);
      return make_op_call(op, {r->args[0], r->args[1]}, {{"valid_shape", ListExpr::make(cut)}},
                          {{"shape", shape}, {"target_memory", r->attrs.at("target_memory")}, {"clamp", r->attrs.at("clamp")}},
                          r->span);
    }
    const bool store = op == "tile.store";
    const bool assemble = op == "tensor.assemble" && r->args[1] && r->args[1]->type->as<TileType>();
    if (store || assemble) {
      const size_t ti = store ? 2 : 0, si = store ? 0 : 1;
      const Valid* v = tracked(r->args[ti]);
      if (!v) return r;
      auto* tile = r->args[si]->type->as<TileType>();
      if (!tile || tile->shape.size() != 2) return r;
      std::vector<ExprPtr> given = tile->valid_shape.empty() ? tile->shape : tile->valid_shape;
      std::vector<ExprPtr> cut = cut_valid(*v, elems(r->args[store ? 1 : 2]), given, r->span);
      std::vector<ExprPtr> args = r->args;
      args[si] = make_op_call("tile.set_validshape", {args[si]}, {{"valid_shape", ListExpr::make(cut)}}, {}, r->span);
      return Call::make(r->op, args, r->attrs, r->span);
    }
    if (op == "tensor.read" || op == "tensor.write" || op == "tensor.dim") return r;
    std::vector<ExprPtr> args = r->args;
    bool changed = false;
    for (auto& a : args)
      if (auto it = a && a->as<Var>() ? to.find(a->as<Var>()) : to.end(); it != to.end()) {
        a = it->second;
        changed = true;
      }
    return changed ? Call::make(r->op, args, r->attrs, r->span) : ExprPtr(r);
  }

  ExprPtr mutate_var(const VarPtr& v) override {
    auto it = retyped_.find(v.get());
    return it == retyped_.end() ? IRMutator::mutate_var(v) : it->second;
  }
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    StmtPtr r = IRMutator::mutate_assign(s);
    auto* a = r->as<AssignStmt>();
    if (a->value->type && a->value->type->as<TileType>() && !structural_equal(a->value->type, a->var->type)) {
      auto nv = Var::make(a->var->name, a->value->type, a->var->span);  // a tile narrowed by a load cut above
      retyped_[s->var.get()] = nv;
      r = AssignStmt::make(nv, a->value, s->span);
      a = r->as<AssignStmt>();
    }
    if (auto* v = a->value->as<Var>()) {
      follow(v, s->var.get());
    } else if (auto* c = a->value->as<Call>(); c && !c->op->writes.empty()) {
      size_t k = 0;
      for (const auto& p : c->op->params) {
        if (p.kind == ParamKind::kAttr) continue;
        if (p.name == c->op->writes && k < c->args.size() && c->args[k] && c->args[k]->as<Var>())
          follow(c->args[k]->as<Var>(), s->var.get());
        ++k;
      }
    }
    return r;
  }

  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    for (size_t i = 0; i < s->init_values.size() && i < s->iter_args.size(); ++i)
      if (auto* v = s->init_values[i]->as<Var>()) {
        follow(v, s->iter_args[i].get());
        if (i < s->return_vars.size()) follow(v, s->return_vars[i].get());
      }
    return IRMutator::mutate_for(s);
  }

 private:
  std::unordered_map<const Var*, VarPtr> retyped_;
  void follow(const Var* from, const Var* to_var) {
    auto it = valid.find(from);
    if (it == valid.end()) return;
    valid[to_var] = it->second;
  }
  const Valid* tracked(const ExprPtr& e) const {
    auto* v = e ? e->as<Var>() : nullptr;
    auto it = v ? valid.find(v) : valid.end();
    return it == valid.end() ? nullptr : &it->second;
  }
  // The valid shape `given` of a tile at `offs` of the parameter, cut to its valid region.
  static std::vector<ExprPtr> cut_valid(const Valid& v, const std::vector<ExprPtr>& offs, std::vector<ExprPtr> given,
                                        const Span& span) {
    const size_t n = v.size(), m = std::min<size_t>(2, n);
    for (size_t a = 0; a + m < n; ++a)
      if (v[a])
        fail(ErrorKind::kValue, span,
             "a tile access of a kernel parameter whose axis " + std::to_string(a) + " is only partly valid (the view "
             "the orchestration passes): a tile covers the last two axes, so only those may be narrowed",
             "narrow only the last two axes in the orchestration, or drop the axis with an integer index (x[i])");
    for (size_t k = 0; k < m; ++k) {
      const size_t a = n - m + k, t = n == 1 ? 1 : k;
      if (v[a] && a < offs.size()) given[t] = vmin(given[t], vmax0(vsub(v[a], offs[a])));
    }
    return given;
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
  Narrow sub;
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
    sub.valid[p.get()] = pv;
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

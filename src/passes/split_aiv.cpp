// SplitAiv: a kernel function holding a `for aiv_id in pl.split_aiv(2, mode=...)` region
// (cube work outside it, vector work inside) becomes a Group function (a mixed task) of one
// AIC function and one AIV function called for each of the two vector lanes; the region's
// named crossings (pl.aiv_shard / pl.aic_gather) become cross-core FIFO pushes and pops.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/var_uses.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;
using namespace ops;

const char* kFixTop =
    "write the region at the top level of the kernel function: cube work before and after it, vector work inside";

bool is_region(const StmtPtr& s) {
  auto* f = s ? s->as<ForStmt>() : nullptr;
  return f && f->attrs.count("split_aiv");
}

void flatten(const StmtPtr& s, std::vector<StmtPtr>& out) {
  if (!s) return;
  if (auto* seq = s->as<SeqStmts>()) {
    for (auto& x : seq->stmts) flatten(x, out);
  } else {
    out.push_back(s);
  }
}

// A region nested in a loop / branch (outside the subset this pass lowers).
class NestedRegion : public IRVisitor {
 public:
  const ForStmt* found = nullptr;
  void visit_for(const ForStmt& s) override {
    if (s.attrs.count("split_aiv") && !found) found = &s;
    IRVisitor::visit_for(s);
  }
};

bool cube_memory(MemorySpace m) {
  return m == MemorySpace::Mat || m == MemorySpace::Left || m == MemorySpace::Right || m == MemorySpace::Acc ||
         m == MemorySpace::Bias;
}

// The side of the cluster an op call belongs to: 1 cube, 2 vector, 0 either (loads, creates,
// scalar work: no tile operand).
int side_of(const Call& c) {
  bool tile_arg = false, cube_arg = false, vec_arg = false;
  for (auto& a : c.args)
    if (auto* t = a && a->type ? a->type->as<TileType>() : nullptr) {
      tile_arg = true;
      (cube_memory(t->memory) ? cube_arg : vec_arg) = true;
    }
  auto* rt = c.type ? c.type->as<TileType>() : nullptr;
  if (rt && rt->memory != MemorySpace::Vec) return 1;  // a matmul, a move into a cube buffer
  if (!tile_arg) return 0;
  if (cube_arg && !vec_arg && !rt) return 1;  // a store of an Acc / Mat tile
  return cube_arg && !rt ? 1 : 2;
}

// Every op call of a statement list, with the statement it belongs to.
class Calls : public IRVisitor {
 public:
  std::vector<const Call*> calls;
  void visit_call(const Call& c) override {
    calls.push_back(&c);
    IRVisitor::visit_call(c);
  }
};

const Call* call_of(const StmtPtr& s, const char* op) {
  auto* a = s->as<AssignStmt>();
  auto* c = a ? a->value->as<Call>() : nullptr;
  return c && c->op->name == op ? c : nullptr;
}

std::string shown(const Call& c) { return "pl." + c.op->name; }

StmtPtr eval(const std::string& op, std::vector<ExprPtr> args, Attrs attrs, const Span& sp) {
  return EvalStmt::make(make_op_call(op, args, {}, attrs, sp), sp);
}

std::vector<int64_t> shape_of(const TileType& t) {
  std::vector<int64_t> s;
  for (auto& e : t.shape) s.push_back(as_const_int(e).value_or(0));
  return s;
}

// The parameter a tensor value writes into (through a chain of stores), or null.
VarPtr root_param(const VarPtr& v, const std::unordered_map<const Var*, VarPtr>& written_from,
                  const std::unordered_set<const Var*>& params) {
  VarPtr cur = v;
  for (int guard = 0; cur && guard < 1000; ++guard) {
    if (params.count(cur.get())) return cur;
    auto it = written_from.find(cur.get());
    if (it == written_from.end()) return nullptr;
    cur = it->second;
  }
  return nullptr;
}

TypePtr result_type(const std::vector<ExprPtr>& values) {
  if (values.empty()) return NoneType::make();
  if (values.size() == 1) return values[0]->type;
  std::vector<TypePtr> ts;
  for (auto& v : values) ts.push_back(v->type);
  return TupleType::make(ts);
}

std::vector<FunctionPtr> split_function(const FunctionPtr& f, const ProgramPtr& program) {
  std::vector<StmtPtr> stmts;
  flatten(f->body, stmts);
  const ForStmt* region = nullptr;
  size_t at = 0;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (!is_region(stmts[i])) {
      NestedRegion nested;
      nested.visit(stmts[i]);
      if (nested.found)
        fail(ErrorKind::kValue, nested.found->span,
             "a pl.split_aiv region of '" + f->name + "' is inside a loop or branch; this compiler splits only regions "
             "at the top level of a kernel function",
             kFixTop);
      continue;
    }
    if (region)
      fail(ErrorKind::kValue, stmts[i]->span,
           "'" + f->name + "' has a second pl.split_aiv region; this compiler splits one region per kernel function",
           "put the vector work of the function in one region, or write a second kernel function for the other");
    region = stmts[i]->as<ForStmt>();
    at = i;
  }
  if (!region) return {f};
  if (f->func_type != FunctionType::InCore)
    fail(ErrorKind::kValue, region->span,
         "a pl.split_aiv region is in the " + std::string(function_type_name(f->func_type)) + " function '" + f->name +
             "'; a region divides an InCore kernel (cube and vector work) between the cores of a cluster",
         "write the region in a @pl.function(type=pl.FunctionType.InCore) function (or a pl.at body)");
  const int64_t mode = std::get<int64_t>(region->attrs.at("split_aiv"));
  const Span& rspan = region->span;
  std::vector<StmtPtr> pre(stmts.begin(), stmts.begin() + at), post(stmts.begin() + at + 1, stmts.end()), body;
  flatten(region->body, body);

  std::unordered_set<const Var*> params;
  for (auto& p : f->params) params.insert(p.get());
  std::unordered_map<const Var*, VarPtr> written_from;  // a store's result -> the tensor it wrote
  auto note_writes = [&](const std::vector<StmtPtr>& list) {
    for (auto& s : list)
      if (auto* a = s->as<AssignStmt>())
        if (auto* c = a->value->as<Call>(); c && !c->op->writes.empty())
          for (size_t k = 0; k < c->op->params.size() && k < c->args.size(); ++k)
            if (c->op->params[k].name == c->op->writes)
              if (c->args[k]->as<Var>()) written_from[a->var.get()] = std::static_pointer_cast<const Var>(c->args[k]);
  };
  note_writes(pre);
  note_writes(body);
  note_writes(post);

  // Which side each op is on: vector ops inside the region, cube ops outside.
  auto check_side = [&](const std::vector<StmtPtr>& list, bool inside) {
    for (auto& s : list) {
      Calls calls;
      calls.visit(s);
      for (const Call* c : calls.calls) {
        if (c->op->name == "tile.aiv_shard" || c->op->name == "tile.aic_gather") continue;
        const int side = side_of(*c);
        if (!inside && side == 2)
          fail(ErrorKind::kValue, c->span.line ? c->span : s->span,
               "vector op " + shown(*c) + " is outside the pl.split_aiv region of '" + f->name +
                   "'; once a function has a region its vector work runs on the AIV lanes, inside the region",
               "move it into the region (a cube result reaches it through t = pl.aiv_shard(x) at the region top)");
        if (inside && side == 1)
          fail(ErrorKind::kValue, c->span.line ? c->span : s->span,
               "cube op " + shown(*c) + " is inside the pl.split_aiv region of '" + f->name +
                   "'; the region runs on the AIV lanes, which have no cube",
               "move it out of the region (a lane's result reaches it through g = pl.aic_gather(v) at the region bottom)");
      }
    }
  };
  check_side(pre, false);
  check_side(body, true);
  check_side(post, false);

  // Values defined on the cube before the region; scalar ones the lanes may recompute.
  std::unordered_set<const Var*> pre_defs, body_defs;
  std::vector<StmtPtr> scalar_pre;
  std::unordered_set<const Var*> scalar_ok(params);
  for (auto& s : pre) {
    VarUses u = collect_var_uses(s);
    for (auto& d : u.defined) pre_defs.insert(d.get());
    auto* a = s->as<AssignStmt>();
    if (a && a->var->type->as<ScalarType>()) {
      bool ok = true;
      for (auto& v : u.free_vars()) ok &= scalar_ok.count(v.get()) > 0;
      if (auto* c = a->value->as<Call>(); c && c->op->effects) ok = false;
      if (ok) {
        scalar_pre.push_back(s);
        scalar_ok.insert(a->var.get());
      }
    }
  }
  // Crossings into the region must be pl.aiv_shard.
  std::vector<std::pair<VarPtr, const Call*>> shards, gathers;
  for (auto& s : body) {
    if (auto* c = call_of(s, "tile.aiv_shard")) {
      shards.push_back({s->as<AssignStmt>()->var, c});
      continue;
    }
    if (auto* c = call_of(s, "tile.aic_gather")) gathers.push_back({s->as<AssignStmt>()->var, c});
    VarUses u = collect_var_uses(s);
    for (auto& d : u.defined) body_defs.insert(d.get());
    for (auto& v : u.free_vars()) {
      if (v.get() == region->loop_var.get() || scalar_ok.count(v.get()) || !pre_defs.count(v.get())) continue;
      fail(ErrorKind::kValue, s->span,
           "'" + v->name + "' is computed on the cube, before the pl.split_aiv region of '" + f->name +
               "', and used inside it without being named as a crossing",
           v->type->as<TileType>() ? "write " + v->name + "_v = pl.aiv_shard(" + v->name +
                                         ") at the top of the region and use " + v->name + "_v"
                                   : "compute '" + v->name + "' inside the region, or from the function's parameters");
    }
  }
  for (auto& [v, c] : gathers) body_defs.insert(v.get());
  for (auto& [v, c] : shards) body_defs.insert(v.get());
  if (shards.size() > 2 || gathers.size() > 2)
    fail(ErrorKind::kValue, rspan,
         "the pl.split_aiv region of '" + f->name + "' names " + std::to_string(std::max(shards.size(), gathers.size())) +
             " crossings one way; a cross-core FIFO holds 2 tiles, and this compiler frees them at the end of each side",
         "name at most 2 pl.aiv_shard and 2 pl.aic_gather values per region (split the function in two)");
  std::unordered_set<const Var*> gathered;
  for (auto& [v, c] : gathers) gathered.insert(v.get());
  std::vector<ExprPtr> returned;
  for (auto& s : post) {
    VarUses u = collect_var_uses(s);
    for (auto& v : u.free_vars()) {
      if (!body_defs.count(v.get()) || gathered.count(v.get())) continue;
      if (s->as<ReturnStmt>() && v->type->as<TensorType>()) continue;  // a tensor the lanes stored
      fail(ErrorKind::kValue, s->span,
           "'" + v->name + "' is computed on the vector lanes, inside the pl.split_aiv region of '" + f->name +
               "', and used after it without being named as a crossing",
           v->type->as<TileType>() ? "write " + v->name + "_c = pl.aic_gather(" + v->name +
                                         ") at the bottom of the region and use " + v->name + "_c after it"
                                   : "compute '" + v->name + "' after the region, on the cube");
    }
    if (auto* r = s->as<ReturnStmt>()) returned = r->values;
  }

  // The AIC part: the cube work, a push of each shard, a pop of each gather.
  std::vector<StmtPtr> aic = pre, aic_frees;
  for (auto& [v, c] : shards) {
    if (mode == 0) {
      aic.push_back(eval("tile.tpush_to_aiv", {c->args[0]}, {{"aiv", int64_t{0}}}, c->span));
      aic.push_back(eval("tile.tpush_to_aiv", {c->args[0]}, {{"aiv", int64_t{1}}}, c->span));
    } else {
      aic.push_back(eval("tile.tpush_to_aiv", {c->args[0]}, {{"split", mode}}, c->span));
    }
  }
  for (auto& [v, c] : gathers) {
    auto* t = v->type->as<TileType>();
    Attrs attrs{{"shape", shape_of(*t)}, {"dtype", t->dtype}};
    if (mode == 0) {
      Attrs a0 = attrs, a1 = attrs;
      a1["aiv"] = int64_t{1};
      aic.push_back(AssignStmt::make(v, make_op_call("tile.tpop_from_aiv", {}, {}, a0, c->span), c->span));
      VarPtr other = Var::make(v->name + "_aiv1", v->type, c->span);  // lane 1's tile: freed unread
      aic.push_back(AssignStmt::make(other, make_op_call("tile.tpop_from_aiv", {}, {}, a1, c->span), c->span));
      aic_frees.push_back(eval("tile.tfree_to_aiv", {v}, {}, c->span));
      aic_frees.push_back(eval("tile.tfree_to_aiv", {other}, {{"aiv", int64_t{1}}}, c->span));
    } else {
      attrs["split"] = mode;
      aic.push_back(AssignStmt::make(v, make_op_call("tile.tpop_from_aiv", {}, {}, attrs, c->span), c->span));
      aic_frees.push_back(eval("tile.tfree_to_aiv", {v}, {{"split", mode}}, c->span));
    }
  }
  std::vector<ExprPtr> aic_ret, aiv_ret;
  for (auto& v : returned) (body_defs.count(v->as<Var>() ? static_cast<const Var*>(v.get()) : nullptr) ? aiv_ret : aic_ret).push_back(v);
  for (auto& s : post)
    if (!s->as<ReturnStmt>()) aic.push_back(s);
  aic.insert(aic.end(), aic_frees.begin(), aic_frees.end());
  if (!aic_ret.empty()) aic.push_back(ReturnStmt::make(aic_ret, f->span));

  // The AIV part (one function, called once per lane with aiv_id): pops, the region, pushes.
  std::vector<StmtPtr> aiv = scalar_pre, aiv_frees;
  for (auto& s : body) {
    if (auto* c = call_of(s, "tile.aiv_shard")) {
      const VarPtr& v = s->as<AssignStmt>()->var;
      auto* t = v->type->as<TileType>();
      Attrs attrs{{"shape", shape_of(*t)}, {"dtype", t->dtype}};
      if (mode) attrs["split"] = mode;
      aiv.push_back(AssignStmt::make(v, make_op_call("tile.tpop_from_aic", {}, {}, attrs, c->span), s->span));
      aiv_frees.push_back(eval("tile.tfree_to_aic", {v}, mode ? Attrs{{"split", mode}} : Attrs{}, c->span));
    } else if (auto* c = call_of(s, "tile.aic_gather")) {
      aiv.push_back(eval("tile.tpush_to_aic", {c->args[0]}, mode ? Attrs{{"split", mode}} : Attrs{}, c->span));
    } else {
      aiv.push_back(s);
    }
  }
  aiv.insert(aiv.end(), aiv_frees.begin(), aiv_frees.end());
  if (!aiv_ret.empty()) aiv.push_back(ReturnStmt::make(aiv_ret, f->span));

  auto fresh = [&](const std::string& base) {
    std::string n = base;
    for (int k = 1; program->find(n); ++k) n = base + "_" + std::to_string(k);
    return n;
  };
  const std::string aic_name = fresh(f->name + "_aic"), aiv_name = fresh(f->name + "_aiv");
  auto ret_types = [](const std::vector<ExprPtr>& vs) {
    std::vector<TypePtr> ts;
    for (auto& v : vs) ts.push_back(v->type);
    return ts;
  };
  FunctionPtr aic_fn = Function::make(aic_name, f->params, f->directions, ret_types(aic_ret), SeqStmts::make(aic, rspan),
                                      FunctionType::AIC, f->span);
  std::vector<VarPtr> aiv_params = f->params;
  std::vector<ParamDirection> aiv_dirs = f->directions;
  aiv_params.push_back(region->loop_var);
  aiv_dirs.push_back(ParamDirection::In);
  FunctionPtr aiv_fn = Function::make(aiv_name, aiv_params, aiv_dirs, ret_types(aiv_ret), SeqStmts::make(aiv, rspan),
                                      FunctionType::AIV, f->span);

  // The Group function keeps the kernel's name and signature: the orchestration's call of it
  // is now one mixed task.
  std::vector<ExprPtr> args(f->params.begin(), f->params.end());
  std::vector<StmtPtr> group;
  group.push_back(EvalStmt::make(FuncCall::make(aic_name, args, result_type(aic_ret), rspan), rspan));
  for (int64_t lane = 0; lane < 2; ++lane) {
    std::vector<ExprPtr> a = args;
    a.push_back(ConstInt::make(lane, DataType::INDEX, rspan));
    group.push_back(EvalStmt::make(FuncCall::make(aiv_name, a, result_type(aiv_ret), rspan), rspan));
  }
  std::vector<ExprPtr> group_ret;
  for (auto& v : returned) {
    auto* var = v->as<Var>();
    VarPtr root = var ? root_param(std::static_pointer_cast<const Var>(v), written_from, params) : nullptr;
    if (!root)
      fail(ErrorKind::kValue, v->span.line ? v->span : f->span,
           "'" + f->name + "' (split by pl.split_aiv) returns a value that is not a tensor it stored into a parameter",
           "return only the Out / InOut tensors the function stores into");
    group_ret.push_back(root);
  }
  if (!group_ret.empty()) group.push_back(ReturnStmt::make(group_ret, f->span));
  FunctionPtr group_fn = Function::make(f->name, f->params, f->directions, f->return_types, SeqStmts::make(group, rspan),
                                        FunctionType::Group, f->span, f->level, f->role, f->attrs);
  return {aic_fn, aiv_fn, group_fn};
}

}  // namespace

ProgramPtr split_aiv(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    auto parts = split_function(f, program);
    changed |= parts.size() != 1 || parts[0] != f;
    functions.insert(functions.end(), parts.begin(), parts.end());
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes

// InferMemory: places tiles in the memories their consumers read and inserts the moves
// between them, so a kernel may be written without pl.move: `pl.matmul(a, b)` on tiles
// loaded with the default target, or a vector op on a matmul result.
//
// What each operand needs is its parameter's record (ParamSpec::memory): the cube reads
// 'lhs' from Left, 'rhs' from Right and 'bias' from Bias; pl.transpose_view reads Mat; every
// op whose instruction runs on the vector pipe reads Vec. A default (Vec) load whose every use needs Left, Right, Bias or
// Mat is loaded into Mat instead. Any other operand in the wrong memory gets the chain of
// pl.tile.move calls that reaches the needed one over the chip's legal moves (move_path);
// type inference already rejected operands that no chain reaches.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;
using namespace ops;

// The memory argument `k` (in Call::args order) of call `c` must be in, if any: its
// parameter's record (ParamSpec::memory, stated by the op's family file).
std::optional<MemorySpace> needed_memory(const Call& c, size_t k) {
  size_t i = 0;
  for (auto& p : c.op->params) {
    if (p.kind == ParamKind::kAttr) continue;
    if (i++ == k) return p.memory;
  }
  return std::nullopt;
}

bool is_default_load(const ExprPtr& e) {
  auto* c = e ? e->as<Call>() : nullptr;
  if (!c || c->op->name != "tile.load") return false;
  auto it = c->attrs.find("target_memory");
  return it != c->attrs.end() && std::get<MemorySpace>(it->second) == MemorySpace::Vec;
}

// For every Vec-loaded tile: whether all its uses need a cube-side memory.
class LoadUses : public IRVisitor {
 public:
  std::unordered_map<const Var*, bool> cube_only;  // loaded Var -> every use needs Mat/Left/Right/Bias

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (is_default_load(s.value)) cube_only.emplace(s.var.get(), true);
    IRVisitor::visit_assign(s);
  }
  // A tile passed straight to an op is judged by what that operand needs; other arguments
  // (nested calls, lists) are walked as usual.
  void visit_call(const Call& c) override {
    for (size_t k = 0; k < c.args.size(); ++k) {
      if (!c.args[k]) continue;
      auto* v = c.args[k]->as<Var>();
      if (!v) {
        visit(c.args[k]);
        continue;
      }
      auto it = cube_only.find(v);
      if (it == cube_only.end()) continue;
      auto need = needed_memory(c, k);
      bool cube = need && (*need == MemorySpace::Mat || *need == MemorySpace::Left || *need == MemorySpace::Right ||
                           *need == MemorySpace::Bias);
      if (!cube) it->second = false;
    }
  }
  // Any other use (yield, return, plain copy, a list element) keeps the tile where it is.
  void visit_var(const VarPtr& v) override {
    auto it = cube_only.find(v.get());
    if (it != cube_only.end()) it->second = false;
  }
};

class MemoryInference : public IRMutator {
 public:
  explicit MemoryInference(std::unordered_set<const Var*> to_mat) : to_mat_(std::move(to_mat)) {}

 protected:
  ExprPtr mutate_call(const std::shared_ptr<const Call>& c0) override {
    bool changed = false;
    auto args = mutate_all(c0->args, &changed);
    for (size_t k = 0; k < args.size(); ++k) {
      if (!args[k]) continue;
      auto* t = args[k]->type->as<TileType>();
      auto need = needed_memory(*c0, k);
      if (!t || !need || t->memory == *need) continue;
      auto path = move_path(t->memory, *need);
      if (!path) continue;  // inference already rejected it
      for (MemorySpace m : *path) args[k] = make_op_call("tile.move", {args[k]}, {}, {{"target_memory", m}}, c0->span);
      changed = true;
    }
    if (!changed) return c0;
    return retype(*c0, std::move(args), c0->attrs);
  }

  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    ExprPtr value = mutate(s->value);
    if (to_mat_.count(s->var.get())) {
      auto* c = value->as<Call>();
      Attrs attrs = c->attrs;
      attrs["target_memory"] = MemorySpace::Mat;
      value = retype(*c, c->args, attrs);
    }
    VarPtr var = define(s->var);
    if (!same_type(value->type, var->type)) {
      VarPtr retyped = Var::make(s->var->name, value->type, s->var->span);
      replaced_[s->var.get()] = retyped;
      var = retyped;
    }
    if (value == s->value && var == s->var) return s;
    return AssignStmt::make(var, value, s->span);
  }

 private:
  // The call with new arguments or attributes, its type inferred again.
  static ExprPtr retype(const Call& c, std::vector<ExprPtr> args, const Attrs& attrs) {
    return Call::make(c.op, std::move(args), attrs, c.span);
  }
  static bool same_type(const TypePtr& a, const TypePtr& b) {
    auto* x = a->as<TileType>();
    auto* y = b->as<TileType>();
    if (!x || !y) return true;  // only tile memories change here
    return x->memory == y->memory;
  }

  std::unordered_set<const Var*> to_mat_;
};

}  // namespace

ProgramPtr infer_memory(const ProgramPtr& program, const PassContext&) {
  return map_kernels(program, [](const FunctionPtr& f) {
    LoadUses uses;
    uses.visit_function(*f);
    std::unordered_set<const Var*> to_mat;
    for (auto& [v, cube] : uses.cube_only)
      if (cube) to_mat.insert(v);
    return MemoryInference(std::move(to_mat)).mutate_function(f);
  });
}

}  // namespace pypto::passes

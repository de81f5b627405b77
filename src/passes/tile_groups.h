// Tile storage groups, shared by PlanMemory and PipelineLoops (internal to src/passes).
// Tiles that must share storage (loop-carried values, branch results, views, plain copies)
// form one group and get one address.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/visitor.h"

namespace pypto::passes {
using namespace ir;

// Bytes of one tile (its full shape, not its valid shape).
inline int64_t tile_bytes(const TileType& t, const Span& span, const std::string& name) {
  auto dims = static_shape(t.shape);
  if (!dims)
    fail(ErrorKind::kType, span, "tile '" + name + "' has a shape that is not known at compile time",
         "give tiles constant shapes and use valid_shape=[...] for run-time extents");
  int64_t n = dtype_bytes(t.dtype);
  for (int64_t d : *dims) n *= d;
  return n;
}

// Union-find over tile Vars.
class TileGroups {
 public:
  void add(const VarPtr& v) {
    if (index_.count(v.get())) return;
    index_[v.get()] = static_cast<int>(vars_.size());
    vars_.push_back(v);
    parent_.push_back(static_cast<int>(parent_.size()));
  }
  void unite(const VarPtr& a, const VarPtr& b) {
    add(a);
    add(b);
    parent_[find(index_[a.get()])] = find(index_[b.get()]);
  }
  int group_of(const Var* v) { return find(index_.at(v)); }
  const std::vector<VarPtr>& vars() const { return vars_; }

 private:
  int find(int i) { return parent_[i] == i ? i : parent_[i] = find(parent_[i]); }
  std::unordered_map<const Var*, int> index_;
  std::vector<VarPtr> vars_;
  std::vector<int> parent_;
};

inline bool is_tile(const ExprPtr& e) { return e && e->type->as<TileType>(); }

inline const YieldStmt* trailing_yield(const StmtPtr& body) {
  if (!body) return nullptr;
  if (auto* y = body->as<YieldStmt>()) return y;
  if (auto* seq = body->as<SeqStmts>(); seq && !seq->stmts.empty()) return trailing_yield(seq->stmts.back());
  return nullptr;
}

class GroupCollector : public IRVisitor {
 public:
  TileGroups groups;

 protected:
  // A loop-carried tile, its initial value, the value yielded for it and the loop's result
  // are one storage.
  void unite_carried(const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& init_values,
                     const std::vector<VarPtr>& return_vars, const StmtPtr& body) {
    const YieldStmt* y = trailing_yield(body);
    for (size_t i = 0; i < iter_args.size(); ++i) {
      if (!is_tile(iter_args[i])) continue;
      groups.unite(iter_args[i], return_vars[i]);
      if (init_values[i]->as<Var>()) groups.unite(iter_args[i], std::static_pointer_cast<const Var>(init_values[i]));
      if (y && i < y->values.size() && y->values[i]->as<Var>())
        groups.unite(iter_args[i], std::static_pointer_cast<const Var>(y->values[i]));
    }
  }
  void visit_def(const VarPtr& v) override {
    if (v->type->as<TileType>()) groups.add(v);
  }
  void visit_assign(const AssignStmt& s) override {
    IRVisitor::visit_assign(s);
    if (auto* c = s.value->as<Call>(); c && c->op->view && !c->args.empty() && c->args[0]->as<Var>() && is_tile(s.var))
      groups.unite(s.var, std::static_pointer_cast<const Var>(c->args[0]));
    if (auto* v = s.value->as<Var>(); v && is_tile(s.var)) groups.unite(s.var, std::static_pointer_cast<const Var>(s.value));
  }
  void visit_for(const ForStmt& s) override {
    IRVisitor::visit_for(s);
    unite_carried(s.iter_args, s.init_values, s.return_vars, s.body);
  }
  void visit_while(const WhileStmt& s) override {
    IRVisitor::visit_while(s);
    unite_carried(s.iter_args, s.init_values, s.return_vars, s.body);
  }
  void visit_if(const IfStmt& s) override {
    IRVisitor::visit_if(s);
    for (const StmtPtr& arm : {s.then_body, s.else_body}) {
      const YieldStmt* y = trailing_yield(arm);
      for (size_t i = 0; y && i < s.return_vars.size() && i < y->values.size(); ++i)
        if (is_tile(s.return_vars[i]) && y->values[i]->as<Var>())
          groups.unite(s.return_vars[i], std::static_pointer_cast<const Var>(y->values[i]));
    }
  }
};

// The name of an on-chip buffer in user-facing messages.
inline std::string buffer_name(MemorySpace m) {
  switch (m) {
    case MemorySpace::Vec: return "Vec (UB)";
    case MemorySpace::Mat: return "Mat (L1)";
    case MemorySpace::Left: return "Left (L0A)";
    case MemorySpace::Right: return "Right (L0B)";
    case MemorySpace::Acc: return "Acc (L0C)";
    case MemorySpace::Bias: return "Bias table";
    default: return memory_space_name(m);
  }
}

}  // namespace pypto::passes

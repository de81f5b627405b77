// Tile storage groups, shared by PlanMemory and PipelineLoops (internal to src/passes).
// Tiles that must share storage (loop-carried values, branch results, views, plain copies)
// form one group and get one address.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/isa/instructions.h"

namespace pypto::passes {
using namespace ir;

// Bytes of one tile (its full shape, not its valid shape; Vec rows padded to 32 bytes:
// isa::allocated_tile_bytes).
inline int64_t tile_bytes(const TileType& t, const Span& span, const std::string& name) {
  auto dims = static_shape(t.shape);
  if (!dims)
    fail(ErrorKind::kType, span, "tile '" + name + "' has a shape that is not known at compile time",
         "give tiles constant shapes and use valid_shape=[...] for run-time extents");
  if (dims->size() == 2) return isa::allocated_tile_bytes((*dims)[0], (*dims)[1], t.dtype, t.memory);
  int64_t n = dtype_bytes(t.dtype);
  for (int64_t d : *dims) n *= d;
  return n;
}

// A tuple of tiles: the value of a multi-result op (sort32 and mrgsort give values and
// indices). It is placed as one block: its tiles lie back to back, each at an aligned offset.
inline const TupleType* tile_tuple(const TypePtr& t) {
  auto* tt = t ? t->as<TupleType>() : nullptr;
  if (!tt || tt->elems.empty()) return nullptr;
  for (auto& e : tt->elems)
    if (!e->as<TileType>()) return nullptr;
  return tt;
}
// Values that memory planning places: tiles and tuples of tiles.
inline bool is_placed(const TypePtr& t) { return t && (t->as<TileType>() || tile_tuple(t)); }
// The (first) tile of a placed value: its memory and address are the block's.
inline const TileType& first_tile(const TypePtr& t) {
  if (auto* tt = tile_tuple(t)) return *tt->elems[0]->as<TileType>();
  return *t->as<TileType>();
}
inline int64_t round_up(int64_t n, int64_t align) { return (n + align - 1) / align * align; }
// Bytes of a placed value; a tuple's tiles each start `align`-aligned.
inline int64_t placed_bytes(const TypePtr& t, int64_t align, const Span& span, const std::string& name) {
  if (auto* tt = tile_tuple(t)) {
    int64_t n = 0;
    for (auto& e : tt->elems) n += round_up(tile_bytes(*e->as<TileType>(), span, name), align);
    return n;
  }
  return tile_bytes(*t->as<TileType>(), span, name);
}
// The placed value's type at address `addr` (a tuple's tiles at their offsets from it).
inline TypePtr placed_at(const TypePtr& t, int64_t addr, int64_t align) {
  auto at = [](const TileType& x, int64_t a) {
    return TileType::make(x.shape, x.dtype, x.memory, x.valid_shape, x.pad, a);
  };
  if (auto* tt = tile_tuple(t)) {
    std::vector<TypePtr> elems;
    int64_t offset = addr;
    for (auto& e : tt->elems) {
      const TileType& x = *e->as<TileType>();
      elems.push_back(at(x, offset));
      offset += round_up(tile_bytes(x, {}, ""), align);
    }
    return TupleType::make(elems);
  }
  return at(*t->as<TileType>(), addr);
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

// The Var whose storage a tile expression names: the Var itself, or for a tile of a
// multi-result op's tuple (`tup[1]`) the tuple's Var; null otherwise.
inline VarPtr storage_of(const ExprPtr& e) {
  if (!e) return nullptr;
  if (e->as<Var>()) return std::static_pointer_cast<const Var>(e);
  if (auto* g = e->as<TupleGetItem>(); g && g->tuple->as<Var>() && tile_tuple(g->tuple->type))
    return std::static_pointer_cast<const Var>(g->tuple);
  return nullptr;
}

inline const YieldStmt* trailing_yield(const StmtPtr& body) {
  if (!body) return nullptr;
  if (auto* y = body->as<YieldStmt>()) return y;
  if (auto* seq = body->as<SeqStmts>(); seq && !seq->stmts.empty()) return trailing_yield(seq->stmts.back());
  return nullptr;
}

class GroupCollector : public IRVisitor {
 public:
  TileGroups groups;
  // Byte offset of a member from the address of the storage it names: a tile of a tuple
  // (`idx = vals_idx[1]`) and its views lie inside the tuple's block; everything else is 0.
  std::unordered_map<const Var*, int64_t> offset;
  int64_t align = 32;  // the chip's tile alignment (PlanMemory sets it)

  int64_t offset_of(const ExprPtr& e) const {
    auto base = [&](const Var* v) {
      auto it = offset.find(v);
      return it == offset.end() ? int64_t{0} : it->second;
    };
    if (auto* v = e->as<Var>()) return base(v);
    auto* g = e->as<TupleGetItem>();
    auto* tt = g ? tile_tuple(g->tuple->type) : nullptr;
    if (!tt) return 0;
    TypePtr placed = placed_at(g->tuple->type, 0, align);
    return base(g->tuple->as<Var>()) + placed->as<TupleType>()->elems[g->index]->as<TileType>()->addr;
  }

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
    if (is_placed(v->type)) groups.add(v);
  }
  void visit_assign(const AssignStmt& s) override {
    IRVisitor::visit_assign(s);
    auto share = [&](const ExprPtr& source) {
      VarPtr base = storage_of(source);
      if (!base || !is_tile(s.var)) return;
      groups.unite(s.var, base);
      if (int64_t off = offset_of(source)) offset[s.var.get()] = off;
    };
    if (auto* c = s.value->as<Call>(); c && c->op->view && !c->args.empty()) share(c->args[0]);
    share(s.value);
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

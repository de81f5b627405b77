// What a statement does beyond computing its values, and where a value lives: the facts the
// passes that move or merge statements (LowerTensorOps' hoisting, CommonSubexpressions) ask.
#pragma once
#include "pypto/ir/op_def.h"
#include "pypto/ir/visitor.h"

namespace pypto::passes {

// Anything in `s` that writes memory (a store, an assemble into a tensor), has an effect
// beyond its result (cross-core FIFOs), or calls a function.
inline bool writes_memory(const ir::StmtPtr& s) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit_call(const ir::Call& c) override {
      found |= !c.op->writes.empty() || c.op->effects;
      IRVisitor::visit_call(c);
    }
    void visit_func_call(const ir::FuncCall& c) override {
      found = true;
      IRVisitor::visit_func_call(c);
    }
  } f;
  f.visit(s);
  return f.found;
}

// A tile in Mat, Left, Right, Acc or Bias: buffers that hold a kernel's double buffers, with
// no room for a tile kept alive longer than its loop or its statement list needs it.
inline bool on_cube_side(const ir::VarPtr& v) {
  auto* t = v->type ? v->type->as<ir::TileType>() : nullptr;
  return t && t->memory != MemorySpace::Vec;
}

}  // namespace pypto::passes

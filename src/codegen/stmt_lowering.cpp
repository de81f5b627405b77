// Statement lowering shared by kernels and host programs. Loop-carried values and the
// values an `if` yields live in one place per carried variable (a tile slot, a register or
// a tensor slot); a copy is emitted only where planning put two tiles at different addresses.
#include "stmt_lowering.h"

namespace pypto::codegen {

using isa::Instr;
using isa::InstrKind;
using isa::Operand;

static const Span& pick(const Span& a, const Span& b) { return a.line ? a : b; }

void StmtLowering::lower(const ir::StmtPtr& stmt) {
  if (!stmt) return;
  kb_.set_span(stmt->span);
  switch (stmt->kind) {  // one method per statement node, from the node list (ir/nodes.def)
#define PYPTO_LOWER_STMT(Kind, Class, hook) \
  case ir::StmtKind::Kind: lower_##hook(*static_cast<const ir::Class*>(stmt.get())); break;
    PYPTO_STMT_NODES(PYPTO_LOWER_STMT)
#undef PYPTO_LOWER_STMT
  }
}

void StmtLowering::lower_return(const ir::ReturnStmt& s) {
  for (auto& v : s.values) returned_.push_back(v);
}

void StmtLowering::lower_seq(const ir::SeqStmts& s) {
  for (auto& x : s.stmts) lower(x);
}

void StmtLowering::lower_scope(const ir::ScopeStmt& s) { lower(s.body); }

void StmtLowering::lower_assign(const ir::AssignStmt& s) {
  const ir::ExprPtr& value = s.value;
  const ir::Var* var = s.var.get();
  switch (value->kind) {
    case ir::ExprKind::Call: kb_.lower_call(*value->as<ir::Call>(), s.var); return;
    case ir::ExprKind::FuncCall:
      if (!kb_.on_func_call)
        fail(ErrorKind::kType, pick(value->span, s.span),
             "a kernel cannot call function '" + value->as<ir::FuncCall>()->callee + "'",
             "mark the callee @pl.jit.inline so that it is spliced into the kernel");
      kb_.on_func_call(*value->as<ir::FuncCall>(), s.var);
      return;
    default: break;
  }
  // A plain value: the variable names the same tile, tensor or scalar.
  if (value->type->as<ir::TileType>()) {
    kb_.bind_tile(var, kb_.tile(value));
  } else if (value->type->as<ir::TensorType>()) {
    kb_.bind_tensor(var, kb_.tensor(value));
  } else if (value->type->as<ir::ScalarType>()) {
    kb_.bind_scalar(var, kb_.scalar(value));
  } else if (value->type->as<ir::ArrayType>()) {
    kb_.bind_array(var, kb_.array(value));
  } else {
    fail(ErrorKind::kType, pick(value->span, s.span), "cannot assign a value of this kind to '" + s.var->name + "' here");
  }
}

void StmtLowering::lower_eval(const ir::EvalStmt& s) {
  if (auto* c = s.expr->as<ir::Call>()) {
    kb_.lower_call(*c, nullptr);
  } else if (auto* f = s.expr->as<ir::FuncCall>()) {
    if (!kb_.on_func_call)
      fail(ErrorKind::kType, pick(f->span, s.span), "a kernel cannot call function '" + f->callee + "'",
           "mark the callee @pl.jit.inline so that it is spliced into the kernel");
    kb_.on_func_call(*f, nullptr);
  }
  // A bare variable or constant has no effect.
}

void StmtLowering::copy_tile(int dst, int src) {
  const auto& d = kb_.tile_desc(dst);
  const auto& s = kb_.tile_desc(src);
  if (d.addr == s.addr && d.memory == s.memory) return;
  Instr in;
  in.mnemonic = "TMOV";
  in.outs = {Operand::tile(dst)};
  in.ins = {Operand::tile(src)};
  kb_.emit(in);
}

// The home of a carried variable, initialised from `init` (null for an if's results).
StmtLowering::Carried StmtLowering::carry(const ir::VarPtr& var, const ir::ExprPtr& init) {
  Carried c;
  c.var = var.get();
  if (var->type->as<ir::TileType>()) {
    c.kind = Carried::kTile;
    c.index = kb_.define_tile(var);
    if (init) copy_tile(c.index, kb_.tile(init));
  } else if (var->type->as<ir::TensorType>()) {
    c.kind = Carried::kTensor;
    if (init) {
      c.index = kb_.tensor(init);
      kb_.bind_tensor(var.get(), c.index);
    }
  } else if (var->type->as<ir::ArrayType>()) {  // one array, updated in place
    c.kind = Carried::kArray;
    if (init) {
      c.index = kb_.array(init);
      kb_.bind_array(var.get(), c.index);
    }
  } else if (var->type->as<ir::ScalarType>()) {
    c.kind = Carried::kScalar;
    c.index = kb_.define_scalar(var);
    if (init) {
      Instr mov;
      mov.kind = InstrKind::kScalarMov;
      mov.dst_reg = c.index;
      mov.a = kb_.scalar(init);
      kb_.emit(mov);
    }
  } else {
    fail(ErrorKind::kType, var->span, "'" + var->name + "' cannot be carried through a loop or branch",
         "carry tiles, tensors or scalars");
  }
  return c;
}

void StmtLowering::copy_into(Carried& target, const ir::ExprPtr& value) {
  switch (target.kind) {
    case Carried::kTile: copy_tile(target.index, kb_.tile(value)); break;
    case Carried::kScalar: {
      Instr mov;
      mov.kind = InstrKind::kScalarMov;
      mov.dst_reg = target.index;
      mov.a = kb_.scalar(value);
      kb_.emit(mov);
      break;
    }
    case Carried::kTensor:
    case Carried::kArray: {  // one buffer (a tensor slot or an array) updated in place
      const bool array = target.kind == Carried::kArray;
      const int slot = array ? kb_.array(value) : kb_.tensor(value);
      if (target.index < 0) {
        target.index = slot;
        if (array) kb_.bind_array(target.var, slot);
        else kb_.bind_tensor(target.var, slot);
      } else if (slot != target.index) {
        fail(ErrorKind::kValue, pick(value->span, kb_.span()),
             array ? "a loop or branch must carry the same pl.array it started with"
                   : "a loop or branch must carry the same tensor buffer it started with",
             array ? "write into the carried array (arr[i] = v) instead of switching to another array"
                   : "write into the carried tensor (out = pl.store(t, offsets, out)) instead of switching to another tensor");
      }
      break;
    }
  }
}

void StmtLowering::lower_yield(const ir::YieldStmt& s) {
  PYPTO_CHECK(!yield_targets_.empty(), "pl.yield_ outside a loop or branch");
  auto& targets = *yield_targets_.back();
  if (s.values.size() != targets.size())
    fail(ErrorKind::kType, s.span,
         "pl.yield_ gives " + std::to_string(s.values.size()) + " values but " + std::to_string(targets.size()) +
             " are carried",
         "yield one value per loop-carried variable (or per value the if defines)");
  for (size_t i = 0; i < targets.size(); ++i) copy_into(targets[i], s.values[i]);
}

void StmtLowering::lower_for(const ir::ForStmt& s) {
  Instr begin;
  begin.kind = InstrKind::kLoopBegin;
  begin.a = kb_.scalar(s.start);
  begin.b = kb_.scalar(s.stop);
  begin.step = kb_.scalar(s.step);
  if (begin.step.kind == isa::Scalar::kImm && !begin.step.is_float && begin.step.i <= 0)
    fail(ErrorKind::kValue, s.span, "loop step must be positive, got " + std::to_string(begin.step.i),
         "count upwards: pl.range(start, stop, step) with step > 0");
  std::vector<Carried> carried;
  for (size_t i = 0; i < s.iter_args.size(); ++i) carried.push_back(carry(s.iter_args[i], s.init_values[i]));
  begin.dst_reg = kb_.define_scalar(s.loop_var);
  kb_.set_span(s.span);
  int begin_pc = kb_.emit(begin);

  yield_targets_.push_back(&carried);
  lower(s.body);
  yield_targets_.pop_back();

  Instr end = begin;
  end.kind = InstrKind::kLoopEnd;
  end.jump = begin_pc + 1;
  end.span = s.span;
  int end_pc = kb_.emit(end);
  kb_.at(begin_pc).jump = end_pc + 1;

  kb_.set_span(s.span);
  bind_results(s.return_vars, carried);
}

void StmtLowering::bind_results(const std::vector<ir::VarPtr>& return_vars, std::vector<Carried>& carried) {
  for (size_t i = 0; i < return_vars.size(); ++i) {
    const ir::VarPtr& rv = return_vars[i];
    Carried& c = carried[i];
    switch (c.kind) {
      case Carried::kTile: copy_tile(kb_.define_tile(rv), c.index); break;
      case Carried::kScalar: kb_.bind_scalar(rv.get(), isa::Scalar::r(c.index)); break;
      case Carried::kTensor: kb_.bind_tensor(rv.get(), c.index); break;
      case Carried::kArray: kb_.bind_array(rv.get(), c.index); break;
    }
  }
}

// kWhileBegin, the condition's scalar code, kWhileCond, the body (ending with the copies of
// the yield into the carried homes), kWhileEnd jumping back to kWhileBegin.
void StmtLowering::lower_while(const ir::WhileStmt& s) {
  std::vector<Carried> carried;
  for (size_t i = 0; i < s.iter_args.size(); ++i) carried.push_back(carry(s.iter_args[i], s.init_values[i]));
  kb_.set_span(s.span);
  Instr begin;
  begin.kind = InstrKind::kWhileBegin;
  int begin_pc = kb_.emit(begin);
  Instr cond;
  cond.kind = InstrKind::kWhileCond;
  cond.a = kb_.scalar(s.cond);
  kb_.set_span(s.span);
  int cond_pc = kb_.emit(cond);

  yield_targets_.push_back(&carried);
  lower(s.body);
  yield_targets_.pop_back();

  Instr end;
  end.kind = InstrKind::kWhileEnd;
  end.jump = begin_pc;
  end.span = s.span;
  int end_pc = kb_.emit(end);
  kb_.at(begin_pc).jump = end_pc + 1;
  kb_.at(cond_pc).jump = end_pc + 1;

  kb_.set_span(s.span);
  bind_results(s.return_vars, carried);
}

void StmtLowering::lower_if(const ir::IfStmt& s) {
  std::vector<Carried> joined;
  for (auto& rv : s.return_vars) joined.push_back(carry(rv, nullptr));
  Instr cond;
  cond.kind = InstrKind::kIf;
  cond.a = kb_.scalar(s.cond);
  kb_.set_span(s.span);
  int if_pc = kb_.emit(cond);

  yield_targets_.push_back(&joined);
  lower(s.then_body);
  if (s.else_body) {
    Instr els;
    els.kind = InstrKind::kElse;
    els.span = s.span;
    int else_pc = kb_.emit(els);
    kb_.at(if_pc).jump = else_pc + 1;
    lower(s.else_body);
    Instr endif;
    endif.kind = InstrKind::kEndIf;
    endif.span = s.span;
    int end_pc = kb_.emit(endif);
    kb_.at(else_pc).jump = end_pc;
  } else {
    Instr endif;
    endif.kind = InstrKind::kEndIf;
    endif.span = s.span;
    int end_pc = kb_.emit(endif);
    kb_.at(if_pc).jump = end_pc;
  }
  yield_targets_.pop_back();
}

}  // namespace pypto::codegen
